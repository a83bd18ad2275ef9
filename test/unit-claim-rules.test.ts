/**
 * The claim rules both frontier stores share (src/store/claim-rules.ts), with no store: how
 * many URLs a claim takes fresh and as page-cap skips, when it refuses, which counts it reads,
 * and the order a ready claim tries keys in, synchronous and asynchronous.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { firstReadyClaim, planClaim, type ClaimCounts, type ClaimRequest } from '../src/store/claim-rules';
import type { ClaimedUrl } from '../src/store/frontier-store';

const UNCAPPED = Number.MAX_SAFE_INTEGER;

/** A request of `limit` URLs of the key, with no bounds and no cap unless given. */
function request(limit: number, overrides: Partial<ClaimRequest> = {}): ClaimRequest {
  return { limit, maxPagesPerHost: UNCAPPED, bounds: {}, ...overrides };
}

/** A batch with nothing of the key, on a key nobody holds and nothing was taken of. */
function counts(overrides: Partial<ClaimCounts> = {}): ClaimCounts {
  return { share: 0, batchRows: 0, holding: false, otherHolders: 0, taken: 0, ...overrides };
}

/** Counts whose reads are recorded, so a test sees which ones the rule asked for. */
function countsRead(values: ClaimCounts): { counts: ClaimCounts; read: string[] } {
  const read: string[] = [];
  const recorded = Object.fromEntries(
    Object.keys(values).map((name) => [name, { get: () => (read.push(name), values[name as keyof ClaimCounts]), enumerable: true }]),
  );
  return { counts: Object.defineProperties({}, recorded) as ClaimCounts, read };
}

const url = (n: number): ClaimedUrl => ({ url: `http://a.test/${n}`, depth: 0, attempts: 0, priority: 1 });

describe('claim rule: how many URLs a claim takes', () => {
  it("takes the key's limit less the batch's share of it, all fresh under the cap", () => {
    assert.deepEqual(planClaim(request(5), counts()), { fresh: 5, capped: 0 });
    assert.deepEqual(planClaim(request(5), counts({ share: 3 })), { fresh: 2, capped: 0 }, 'finished or not, the share counts');
  });

  it('claims nothing once the share has used the limit', () => {
    assert.equal(planClaim(request(5), counts({ share: 5 })), null);
    assert.equal(planClaim(request(5), counts({ share: 7 })), null);
    assert.equal(planClaim(request(0), counts()), null);
  });

  it('stays within the batch limit over all its keys', () => {
    assert.deepEqual(planClaim(request(10, { bounds: { batchLimit: 8 } }), counts({ share: 1, batchRows: 5 })), { fresh: 3, capped: 0 });
    assert.deepEqual(planClaim(request(4, { bounds: { batchLimit: 8 } }), counts({ share: 1, batchRows: 2 })), { fresh: 3, capped: 0 }, 'the share binds first');
    assert.equal(planClaim(request(10, { bounds: { batchLimit: 8 } }), counts({ batchRows: 8 })), null);
  });

  it('splits at the page cap: the room past it is claimed as skips', () => {
    assert.deepEqual(planClaim(request(5, { maxPagesPerHost: 10 }), counts({ taken: 7 })), { fresh: 3, capped: 2 });
    assert.deepEqual(planClaim(request(5, { maxPagesPerHost: 10 }), counts({ taken: 10 })), { fresh: 0, capped: 5 });
    assert.deepEqual(planClaim(request(5, { maxPagesPerHost: 10 }), counts({ taken: 12 })), { fresh: 0, capped: 5 }, 'a lowered cap takes no room away');
    assert.deepEqual(planClaim(request(5, { maxPagesPerHost: 10 }), counts({ taken: 4 })), { fresh: 5, capped: 0 });
  });

  it('refuses a batch that would become one holder of the key too many; topping up adds no holder', () => {
    const bounded = request(5, { bounds: { holders: 2 } });
    assert.equal(planClaim(bounded, counts({ otherHolders: 2 })), null);
    assert.equal(planClaim(bounded, counts({ otherHolders: 3 })), null);
    assert.deepEqual(planClaim(bounded, counts({ otherHolders: 1 })), { fresh: 5, capped: 0 });
    assert.deepEqual(planClaim(bounded, counts({ otherHolders: 2, holding: true, share: 2 })), { fresh: 3, capped: 0 });
    assert.deepEqual(planClaim(request(5), counts({ otherHolders: 50 })), { fresh: 5, capped: 0 }, 'no holder bound: any number of holders');
  });

  it('reads a count only when its decision needs it', () => {
    const full = countsRead(counts({ share: 5 }));
    assert.equal(planClaim(request(5, { bounds: { holders: 1, batchLimit: 10 } }), full.counts), null);
    assert.deepEqual(full.read, ['share', 'batchRows'], 'no room: neither the holders nor the cap count');

    const topUp = countsRead(counts({ holding: true, otherHolders: 9 }));
    assert.deepEqual(planClaim(request(5, { bounds: { holders: 1 } }), topUp.counts), { fresh: 5, capped: 0 });
    assert.deepEqual(topUp.read, ['share', 'holding', 'taken'], 'no batch limit, and a holder needs no holder count');

    const fresh = countsRead(counts());
    planClaim(request(5), fresh.counts);
    assert.deepEqual(fresh.read, ['share', 'taken']);
  });
});

describe('ready claim walk: which key a ready claim takes', () => {
  it('tries the keys the batch holds first, then the ready ones, and the first that yields URLs wins', () => {
    const tried: string[] = [];
    const yields: Record<string, ClaimedUrl[]> = { h2: [url(1)], r1: [url(2)] };
    const claim = firstReadyClaim(['h1', 'h2'], () => ['r1'], (key, held) => (tried.push(`${key}:${held}`), yields[key] ?? []));
    assert.deepEqual(claim, { key: 'h2', urls: [url(1)] });
    assert.deepEqual(tried, ['h1:true', 'h2:true']);
  });

  it('asks for the ready keys only once no held key had anything left', () => {
    let asked = 0;
    const ready = () => (asked += 1, ['r1', 'r2', 'r3']);
    const tried: string[] = [];
    const claim = firstReadyClaim(['h1'], ready, (key, held) => (tried.push(`${key}:${held}`), key === 'r2' ? [url(3)] : []));
    assert.deepEqual(claim, { key: 'r2', urls: [url(3)] });
    assert.deepEqual(tried, ['h1:true', 'r1:false', 'r2:false']);
    assert.equal(asked, 1);
    assert.equal(firstReadyClaim(['h1'], ready, () => [url(1)])?.key, 'h1');
    assert.equal(asked, 1, 'a held key that yields spares the lookup');
    assert.equal(firstReadyClaim([], () => ['r1'], () => []), null);
  });

  it('walks the same way when each claim is a promise', async () => {
    const tried: string[] = [];
    const claimOf = async (key: string, held: boolean): Promise<ClaimedUrl[]> => (tried.push(`${key}:${held}`), key === 'r1' ? [url(4)] : []);
    assert.deepEqual(await firstReadyClaim(['h1'], () => ['r0', 'r1', 'r2'], claimOf), { key: 'r1', urls: [url(4)] });
    assert.deepEqual(tried, ['h1:true', 'r0:false', 'r1:false']);
    assert.equal(await firstReadyClaim(['h1'], () => ['r0'], async () => []), null);
    assert.equal(firstReadyClaim([], () => [], claimOf), null, 'no key to try: null at once');
  });
});
