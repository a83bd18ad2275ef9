/**
 * The bench's helpers: its rounds (bench/rounds.ts): which round is reported as the median, and what
 * `--rounds` accepts; the bench commands' flags (bench/bench-args.ts); the CPU a crawl window
 * is charged (bench/process-meter.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeRounds, median, medianBy, parseRounds, roundOrder } from '../bench/rounds';
import { BenchUsageError, parseFlags, wholeNumber } from '../bench/bench-args';
import { cpuSecondsAt } from '../bench/process-meter';

describe('bench rounds: the median round and the --rounds option', () => {
  it('reports the middle round of an odd count, the lower middle one of an even count', () => {
    const rounds = [{ round: 1, ratio: 0.84 }, { round: 2, ratio: 0.68 }, { round: 3, ratio: 0.85 }];
    assert.equal(medianBy(rounds, (r) => r.ratio).round, 1);
    assert.equal(medianBy([...rounds, { round: 4, ratio: 0.8 }], (r) => r.ratio).round, 4);
    assert.equal(median([3]), 3);
    assert.deepEqual(rounds.map((r) => r.round), [1, 2, 3], 'the rounds keep their order');
    assert.equal(describeRounds([0.84, 0.68, 0.85]), '0.84, 0.68, 0.85 (median 0.84)');
  });

  it('runs the tools in the given order in odd rounds and reversed in even ones, so no tool always runs late', () => {
    const tools = ['raw', 'crawlflow', 'scrapy', 'colly'];
    assert.deepEqual([1, 2, 3, 4].map((round) => roundOrder(tools, round).join(' ')), [
      'raw crawlflow scrapy colly',
      'colly scrapy crawlflow raw',
      'raw crawlflow scrapy colly',
      'colly scrapy crawlflow raw',
    ]);
    assert.deepEqual(tools, ['raw', 'crawlflow', 'scrapy', 'colly'], 'the list given is left as it was');
  });

  it('takes a positive whole number of rounds and names anything else', () => {
    assert.equal(parseRounds('5'), 5);
    for (const bad of ['0', '-1', '2.5', 'three', '']) {
      assert.throws(() => parseRounds(bad), { message: `--rounds: expected a positive whole number, got "${bad}"` });
    }
    assert.throws(() => medianBy([], () => 0), /no items/);
  });
});

describe('bench flags: bad input is a usage error that names the flag', () => {
  it('checks whole numbers against their least value', () => {
    assert.equal(wholeNumber('--pages', '20000'), 20_000);
    assert.equal(wholeNumber('--broad-hosts', '0', 0), 0);
    assert.throws(() => wholeNumber('--pages', 'abc'), { name: 'Error', code: 'bench-usage', message: '--pages: expected a positive whole number, got "abc"' });
    assert.throws(() => wholeNumber('--hosts', '-1', 0), { message: '--hosts: expected a whole number of at least 0, got "-1"' });
  });

  it('turns an unknown flag or a missing value into a usage error', () => {
    const options = { pages: { type: 'string' as const, default: '10' } };
    assert.equal(parseFlags({ options, args: ['--pages', '7'] }).values.pages, '7');
    assert.throws(() => parseFlags({ options, args: ['--bogus'] }), (err: unknown) => err instanceof BenchUsageError && /Unknown option '--bogus'/.test(err.message));
    assert.throws(() => parseFlags({ options, args: ['--pages'] }), (err: unknown) => err instanceof BenchUsageError && /--pages/.test(err.message));
  });
});

describe('bench CPU in a crawl window: the tree CPU between two instants', () => {
  const steps = [
    { at: 1_000, seconds: 0.5 },
    { at: 1_250, seconds: 1.0 },
    { at: 1_500, seconds: 1.1 },
  ];

  it('interpolates between the samples around an instant', () => {
    assert.equal(cpuSecondsAt(steps, 1_250), 1.0);
    assert.equal(cpuSecondsAt(steps, 1_125), 0.75);
    assert.ok(Math.abs(cpuSecondsAt(steps, 1_375) - 1.05) < 1e-12);
    assert.ok(Math.abs(cpuSecondsAt(steps, 1_375) - cpuSecondsAt(steps, 1_125) - 0.3) < 1e-12, 'a window is the difference of its two ends');
  });

  it('clamps before the first sample and after the last, and counts nothing without samples', () => {
    assert.equal(cpuSecondsAt(steps, 0), 0.5);
    assert.equal(cpuSecondsAt(steps, 9_999), 1.1);
    assert.equal(cpuSecondsAt([], 1_000), 0);
  });
});
