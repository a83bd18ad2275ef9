/**
 * The render batch activity: a batch like crawlBatch (same claims, robots, politeness,
 * retries, heartbeats and resume), over the URLs queued for rendering, on the render task
 * queue. Each page is fetched with the crawl's transport first; HTML is then rendered in
 * Chromium and the rendered DOM is parsed like a fetched page, so records have one shape.
 * Non-HTML answers (errors, redirects out of scope, images) are recorded as fetched.
 */
import { fetchPage } from '../fetch/fetch-page';
import type { Transport } from '../fetch/transport';
import type { ChromiumRenderer } from '../render/chromium-renderer';
import { createBatchActivities } from './crawl-batch';
import type { PageLoader } from './page-loader';
import type { ActivityDeps } from './deps';

export function renderLoader(transport: Transport, renderer: ChromiumRenderer): PageLoader {
  return {
    render: true,
    async load(url, policy, config, signal, headers) {
      const page = await fetchPage(transport, url, policy, signal, headers);
      if (page.html === null || config.render === undefined) return page;
      const html = await renderer.render({ page: { ...page, html: page.html }, policy, render: config.render, signal });
      return { ...page, html };
    },
  };
}

/**
 * The activities a render worker registers (and nothing else: it runs no workflows):
 * `browserBatch` for crawls of this release, `renderBatch` for crawls started by 0.2.0.
 */
export function createRenderActivities(deps: ActivityDeps, renderer: ChromiumRenderer) {
  const batches = createBatchActivities(deps, renderLoader(deps.transport, renderer));
  return { browserBatch: batches.ordered, renderBatch: batches.legacy };
}

export type RenderActivities = ReturnType<typeof createRenderActivities>;
