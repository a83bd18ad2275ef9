import parseDuration from 'parse-duration';

/** Parses "90s", "10m", "1h30m" or a number of milliseconds; undefined for anything else. */
export function toMilliseconds(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const ms = parseDuration(trimmed);
  return ms === null || ms === undefined || !Number.isFinite(ms) ? undefined : ms;
}
