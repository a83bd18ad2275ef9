/**
 * Opens each crawl's store once per process and keeps it open while the crawl is active.
 * Stores are lent out with `use`, and only stores nobody is using are closed once more than
 * `maxOpen` are open, so a long-lived worker serving many crawls holds a bounded number of
 * stores without ever closing one under a running batch.
 */
import type { FrontierStore } from './frontier-store';

/** Opens the store of one crawl (a SQLite file, or a crawl's rows in a server database). */
export type OpenStore = (crawlId: string) => FrontierStore;

interface OpenEntry {
  store: FrontierStore;
  users: number;
}

export class StoreRegistry {
  private readonly open = new Map<string, OpenEntry>();

  constructor(
    private readonly openStore: OpenStore,
    private readonly maxOpen = 32,
  ) {}

  /** Runs `work` with the crawl's store, which stays open until `work` settles. */
  async use<T>(crawlId: string, work: (store: FrontierStore) => Promise<T>): Promise<T> {
    let entry = this.open.get(crawlId);
    if (entry) {
      this.open.delete(crawlId); // re-insert: Map order is our LRU order
    } else {
      entry = { store: this.openStore(crawlId), users: 0 };
    }
    this.open.set(crawlId, entry);
    entry.users += 1;
    try {
      return await work(entry.store);
    } finally {
      entry.users -= 1;
      await this.closeIdleOverLimit();
    }
  }

  private async closeIdleOverLimit(): Promise<void> {
    for (const [crawlId, entry] of this.open) {
      if (this.open.size <= this.maxOpen) return;
      if (entry.users > 0) continue;
      this.open.delete(crawlId);
      await entry.store.close();
    }
  }

  async closeAll(): Promise<void> {
    const entries = [...this.open.values()];
    this.open.clear();
    await Promise.all(entries.map((entry) => entry.store.close()));
  }
}
