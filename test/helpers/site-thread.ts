/**
 * The synthetic site served from a thread of its own, for tests that judge request timing.
 * In the test's main thread the server shares an event loop with the workers under test: a
 * page being parsed there delays the server's 'request' event, so it sees one request late and
 * the gap after it short. On its own thread it notes a request when it arrives, whatever the
 * workers are doing.
 */
import { once } from 'node:events';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { SiteGraph, pagePath, startSyntheticSite, type RequestLogEntry, type SyntheticSiteOptions } from '../../src/sites/synthetic-site';

/** The site's options that can cross to another thread (no route handlers). */
export type ThreadSiteOptions = Omit<SyntheticSiteOptions, 'routes'>;

interface SiteLog {
  requests: RequestLogEntry[];
  maxInFlight: number;
}

export interface ThreadSite {
  origin: string;
  graph: SiteGraph;
  urlOf(page: number): string;
  /** Every request so far, and the most that were ever in flight at once. */
  log(): Promise<SiteLog>;
  close(): Promise<void>;
}

export async function startSiteThread(options: ThreadSiteOptions): Promise<ThreadSite> {
  const thread = new Worker(__filename, { workerData: { siteThread: options } });
  const [{ origin }] = (await once(thread, 'message')) as [{ origin: string }];
  return {
    origin,
    graph: new SiteGraph(options), // the same seeded graph the thread serves
    urlOf: (page) => `${origin}${pagePath(page)}`,
    log: async () => {
      thread.postMessage('log');
      const [log] = (await once(thread, 'message')) as [SiteLog];
      return log;
    },
    close: async () => {
      thread.postMessage('close');
      await once(thread, 'exit');
    },
  };
}

async function serveThisThread(options: ThreadSiteOptions): Promise<void> {
  const site = await startSyntheticSite(options);
  const port = parentPort!;
  port.on('message', (message: 'log' | 'close') => {
    if (message === 'log') port.postMessage({ requests: site.requests, maxInFlight: site.maxInFlight() } satisfies SiteLog);
    else void site.close().then(() => port.close());
  });
  port.postMessage({ origin: site.origin });
}

if (!isMainThread && (workerData as { siteThread?: ThreadSiteOptions } | null)?.siteThread) {
  void serveThisThread((workerData as { siteThread: ThreadSiteOptions }).siteThread);
}
