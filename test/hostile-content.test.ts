/**
 * Hostile content in real crawls (crawlSession on a dev server): missing and wrong Content-Types, binary data
 * labelled as HTML, legacy and bogus charsets, malformed HTML, a 100,000-link page, a page
 * nested 200,000 elements deep, and robots directives in <meta> and X-Robots-Tag.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostileFixture } from './helpers/hostile-site';

describe('hostile content', () => {
  const { site, crawler } = hostileFixture();

  describe('content types', () => {
    it('a page without Content-Type is parsed as HTML', async () => {
      const record = await crawler.record(site.url('/content/no-type'));
      assert.equal(record.contentType, null);
      assert.equal(record.title, 'untyped');
      assert.deepEqual(record.links, [site.url('/untyped-link')]);
    });

    it('HTML labelled text/plain is recorded but not parsed', async () => {
      const record = await crawler.record(site.url('/content/text-plain'));
      assert.equal(record.status, 200);
      assert.equal(record.contentType, 'text/plain');
      assert.equal(record.title, null);
      assert.equal(record.skipped, 'content-type', 'text/plain is not in the default allowedContentTypes');
      assert.deepEqual(record.links, []);
    });

    it("binary data labelled text/html, or unlabelled, is 'bad-content'", async () => {
      for (const path of ['/content/png-as-html', '/content/pdf-as-html', '/content/png-untyped']) {
        const record = await crawler.record(site.url(path));
        assert.equal(record.error, 'bad-content', path);
      }
    });
  });

  describe('charsets', () => {
    const titles: Array<[string, string]> = [
      ['/charset/shift-jis', '日本'],
      ['/charset/gbk-meta', '你好'],
      ['/charset/windows-1252', '€ “q” é'],
      ['/charset/latin1-label', '“q”'],
      ['/charset/unknown-label', 'naïve ✓'],
      ['/charset/bogus-meta', 'naïve ✓'],
      ['/charset/utf16-bom', 'wide ✓'],
    ];
    for (const [path, title] of titles) {
      it(`${path.split('/').pop()} decodes to ${JSON.stringify(title)}`, async () => {
        assert.equal((await crawler.record(site.url(path))).title, title);
      });
    }
  });

  describe('HTML', () => {
    it('malformed markup: finds what a browser would, skips scripts, comments and unusable hrefs', async () => {
      const record = await crawler.record(site.url('/html/malformed'));
      assert.equal(record.error, null);
      assert.equal(record.title, 'Broken & <b>bold', 'a title is raw text');
      const base = (path: string) => site.url(`/base/${path}`);
      assert.deepEqual(record.links, [base('unquoted'), site.url('/three?x=1&y=2'), site.url('/nested'), site.url('/in-table'), site.url('/after-script'), site.url('/after-comment')]);
    });

    it('a 100,000-link page is capped at maxLinksPerPage', async () => {
      const record = await crawler.record(site.url('/html/many-links'), { maxLinksPerPage: 1_000 });
      assert.equal(record.links.length, 1_000);
      assert.equal(record.links[999], site.url('/p/999'));
    });

    it('a page nested 200,000 elements deep is refused as bad-content before a tree is built', async () => {
      const record = await crawler.record(site.url('/html/deep'));
      assert.equal(record.error, 'bad-content');
      assert.equal(record.status, 200);
      assert.deepEqual(record.links, []);
    });

    it('a large page of real shape (unclosed <li>, <p>, void elements) is not mistaken for a deep one', async () => {
      const record = await crawler.record(site.url('/html/long-list'), { maxLinksPerPage: 50_000 });
      assert.equal(record.error, null);
      assert.equal(record.links.length, 20_000);
    });
  });

  describe('robots directives', () => {
    const crawlFrom = (path: string) => crawler.crawl({ seeds: [site.url(path)], maxDepth: 1 });

    it('<meta name="robots" content="nofollow">: links recorded, not followed', async () => {
      const records = await crawlFrom('/html/meta-nofollow');
      assert.deepEqual(records.map((record) => record.url), [site.url('/html/meta-nofollow')]);
      assert.deepEqual(records[0].links, [site.url('/followed-1'), site.url('/followed-2')], JSON.stringify(records[0]));
      assert.equal(site.seen('/followed-1'), 0);
    });

    it('X-Robots-Tag: nofollow is obeyed like the <meta> tag', async () => {
      const records = await crawlFrom('/html/x-robots-nofollow');
      assert.equal(records.length, 1);
      assert.equal(site.seen('/followed-3'), 0);
    });

    it('X-Robots-Tag: noindex (in the second of two headers) is recorded; links are still followed', async () => {
      const records = await crawlFrom('/html/x-robots-noindex');
      assert.equal(records[0].noindex, true);
      assert.deepEqual(records.map((record) => record.url), [site.url('/html/x-robots-noindex'), site.url('/followed-4')]);
    });
  });
});
