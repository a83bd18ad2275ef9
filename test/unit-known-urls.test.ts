/**
 * The stores' cache of URLs known to be seen (src/store/known-urls.ts), with no store: which
 * entries it leaves to be written, and its bound of two generations, the old one dropped whole
 * when the young one fills, a URL found in the old one moving to the young one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KnownUrls } from '../src/store/known-urls';

const entries = (...urls: string[]) => urls.map((url) => ({ url, depth: 1 }));
/** Which of `urls` the cache knows, asked in order (each question may move a URL to the young generation). */
const knownOf = (known: KnownUrls, ...urls: string[]) => urls.filter((url) => known.has(url));

describe('known URLs: what a store leaves out of its writes', () => {
  it('knows nothing at first, and every URL it was told once told', () => {
    const known = new KnownUrls();
    assert.deepEqual(knownOf(known, 'a', 'b'), []);
    known.add(entries('a', 'b'));
    assert.deepEqual(knownOf(known, 'a', 'b', 'c'), ['a', 'b']);
  });

  it('unknown keeps the entries not known, in their order, duplicates and all', () => {
    const known = new KnownUrls();
    known.add(entries('b', 'd'));
    const offered = entries('a', 'b', 'c', 'a', 'd');
    const unknown = known.unknown(offered);
    assert.deepEqual(unknown, entries('a', 'c', 'a'));
    assert.equal(unknown[0], offered[0], 'the entries themselves, not copies');
    assert.deepEqual(knownOf(known, 'a', 'c'), [], 'asking marks nothing known');
  });
});

describe('known URLs: bounded by two generations', () => {
  it('drops the old generation whole once the young one fills', () => {
    const known = new KnownUrls(3);
    known.add(entries('a', 'b', 'c')); // full: a, b, c become the old generation
    known.add(entries('d', 'e', 'f')); // full again: a, b, c are dropped
    assert.deepEqual(knownOf(known, 'a', 'b', 'c'), []);
    known.add(entries('g'));
    assert.deepEqual(knownOf(known, 'g'), ['g'], 'young');
  });

  it('never holds more than two generations', () => {
    const known = new KnownUrls(100);
    known.add(entries(...Array.from({ length: 950 }, (_, n) => `u${n}`))); // old: u800 to u899; young: u900 to u949
    assert.deepEqual(knownOf(known, 'u0', 'u799', 'u800', 'u899', 'u900', 'u949', 'u950'), ['u800', 'u899', 'u900', 'u949']);
  });

  it('moves a URL found in the old generation to the young one, so a link found on every page stays', () => {
    const known = new KnownUrls(3);
    known.add(entries('nav', 'a', 'b')); // old: nav, a, b
    assert.deepEqual(knownOf(known, 'nav'), ['nav']); // young: nav
    known.add(entries('c', 'd')); // young full: nav, c, d become old; a, b dropped
    assert.deepEqual(knownOf(known, 'a', 'b', 'nav', 'c', 'd'), ['nav', 'c', 'd']);
  });

  it('a URL told twice within one generation takes one place', () => {
    const known = new KnownUrls(3);
    known.add(entries('a', 'a', 'b', 'b')); // young: a, b
    known.add(entries('c', 'd', 'e')); // c fills it: a, b, c old; young: d, e
    assert.deepEqual(knownOf(known, 'd', 'e'), ['d', 'e']);
    assert.deepEqual(knownOf(known, 'a'), ['a']);
  });
});
