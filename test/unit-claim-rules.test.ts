/**
 * The claim rules both frontier stores share (src/store/claim-rules.ts), with no store: how
 * many URLs a claim takes fresh and as page-cap skips, when it refuses, which counts it reads,
 * and the keys a ready claim tries and takes, synchronous and asynchronous.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { keysPerReadyClaim, planClaim, READY_CANDIDATES, readyClaims, type ClaimCounts, type ClaimRequest } from '../src/store/claim-rules';
import type { ClaimedUrl } from '../src/store/frontier-store';

const UNCAPPED = Number.MAX_SAFE_INTEGER;

/** A request of `limit` URLs of the key, with no bounds and no cap unless given. */
function request(limit: number, overrides: Partial<ClaimRequest> = {}): ClaimRequest {
  return { limit, maxPagesPerHost: UNCAPPED, bounds: {}, ...overrides };
}

/** A batch with nothing of the key, on a key nobody holds and nothing was taken of. */
function counts(overrides: Partial<ClaimCounts> = {}): ClaimCounts {
  return { share: 0, batchRows: 0, holding: false, otherHolders: 0, taken: 0, queued: 0, ...overrides };
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

  it("spread: takes its even part of the key's queue, one of the key's holders", () => {
    const spread = request(200, { bounds: { holders: 32, spread: true } });
    assert.deepEqual(planClaim(spread, counts({ queued: 12 })), { fresh: 1, capped: 0 }, 'a short queue: one URL each for 12 batches');
    assert.deepEqual(planClaim(spread, counts({ queued: 144 })), { fresh: 5, capped: 0 });
    assert.deepEqual(planClaim(spread, counts({ queued: 10_000 })), { fresh: 200, capped: 0 }, 'a long queue: the room binds');
    assert.equal(planClaim(spread, counts({ queued: 0 })), null);
    assert.deepEqual(planClaim(request(200, { bounds: { holders: 32 } }), counts({ queued: 12 })), { fresh: 200, capped: 0 }, 'not spread: the whole room');
    assert.deepEqual(planClaim(request(5, { maxPagesPerHost: 10, bounds: { holders: 2, spread: true } }), counts({ queued: 8, taken: 8 })), { fresh: 2, capped: 2 }, 'the even part is split at the page cap');
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

    const spread = countsRead(counts({ queued: 3 }));
    planClaim(request(5, { bounds: { holders: 2, spread: true } }), spread.counts);
    assert.deepEqual(spread.read, ['share', 'holding', 'otherHolders', 'queued', 'taken']);
  });
});

describe('ready claim walk: which keys a ready claim takes', () => {
  const keys = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);

  it('takes every held key that yields, and asks for no ready key then', () => {
    const tried: string[] = [];
    let asked = 0;
    const yields: Record<string, ClaimedUrl[]> = { h2: [url(1)], h3: [url(2)] };
    const claims = readyClaims({ held: ['h1', 'h2', 'h3'], ready: () => (asked += 1, keys(8)), room: 0 }, (key, held) => (tried.push(`${key}:${held}`), yields[key] ?? []));
    assert.deepEqual(claims, [{ key: 'h2', urls: [url(1)] }, { key: 'h3', urls: [url(2)] }], 'held keys resume even with no room left');
    assert.deepEqual(tried, ['h1:true', 'h2:true', 'h3:true']);
    assert.equal(asked, 0, 'a held key that yields spares the lookup');
  });

  it('takes half the ready keys where the store found as many as it asked for, one where it found fewer', () => {
    assert.equal(keysPerReadyClaim(READY_CANDIDATES), READY_CANDIDATES / 2);
    assert.equal(keysPerReadyClaim(READY_CANDIDATES - 1), 1);
    const tried: string[] = [];
    const claimOf = (key: string, held: boolean) => (tried.push(`${key}:${held}`), held || key === 'r1' ? [] : [url(1)]);
    const many = readyClaims({ held: ['h1'], ready: () => keys(READY_CANDIDATES), room: READY_CANDIDATES }, claimOf);
    const taken = keys(READY_CANDIDATES).filter((key) => key !== 'r1').slice(0, READY_CANDIDATES / 2);
    assert.deepEqual(many.map((claim) => claim.key), taken, 'a key that yields nothing, held or ready, is passed over');
    assert.deepEqual(tried, ['h1:true', ...keys(READY_CANDIDATES / 2 + 1).map((key) => `${key}:false`)]);
    assert.deepEqual(readyClaims({ held: [], ready: () => keys(READY_CANDIDATES - 1), room: 10 }, claimOf).map((claim) => claim.key), ['r0']);
    assert.deepEqual(readyClaims({ held: [], ready: () => [], room: 10 }, claimOf), []);
  });

  it('stops taking ready keys once their URLs fill the room', () => {
    const tried: string[] = [];
    const claimOf = (key: string) => (tried.push(key), [url(1), url(2), url(3)]);
    assert.deepEqual(readyClaims({ held: [], ready: () => keys(READY_CANDIDATES), room: 5 }, claimOf).map((claim) => claim.key), ['r0', 'r1']);
    assert.deepEqual(tried, ['r0', 'r1'], 'no key is tried once the room is used');
    assert.deepEqual(readyClaims({ held: [], ready: () => keys(READY_CANDIDATES), room: 0 }, claimOf), [], 'no room: no ready key is tried');
    assert.deepEqual(tried, ['r0', 'r1']);
  });

  it('walks the same way when each claim is a promise', async () => {
    const tried: string[] = [];
    const claimOf = async (key: string, held: boolean): Promise<ClaimedUrl[]> => (tried.push(`${key}:${held}`), key === 'r1' ? [] : [url(4)]);
    const claims = await readyClaims({ held: ['h1'], ready: () => keys(READY_CANDIDATES), room: 3 }, claimOf);
    assert.deepEqual(claims, [{ key: 'h1', urls: [url(4)] }]);
    assert.deepEqual(await readyClaims({ held: [], ready: () => keys(READY_CANDIDATES), room: 3 }, claimOf), [
      { key: 'r0', urls: [url(4)] },
      { key: 'r2', urls: [url(4)] },
      { key: 'r3', urls: [url(4)] },
    ]);
    assert.deepEqual(tried, ['h1:true', 'r0:false', 'r1:false', 'r2:false', 'r3:false']);
    assert.deepEqual(readyClaims({ held: [], ready: () => [], room: 3 }, claimOf), [], 'no key to try: an empty array at once');
  });
});
