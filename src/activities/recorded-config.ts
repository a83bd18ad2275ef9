/**
 * The crawl's config as recorded in its store: written by `openCrawl` (a new version when a run
 * opens the crawl with other settings, and when seeds are added), read by every worker that
 * runs a batch of the crawl.
 * Workflow history and activity inputs carry only the crawl ID and the version, so seeds,
 * patterns, headers and cookies never pass through them.
 */
import type { CrawlConfig } from '../shared/crawl-config';
import type { FrontierStore } from '../store/frontier-store';

/** A reference to a version of a crawl's recorded config. */
export interface ConfigRef {
  crawlId: string;
  configVersion: number;
}

export class UnrecordedConfigError extends Error {
  readonly code = 'config-not-recorded';
}

/**
 * Records `config` as the crawl's latest version unless it already is; returns the latest
 * version. A crawl run again under its ID (a new workflow on the same store) crawls with the
 * settings it was started with, not with its first run's; an opening that is retried finds its
 * own config and records nothing.
 */
export async function recordConfig(store: FrontierStore, config: CrawlConfig): Promise<number> {
  const text = JSON.stringify(config);
  const latest = await store.latestConfig();
  if (latest?.config === text) return latest.version;
  await store.saveConfig((latest?.version ?? 0) + 1, text);
  return (await store.latestConfig())?.version ?? 1;
}

/**
 * Adds seeds to the recorded config as a new version. Two workers adding at once may race for
 * the same version number; the loser reads the winner's version and adds on top of it.
 */
export async function appendSeeds(store: FrontierStore, seeds: readonly string[]): Promise<{ version: number; config: CrawlConfig }> {
  for (;;) {
    const latest = await store.latestConfig();
    if (latest === undefined) throw new UnrecordedConfigError('the crawl has no recorded config: it was not opened');
    const config = JSON.parse(latest.config) as CrawlConfig;
    const missing = seeds.filter((seed) => !config.seeds.includes(seed));
    if (missing.length === 0) return { version: latest.version, config };
    await store.saveConfig(latest.version + 1, JSON.stringify({ ...config, seeds: [...config.seeds, ...missing] }));
  }
}

/** Each crawl's latest config this worker has read, so a batch reads the store only when the version moved. */
export class RecordedConfigs {
  private readonly cache = new Map<string, { version: number; config: CrawlConfig }>();

  /**
   * `storeDescription`: where this worker's stores live, password redacted. A version missing
   * from a store that every worker shares is never seen: the crawl recorded it before ordering
   * the batch. So when it is missing, the worker that opened the crawl used another store, the
   * usual cause being one machine started without the others' CRAWLFLOW_STORE_URL; the error
   * says so, and which store this worker has.
   */
  constructor(private readonly storeDescription: string) {}

  async get(store: FrontierStore, { crawlId, configVersion }: ConfigRef): Promise<CrawlConfig> {
    const cached = this.cache.get(crawlId);
    if (cached !== undefined && cached.version >= configVersion) return cached.config;
    const latest = await store.latestConfig();
    if (latest === undefined || latest.version < configVersion) {
      throw new UnrecordedConfigError(
        `crawl ${crawlId} has no recorded config version ${configVersion} in this worker's store (${this.storeDescription}): ` +
          'it was opened by a worker with another store; every worker on a task queue must use the same --store (CRAWLFLOW_STORE_URL)',
      );
    }
    const entry = { version: latest.version, config: JSON.parse(latest.config) as CrawlConfig };
    this.cache.set(crawlId, entry);
    return entry.config;
  }
}
