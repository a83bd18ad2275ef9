/**
 * A crawl held up on one host while a test adds a seed on another: host A, whose two seeds
 * answer only once released, and host B, the seed the test adds, whose page links to ten pages.
 *
 * A's pages are seeds rather than links of a seed page so that two batches hold them, one
 * each, whatever the timing: the crawl's first batches take a share of one seed each. Links
 * queued by a seed page go to whichever batch claims first: a batch launched on the seed
 * batch's report, before the batches waiting for work have started, may take both and fetch
 * them one after the other.
 */
import { startCrawl, type CrawlHandle } from '../../src/client/crawl-client';
import type { CrawlInput } from '../../src/shared/crawl-config';
import { waitFor } from './fixtures';
import { page, startRecordingSite, type Handler, type RecordingSite } from './recording-site';
import type { TestTemporal } from './temporal';

/** What a test of an added seed acts on and checks. */
export interface AddedSeedCrawl {
  /** The crawl, seeded with A's two pages, which are hanging when the test gets it. */
  handle: CrawlHandle;
  /** Host B, not yet known to the crawl. */
  added: RecordingSite;
  /** The paths of B's ten linked pages. */
  bPaths: string[];
  /** Lets A's two pages answer. */
  release(): void;
}

/** Routes that answer only once `released` settles: a batch that fetches one hangs on it until then. */
export function heldRoutes(paths: readonly string[], released: Promise<void>): Record<string, Handler> {
  return Object.fromEntries(paths.map((path): [string, Handler] => [path, (_req, res) => void released.then(() => page(res))]));
}

const A_PATHS = ['/a/0', '/a/1'];

async function startSites() {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = await startRecordingSite(heldRoutes(A_PATHS, released));
  const bPaths = Array.from({ length: 10 }, (_, i) => `/b/${i}`);
  const added = await startRecordingSite({ '/': (_req, res) => page(res, bPaths), ...Object.fromEntries(bPaths.map((path): [string, Handler] => [path, (_req, res) => page(res)])) });
  return {
    held,
    added,
    bPaths,
    release: () => release(),
    /** Lets A's pages go, and stops both sites. */
    async close() {
      release();
      await held.close();
      await added.close();
    },
  };
}

/**
 * Starts the crawl `crawlId` of A under `limits`, waits up to `hangWithinMs` for A's two
 * pages to be requested (and so to hang), runs `test` on it, and stops both sites however
 * `test` ends.
 */
export async function withAddedSeedCrawl(
  target: { env: TestTemporal; taskQueue: string; crawlId: string; limits: Omit<CrawlInput, 'seeds'>; hangWithinMs: number },
  test: (crawl: AddedSeedCrawl) => Promise<void>,
): Promise<void> {
  const { env, taskQueue, crawlId, limits, hangWithinMs } = target;
  const sites = await startSites();
  const { held, added, bPaths, release } = sites;
  try {
    const handle = await startCrawl(env.client, crawlId, { seeds: A_PATHS.map((path) => `${held.origin}${path}`), ...limits }, taskQueue);
    await waitFor(() => held.pages().length === 2, hangWithinMs, "A's two pages to hang");
    await test({ handle, added, bPaths, release });
  } finally {
    await sites.close();
  }
}
