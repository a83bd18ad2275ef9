/**
 * How a host's backlog splits between fetch batches and render batches. Pure and
 * deterministic (workflow code). A crawl without `render` has one lane per host, exactly the
 * hosts of the snapshot in their order.
 */
import type { CrawlConfig, RenderConfig } from '../shared/crawl-config';
import type { FrontierSnapshot } from '../shared/crawl-types';

/** Patch: executions that render schedule `renderBatch` on the render task queue. */
export const RENDER_QUEUE_PATCH = 'render-queue';

export interface Lane {
  host: string;
  /** What `launchedSinceSnapshot` counts by: the host, or the host's render lane. */
  key: string;
  queued: number;
  render: boolean;
}

/** Each host's fetch backlog, then (when the crawl renders) its render backlog, as lanes. */
export function backlogLanes(hosts: FrontierSnapshot['hosts'], renders: boolean): Lane[] {
  return hosts.flatMap(({ host, queued, rendering = 0 }): Lane[] => {
    if (!renders) return [{ host, key: host, queued, render: false }];
    return [
      { host, key: host, queued: queued - rendering, render: false },
      { host, key: `${host} render`, queued: rendering, render: true },
    ];
  });
}

/**
 * A render batch: on the render task queue, with the fetch batch's heartbeat and retry, and
 * room for each page's rendering (every attempt) on top of its fetch.
 */
export function renderBatchOptions<T extends { startToCloseTimeout: number }>(config: CrawlConfig, render: RenderConfig, fetch: T): T & { taskQueue: string } {
  return {
    ...fetch,
    taskQueue: render.taskQueue,
    startToCloseTimeout: fetch.startToCloseTimeout + config.batchSize * render.timeoutMs * (config.maxRetries + 1),
  };
}
