/**
 * Renders fetched HTML in headless Chromium (Debian's package, driven by playwright-core) and
 * returns the DOM after the page's scripts ran. One browser per render worker process,
 * launched on first use (and again if it dies), one fresh context per page, so no cookie,
 * storage or cache passes from one page (or crawl) to the next.
 *
 * The browser itself never opens a connection. Every request goes through a route handler:
 * the page's own document is served from the HTML the crawl already fetched; a subrequest
 * that request-policy.ts allows is fetched with the crawl's guarded transport (the address
 * guard checks every connection, redirects are scope-checked) and handed to the browser;
 * everything else is aborted. As a second wall, Chromium is launched with a host resolver
 * that resolves nothing and a proxy on a closed loopback port, so anything a route could
 * miss (WebSockets, WebRTC, prefetches) fails on loopback instead of reaching the network;
 * service workers are blocked and WebSockets answered by a mock that closes at once.
 */
import { chromium, errors, type Browser, type BrowserContext } from 'playwright-core';
import { FetchError } from '../fetch/errors';
import { fetchResource, type FetchedPage, type FetchPolicy } from '../fetch/fetch-page';
import type { Transport } from '../fetch/transport';
import type { RenderConfig } from '../shared/crawl-config';
import { judgeSubrequest, type BlockReason } from './request-policy';
import { assertChromium } from './chromium-binary';

const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  // No traffic of Chromium's own (updates, sync, safe browsing, field trials).
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  // The second wall: no name resolves, and whatever still tries to connect goes to a closed port.
  '--host-resolver-rules=MAP * ~NOTFOUND',
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export interface BlockedRequest {
  /** The rendered page. */
  page: string;
  url: string;
  reason: BlockReason;
}

export interface ChromiumRendererOptions {
  executablePath?: string;
  /** Called for every request a rendered page was refused (metrics, logs, tests). */
  onBlocked?: (blocked: BlockedRequest) => void;
}

export interface RenderRequest {
  /** The page as fetched, HTML decoded: what the browser gets as its document. */
  page: FetchedPage & { html: string };
  /** The fetch policy of the crawl: its scope (`allowRedirect`) and guard apply to every subrequest. */
  policy: FetchPolicy;
  render: RenderConfig;
  signal: AbortSignal;
}

export class ChromiumRenderer {
  private browser: Promise<Browser> | undefined;
  private closed = false;

  private readonly executablePath: string;

  /** Checks that Chromium is there (the browser itself starts with the first page). */
  constructor(
    private readonly transport: Transport,
    private readonly options: ChromiumRendererOptions = {},
  ) {
    this.executablePath = assertChromium(options.executablePath);
  }

  private launch(): Promise<Browser> {
    return chromium.launch({ executablePath: this.executablePath, headless: true, args: CHROMIUM_ARGS });
  }

  /**
   * The browser, launched once however many pages ask at the same time. One that died (or
   * failed to start) is replaced by the first page that notices, and only by that one.
   */
  private async browserReady(): Promise<Browser> {
    if (this.closed) throw new Error('the renderer is closed');
    const current = (this.browser ??= this.launch());
    const browser = await current.catch(() => undefined);
    if (browser?.isConnected()) return browser;
    if (this.browser === current) this.browser = this.launch();
    return this.browser;
  }

  /** The page's DOM, serialized, once `render.waitUntil` was reached. */
  async render({ page, policy, render, signal }: RenderRequest): Promise<string> {
    if (signal.aborted) throw signal.reason;
    const browser = await this.browserReady();
    const context = await browser.newContext({ serviceWorkers: 'block', userAgent: policy.userAgent, acceptDownloads: false });
    // Cancellation closes the page: the navigation rejects, and subrequest fetches stop.
    const subrequests = new AbortController();
    const stop = (): void => {
      subrequests.abort();
      void context.close().catch(() => undefined);
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      // A subrequest's redirects are not the page's: nothing stores them.
      await this.routeEverything(context, page, { ...policy, recordRedirects: false }, render, subrequests.signal);
      const tab = await context.newPage();
      await tab.goto(page.finalUrl, { waitUntil: render.waitUntil, timeout: render.timeoutMs });
      return await tab.content();
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof errors.TimeoutError) throw new FetchError('timeout', `not rendered within ${render.timeoutMs} ms`, { cause: err });
      // A dead browser is the worker's problem, not the page's: fail the batch so it is retried.
      if (!browser.isConnected()) throw err;
      throw new FetchError('render-failed', (err as Error).message.split('\n')[0], { cause: err });
    } finally {
      signal.removeEventListener('abort', stop);
      subrequests.abort();
      await context.close().catch(() => undefined);
    }
  }

  private async routeEverything(context: BrowserContext, page: RenderRequest['page'], policy: FetchPolicy, render: RenderConfig, signal: AbortSignal): Promise<void> {
    const block = (url: string, reason: BlockReason): void => this.options.onBlocked?.({ page: page.finalUrl, url, reason });
    let documentServed = false;
    let made = 0;
    await context.routeWebSocket(/.*/, (ws) => {
      block(ws.url(), 'websocket');
      void ws.close().catch(() => undefined);
    });
    await context.route('**/*', async (route) => {
      const request = route.request();
      const topNavigation = request.isNavigationRequest() && request.frame().parentFrame() === null;
      try {
        if (topNavigation && !documentServed) {
          documentServed = true;
          await route.fulfill({ status: page.status, contentType: 'text/html; charset=utf-8', body: page.html });
          return;
        }
        const verdict = judgeSubrequest({ url: request.url(), method: request.method(), resourceType: request.resourceType(), topNavigation }, made, {
          inScope: policy.allowRedirect,
          maxRequests: render.maxRequestsPerPage,
        });
        if (!verdict.allow) {
          block(request.url(), verdict.reason);
          await route.abort('blockedbyclient');
          return;
        }
        made += 1;
        const resource = await fetchResource(this.transport, request.url(), policy, signal, () => true);
        if (resource.body === null) {
          block(resource.redirectBlocked ?? request.url(), 'out-of-scope');
          await route.abort('blockedbyclient');
          return;
        }
        await route.fulfill({ status: resource.status, headers: resource.contentType ? { 'content-type': resource.contentType } : {}, body: resource.body });
      } catch {
        // The fetch failed (or the page is gone): the browser sees a failed request.
        await route.abort('failed').catch(() => undefined);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = await this.browser?.catch(() => undefined);
    await browser?.close();
  }
}
