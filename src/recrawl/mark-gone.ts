/**
 * The end of a recrawl: URLs the previous crawl recorded that this crawl never reached are
 * recorded as `gone`. Only when this crawl's frontier is empty (it reached everything it
 * could): a crawl cut short by its page budget or deadline cannot tell gone from not-yet-seen.
 */
import type { FrontierEntry, FrontierStore } from '../store/frontier-store';

const CHUNK = 500;

export async function markGone(previous: FrontierStore, current: FrontierStore, at: string): Promise<number> {
  let gone = 0;
  let chunk: FrontierEntry[] = [];
  const flush = async (): Promise<void> => {
    gone += await current.recordGone(chunk, at);
    chunk = [];
  };
  for await (const record of previous.records()) {
    // Gone already in the previous crawl: reported then, not again.
    if (record.change === 'gone') continue;
    chunk.push({ url: record.url, host: new URL(record.url).host, depth: record.depth });
    if (chunk.length >= CHUNK) await flush();
  }
  await flush();
  return gone;
}
