/**
 * The Temporal Web UI, in a real headless Chromium (Debian's package, driven by
 * playwright-core): a crawl can be found by its search attributes, and its page shows the
 * summary and live details crawlflow sets. Screenshots go to test-output/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startSyntheticSite, type SyntheticSite } from '../src/sites/synthetic-site';
import { startCrawl } from '../src/client/crawl-client';
import { projectRoot } from '../src/temporal/project-paths';
import { startTestTemporal, uniqueQueue, type TestTemporal } from './helpers/temporal';

const CHROMIUM = '/usr/bin/chromium';
const outputDir = join(projectRoot, 'test-output');

/** The visible text of the page and all its frames, once every one of `expected` appears (or 30 s pass). */
async function textOfAllFrames(page: Page, expected: string[]): Promise<string> {
  let text = '';
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
    const texts = await Promise.all(page.frames().map((frame) => frame.locator('body').innerText().catch(() => '')));
    text = texts.join('\n');
    if (expected.every((part) => text.includes(part))) break;
  }
  return text;
}

describe('Temporal Web UI in Chromium', () => {
  let env: TestTemporal;
  let site: SyntheticSite;
  let browser: Browser;
  const queue = uniqueQueue('web-ui');

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is installed by .ci/run (Debian package chromium)`);
    env = await startTestTemporal({ webUi: true });
    await env.startWorker(queue);
    site = await startSyntheticSite({ pages: 200 });
    mkdirSync(outputDir, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // No background traffic of Chromium's own: this machine's network is loopback only.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await env?.close();
  });

  it('finds the crawl by search attribute and shows its summary and details', async () => {
    const handle = await startCrawl(env.client, 'web-ui-crawl', { seeds: [site.urlOf(0)], maxPages: 50 }, queue);
    const summary = await handle.result();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      const query = encodeURIComponent(`CrawlStatus="${summary.status}" AND PagesCrawled=${summary.totals.processed}`);
      await page.goto(`${env.server.uiUrl}/namespaces/default/workflows?query=${query}`);
      await page.getByText('web-ui-crawl').first().waitFor({ timeout: 30_000 });
      const listShot = join(outputDir, 'web-ui-crawl-list.png');
      await page.screenshot({ path: listShot, fullPage: true });

      await page.goto(`${env.server.uiUrl}/namespaces/default/workflows/web-ui-crawl`);
      // The timeline labels each batch with its activity summary.
      await page.getByText(`fetchBatch • ${new URL(site.origin).host} · batch 1 · up to`).first().waitFor({ timeout: 30_000 });
      const timelineShot = join(outputDir, 'web-ui-crawl-timeline.png');
      await page.screenshot({ path: timelineShot, fullPage: true });

      await page.getByText('User Metadata', { exact: true }).click();
      // Summary and details are Markdown, which the UI renders in sandboxed iframes.
      const text = await textOfAllFrames(page, [`crawl of ${site.urlOf(0)}`, 'URLs 50 (fetched 50', 'max-pages-reached · run 1']);
      assert.ok(text.includes(`crawl of ${site.urlOf(0)}`), 'the static summary is shown');
      assert.ok(text.includes('URLs 50 (fetched 50, errors 0, skipped 0)'), 'the live details are shown');
      const detailShot = join(outputDir, 'web-ui-crawl-details.png');
      await page.screenshot({ path: detailShot, fullPage: true });
      for (const shot of [listShot, timelineShot, detailShot]) assert.ok(statSync(shot).size > 10_000, `${shot} saved`);
    } finally {
      await page.close();
    }
  });
});
