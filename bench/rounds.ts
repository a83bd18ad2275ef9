/**
 * Rounds of a side-by-side comparison. On a shared 2-core machine one crawl's rate swings by
 * ±20% from run to run, and a ratio of two crawls run one after the other swings with it; the
 * median of several alternating rounds is the figure that holds from one invocation to the next.
 */
import { wholeNumber } from './bench-args';

/** The item whose `value` is the median of all; of an even count, the lower of the middle two. */
export function medianBy<T>(items: readonly T[], value: (item: T) => number): T {
  if (items.length === 0) throw new Error('medianBy: no items');
  const sorted = [...items].sort((a, b) => value(a) - value(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export const median = (values: readonly number[]): number => medianBy(values, (value) => value);

/**
 * The order in which round `round` (from 1) runs `tools`: as given in odd rounds, reversed in
 * even ones. A machine that speeds up or slows down over a run (another tenant, the page cache
 * warming, the CPU's clock) then favours no tool by its place: each runs early as often as late,
 * and two tools' ratio is not the drift between their two places in the order.
 */
export function roundOrder<T>(tools: readonly T[], round: number): T[] {
  return round % 2 === 1 ? [...tools] : [...tools].reverse();
}

/** `--rounds`: a positive whole number. */
export const parseRounds = (text: string): number => wholeNumber('--rounds', text);

/** `0.84, 0.68, 0.85 (median 0.84)`: each round's figure, then the one reported. */
export function describeRounds(values: readonly number[]): string {
  return `${values.map((value) => value.toFixed(2)).join(', ')} (median ${median(values).toFixed(2)})`;
}
