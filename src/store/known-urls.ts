/**
 * A store instance's cache of URLs known to be in its crawl's seen-set, in front of the durable
 * one (the unique index on `urls.url`): most links a page carries were seen long ago, and
 * dropping them before the write saves an index probe each (BUbiNG and IRLbot keep such a
 * cache for the same reason).
 *
 * Only ever a subset of the seen-set, so a crawl never depends on it: a store adds a URL once
 * a transaction of its own that inserted it or found it there has committed, and rows of
 * `urls` are never deleted. Each worker process has its own, which starts empty.
 *
 * Bounded by two generations of at most `generation` URLs each: when the young one fills, the
 * old one is dropped whole and the young one becomes old. A URL found in the old generation
 * moves to the young one, so the links of a site's navigation, found on every page, stay.
 */

/**
 * URLs per generation: at most twice this many are held, about 4 MB of 50-character URLs
 * (~100 bytes each with the Set's entry) per open store, whatever the size of the crawl. A
 * worker keeps up to 32 crawls' stores open, so the bound matters more than the hit rate.
 */
export const KNOWN_URLS_GENERATION = 20_000;

export class KnownUrls {
  private young = new Set<string>();
  private old = new Set<string>();

  constructor(private readonly generation = KNOWN_URLS_GENERATION) {}

  /** Whether `url` is known; a URL found in the old generation moves to the young one. */
  has(url: string): boolean {
    if (this.young.has(url)) return true;
    if (!this.old.has(url)) return false;
    this.remember(url);
    return true;
  }

  /** The entries whose URL is not known, in their order: those to send to the database. */
  unknown<T extends { url: string }>(entries: readonly T[]): T[] {
    return entries.filter((entry) => !this.has(entry.url));
  }

  /** Marks the entries' URLs known: only once the transaction that inserted or found them has committed. */
  add(entries: ReadonlyArray<{ url: string }>): void {
    for (const entry of entries) this.remember(entry.url);
  }

  private remember(url: string): void {
    this.young.add(url);
    if (this.young.size < this.generation) return;
    this.old = this.young;
    this.young = new Set();
  }
}
