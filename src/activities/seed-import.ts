/**
 * The activity that queues a crawl's seed file: read by the worker, in chunks of
 * `SEED_CHUNK` URLs, each chunk one store transaction (`enqueue`) plus its scope keys
 * (`addSeedScope`). The list passes through no workflow history or payload: its input is the
 * crawl by reference, its result counts and a view.
 *
 * Resume: every chunk's end position is heartbeated once it is stored, and a retried attempt
 * starts from the last heartbeat. A chunk stored but not yet heartbeated is read again, which
 * adds nothing: `enqueue` and `addSeedScope` ignore what they already hold.
 */
import { Context } from '@temporalio/activity';
import type { CrawlConfig } from '../shared/crawl-config';
import type { CrawlView } from '../shared/crawl-types';
import type { FrontierStore } from '../store/frontier-store';
import { scopeKey } from '../policy/scope';
import { LIST_START, seedFileChunks, type SeedListPosition } from '../seeds/seed-lines';
import { EmptySeedsFileError } from '../seeds/seed-errors';
import { classified } from './activity-failures';
import { SNAPSHOT_HOSTS } from './crawl-batch';
import type { ConfigRef } from './recorded-config';
import { seedEntries } from './seed-entries';
import { politenessKeys, type PolitenessKeys } from '../policy/politeness-key';
import type { ActivityDeps } from './deps';
import { HEARTBEAT_TICK_MS } from '../shared/activity-timing';

/** URLs per store transaction: large enough that a million seeds take ~200 transactions, small enough for a short lock. */
export const SEED_CHUNK = 5_000;

/** What an import has done so far: heartbeated after every stored chunk. */
export interface SeedImportProgress extends SeedListPosition {
  /** Seed lines read. */
  seeds: number;
  /** Of those, URLs new to the frontier. */
  added: number;
  /** The host of the first seed, for the crawl's search attributes. */
  firstHost: string | null;
}

export interface SeedImportResult {
  seeds: number;
  added: number;
  firstHost: string | null;
  view: CrawlView;
}

/** The distinct scope keys of `urls` (none for scope `any`). */
function scopeKeys(config: Pick<CrawlConfig, 'scope'>, urls: readonly string[]): string[] {
  const keys = new Set<string>();
  for (const url of urls) {
    const key = scopeKey(config.scope, new URL(url));
    if (key !== undefined) keys.add(key);
  }
  return [...keys];
}

/** Stores the seeds of the file at `path` from `progress` on, reporting each chunk's end once it is stored. */
async function importFrom(
  store: FrontierStore,
  path: string,
  config: CrawlConfig,
  progress: SeedImportProgress,
  report: (progress: SeedImportProgress) => void,
  keys: PolitenessKeys,
): Promise<SeedImportProgress> {
  const signal = Context.current().cancellationSignal;
  let done = progress;
  for await (const chunk of seedFileChunks(path, progress, SEED_CHUNK)) {
    if (signal.aborted) throw signal.reason;
    const entries = seedEntries(config, chunk.urls);
    await store.addSeedScope(scopeKeys(config, chunk.urls));
    const added = await store.enqueue(await keys(entries));
    done = { ...chunk.next, seeds: done.seeds + chunk.urls.length, added: done.added + added, firstHost: done.firstHost ?? entries[0]?.host ?? null };
    report(done);
  }
  return done;
}

export function createSeedImport({ stores, configs, transport }: Pick<ActivityDeps, 'stores' | 'configs' | 'transport'>) {
  return function importSeeds(ref: ConfigRef): Promise<SeedImportResult> {
    const context = Context.current();
    return classified(context.info.attempt, () =>
      stores.use(ref.crawlId, async (store) => {
        const config = await configs.get(store, ref);
        const resumed = context.info.heartbeatDetails as SeedImportProgress | undefined;
        let latest: SeedImportProgress = resumed ?? { ...LIST_START, seeds: 0, added: 0, firstHost: null };
        if (resumed) context.log.info('resuming seed import from heartbeat', { crawlId: ref.crawlId, line: resumed.line, attempt: context.info.attempt });
        // A slow chunk (a busy store) must not look like a dead worker: the ticker repeats the last stored position.
        const ticker = setInterval(() => context.heartbeat(latest), HEARTBEAT_TICK_MS);
        context.heartbeat(latest);
        const stored = (progress: SeedImportProgress): void => {
          latest = progress;
          context.heartbeat(progress);
        };
        try {
          const done = config.seedsFile === undefined ? latest : await importFrom(store, config.seedsFile, config, latest, stored, politenessKeys(config, (hostname) => transport.resolve(hostname)));
          if (done.seeds === 0 && config.seeds.length === 0) {
            throw new EmptySeedsFileError(`seeds file ${config.seedsFile}: holds no seed URL, and the crawl has no inline seeds`);
          }
          context.log.info('seed file imported', { crawlId: ref.crawlId, lines: done.line, seeds: done.seeds, added: done.added });
          return { seeds: done.seeds, added: done.added, firstHost: done.firstHost, view: await store.view(SNAPSHOT_HOSTS) };
        } finally {
          clearInterval(ticker);
        }
      }),
    );
  };
}
