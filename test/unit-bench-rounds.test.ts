/**
 * The bench's rounds (bench/rounds.ts): which round is reported as the median, and what
 * `--rounds` accepts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeRounds, median, medianBy, parseRounds } from '../bench/rounds';

describe('bench rounds: the median round and the --rounds option', () => {
  it('reports the middle round of an odd count, the lower middle one of an even count', () => {
    const rounds = [{ round: 1, ratio: 0.84 }, { round: 2, ratio: 0.68 }, { round: 3, ratio: 0.85 }];
    assert.equal(medianBy(rounds, (r) => r.ratio).round, 1);
    assert.equal(medianBy([...rounds, { round: 4, ratio: 0.8 }], (r) => r.ratio).round, 4);
    assert.equal(median([3]), 3);
    assert.deepEqual(rounds.map((r) => r.round), [1, 2, 3], 'the rounds keep their order');
    assert.equal(describeRounds([0.84, 0.68, 0.85]), '0.84, 0.68, 0.85 (median 0.84)');
  });

  it('takes a positive whole number of rounds and names anything else', () => {
    assert.equal(parseRounds('5'), 5);
    for (const bad of ['0', '-1', '2.5', 'three', '']) {
      assert.throws(() => parseRounds(bad), { message: `--rounds: expected a positive whole number, got "${bad}"` });
    }
    assert.throws(() => medianBy([], () => 0), /no items/);
  });
});
