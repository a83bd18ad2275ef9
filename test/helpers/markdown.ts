/**
 * Reading the project's Markdown: relative links, the anchors GitHub gives headings and fenced
 * code blocks, for checking that its documents point at files and sections that exist and that
 * their commands can be pasted as they are.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Directories that hold no project documents: dependencies, build output, local data. */
const NOT_DOCUMENTS = new Set(['node_modules', 'dist', 'test-output']);

interface ProseLine {
  text: string;
  number: number;
}

/** A line that opens or closes a fenced code block; an opening one may name the block's language. */
const FENCE = /^\s*(?:```|~~~)\s*(\S*)/;

/** The lines outside fenced code blocks, numbered from 1. */
function proseLines(markdown: string): ProseLine[] {
  const lines: ProseLine[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (FENCE.test(text)) fenced = !fenced;
    else if (!fenced) lines.push({ text, number: index + 1 });
  });
  return lines;
}

export interface CodeBlock {
  /** The line of its opening fence, from 1. */
  line: number;
  /** The language its fence names, or '' when none. */
  language: string;
  text: string;
}

/** The fenced code blocks of a document, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: CodeBlock | null = null;
  markdown.split('\n').forEach((text, index) => {
    const fence = FENCE.exec(text);
    if (fence && open === null) open = { line: index + 1, language: fence[1], text: '' };
    else if (fence && open !== null) {
      blocks.push(open);
      open = null;
    } else if (open !== null) open.text += `${text}\n`;
  });
  return blocks;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces made hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a document's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const repeats = seen.get(slug) ?? 0;
    seen.set(slug, repeats + 1);
    anchors.add(repeats === 0 ? slug : `${slug}-${repeats}`);
  }
  return anchors;
}

export interface MarkdownLink {
  line: number;
  target: string;
}

/** Inline links and images to paths in this repository (no scheme), outside code spans and blocks. */
export function relativeLinks(markdown: string): MarkdownLink[] {
  return proseLines(markdown).flatMap(({ text, number }) =>
    [...text.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
      .map((match) => match[1])
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .map((target) => ({ line: number, target })),
  );
}

/** Every Markdown file under `root`, skipping hidden directories and those of NOT_DOCUMENTS. */
export function markdownFiles(root: string): string[] {
  return readdirSync(root, { withFileTypes: true }).flatMap((entry) => {
    const path = join(root, entry.name);
    if (entry.isDirectory()) return entry.name.startsWith('.') || NOT_DOCUMENTS.has(entry.name) ? [] : markdownFiles(path);
    return entry.isFile() && entry.name.endsWith('.md') ? [path] : [];
  });
}

/** Why `target`, linked from `file`, does not resolve; null when it does. */
function linkProblem(file: string, target: string, anchorsOf: (path: string) => Set<string>): string | null {
  const [path, anchor] = target.split('#', 2);
  const linked = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
  if (!existsSync(linked)) return `no file ${path}`;
  if (anchor === undefined) return null;
  if (statSync(linked).isDirectory() || !linked.endsWith('.md')) return `#${anchor} on ${path}, which is no Markdown file`;
  return anchorsOf(linked).has(anchor) ? null : `no heading for #${anchor} in ${path || 'this file'}`;
}

/** One line per link in `files` that does not resolve: `<file>:<line>: <target>: <why>`, paths relative to `root`. */
export function brokenLinks(root: string, files: string[]): string[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (path: string): Set<string> => {
    if (!anchors.has(path)) anchors.set(path, headingAnchors(readFileSync(path, 'utf8')));
    return anchors.get(path) as Set<string>;
  };
  return files.flatMap((file) =>
    relativeLinks(readFileSync(file, 'utf8')).flatMap(({ line, target }) => {
      const problem = linkProblem(file, target, anchorsOf);
      return problem === null ? [] : [`${relative(root, file)}:${line}: ${target}: ${problem}`];
    }),
  );
}
