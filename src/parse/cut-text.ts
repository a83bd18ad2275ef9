/**
 * Cutting page text to a bound without breaking a character: a string is cut by UTF-16 code
 * units, and a cut between the two halves of a surrogate pair (an emoji, a rare CJK character)
 * leaves a lone half, which is no Unicode at all. JSON Lines would carry it as an escape that
 * strict readers refuse, and CSV, written as UTF-8, as U+FFFD in its place.
 */

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** `text` cut to at most `max` code units, one less when the last would be the first half of a pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, max > 0 && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max);
}
