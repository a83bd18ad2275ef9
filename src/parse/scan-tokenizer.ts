/**
 * htmlparser2's tokenizer with one loop replaced: its skip ahead to the next character that
 * can end a run of text, a comment or a CDATA section. The original reads the page a
 * character at a time in JavaScript; `String#indexOf` does the same search natively. On the
 * bench's 8 KB pages that halved the link scan (about 35 to 17 µs a page), and the skip was
 * the scan's largest single cost in the crawl's profile (bench/PROFILE.md).
 *
 * The replacement keeps the loop's contract exactly: it starts one past the current index,
 * leaves the index on the character found and returns true, or leaves it on the buffer's
 * last character and returns false. It reads three of the tokenizer's own fields, which
 * htmlparser2 declares private: the check below fails at load time, loudly, if a release of
 * htmlparser2 renames them, rather than letting a page parse wrong.
 */
import { Tokenizer } from 'htmlparser2';

/** The tokenizer's state the skip reads and moves: the current chunk, its offset in the input, the position. */
interface SkipState {
  buffer: string;
  offset: number;
  index: number;
}

function fastForwardTo(this: SkipState, charCode: number): boolean {
  const found = this.buffer.indexOf(String.fromCharCode(charCode), this.index + 1 - this.offset);
  if (found !== -1) {
    this.index = found + this.offset;
    return true;
  }
  // Where the loop stops: `parse` moves the index past its last character next.
  this.index = this.buffer.length + this.offset - 1;
  return false;
}

export class ScanTokenizer extends Tokenizer {}

const probe = new Tokenizer({}, {} as ConstructorParameters<typeof Tokenizer>[1]) as unknown as Partial<SkipState> & { fastForwardTo?: unknown };
if (typeof probe.fastForwardTo !== 'function' || typeof probe.buffer !== 'string' || typeof probe.offset !== 'number' || typeof probe.index !== 'number') {
  throw new Error("htmlparser2's Tokenizer no longer has fastForwardTo, buffer, offset and index: src/parse/scan-tokenizer.ts needs updating");
}
Object.defineProperty(ScanTokenizer.prototype, 'fastForwardTo', { value: fastForwardTo, writable: true, configurable: true });
