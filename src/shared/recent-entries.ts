/**
 * A bounded map that keeps what is used again: two generations of at most `generation` entries
 * each. When the young one fills, the old one is dropped whole and the young one becomes old;
 * an entry found in the old generation moves to the young one. So an entry used all the time
 * (a site's navigation link) stays, and the bound costs no bookkeeping per lookup beyond a
 * second Map probe on a miss (BUbiNG and IRLbot bound their caches the same way).
 */
export class RecentEntries<Key, Value> {
  private young = new Map<Key, Value>();
  private old = new Map<Key, Value>();

  constructor(private readonly generation: number) {}

  /** The key's value, or undefined; a key found in the old generation moves to the young one. */
  get(key: Key): Value | undefined {
    const young = this.young.get(key);
    if (young !== undefined || this.young.has(key)) return young;
    if (!this.old.has(key)) return undefined;
    const value = this.old.get(key) as Value;
    this.set(key, value);
    return value;
  }

  /** Whether the key is held; like `get`, moves it to the young generation. */
  has(key: Key): boolean {
    if (this.young.has(key)) return true;
    if (!this.old.has(key)) return false;
    this.set(key, this.old.get(key) as Value);
    return true;
  }

  set(key: Key, value: Value): void {
    this.young.set(key, value);
    if (this.young.size < this.generation) return;
    this.old = this.young;
    this.young = new Map();
  }
}
