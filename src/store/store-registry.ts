/**
 * Opens each crawl's store once per process and keeps it open while the crawl is active.
 * Least recently used stores are closed past `maxOpen`, so a long-lived worker serving many
 * crawls holds a bounded number of files.
 */
import type { FrontierStore } from './frontier-store';
import { crawlStorePath, SqliteFrontierStore } from './sqlite-store';

export class StoreRegistry {
  private readonly open = new Map<string, FrontierStore>();

  constructor(
    readonly dataDir: string,
    private readonly maxOpen = 32,
  ) {}

  get(crawlId: string): FrontierStore {
    let store = this.open.get(crawlId);
    if (store) {
      this.open.delete(crawlId); // re-insert: Map order is our LRU order
    } else {
      store = new SqliteFrontierStore(crawlStorePath(this.dataDir, crawlId));
      if (this.open.size >= this.maxOpen) {
        const [oldestId, oldest] = this.open.entries().next().value as [string, FrontierStore];
        oldest.close();
        this.open.delete(oldestId);
      }
    }
    this.open.set(crawlId, store);
    return store;
  }

  closeAll(): void {
    for (const store of this.open.values()) store.close();
    this.open.clear();
  }
}
