/**
 * What a crawler needs from an HTML page: title, outgoing links (absolute, normalized,
 * de-duplicated, capped), canonical URL and robots directives from `<meta>` and
 * X-Robots-Tag. Read in one pass of htmlparser2's tokenizer, lenient with broken markup and
 * building no tree: a DOM and a selector pass per item cost more than the rest of a page's
 * parsing (bench/PROFILE.md). A crawl that extracts fields builds a cheerio document too, for
 * its selectors (extract-fields.ts), and only then.
 *
 * A DOM-building parser is quadratic in nesting depth (htmlparser2's open-element stack and
 * css-select's traversal shift and unshift arrays): 100,000 nested `<div>`s, 500 KB, took
 * 21 s of event-loop time, starving every heartbeat of the worker. So a large page is first
 * measured with the same linear tokenizer, and one nested deeper than any real page is
 * refused (`HtmlTooDeepError`) before cheerio could see it. Small pages cannot nest deep
 * enough to matter and skip the measurement.
 */
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import type { TokenizerCallbacks } from 'htmlparser2';
import { normalizeUrl, resolveUrl, type UrlResolver } from '../policy/normalize-url';
import { ScanTokenizer } from './scan-tokenizer';
import { cutText } from './cut-text';
import type { ExtractedFields, Extractor } from './extract-fields';

export interface ParsedPage {
  title: string | null;
  links: string[];
  /** The links as the parsed URLs whose `href`s they are, in the same order: what scope checks read. */
  linkUrls: URL[];
  canonical: string | null;
  noindex: boolean;
  nofollow: boolean;
  /** The crawl's extracted fields (empty when it extracts none). */
  fields: ExtractedFields;
}

export interface ParseLimits {
  maxLinks: number;
  maxUrlLength: number;
  /** The crawl's compiled `extract` setting, run on the same document. */
  extractor?: Extractor;
}

/** A longer title is cut here: it is a label, and a hostile page could make it megabytes. */
const MAX_TITLE_CHARS = 1_024;
/** Below this many characters a page cannot nest deep enough to be slow; above, it is measured. */
const MEASURE_DEPTH_ABOVE_CHARS = 64 * 1024;
/** Far deeper than real pages nest; at this depth cheerio still parses in well under a second. */
export const MAX_NESTING_DEPTH = 10_000;
/** Elements that never take children, and elements whose end tag pages routinely omit. */
const NO_DEPTH = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'p', 'li', 'dt', 'dd', 'option', 'tr', 'td', 'th']);
const META_ROBOTS_NAMES = new Set(['robots', 'crawlflow']);

export class HtmlTooDeepError extends Error {
  readonly code = 'too-deep';
}

const ignore = (): void => undefined;
/** Every tokenizer event, ignored: a pass listens only to the events it reads. */
const NO_EVENTS: TokenizerCallbacks = {
  onattribdata: ignore, onattribentity: ignore, onattribend: ignore, onattribname: ignore, oncdata: ignore, onclosetag: ignore, oncomment: ignore, ondeclaration: ignore,
  onend: ignore, onopentagend: ignore, onopentagname: ignore, onprocessinginstruction: ignore, onselfclosingtag: ignore, ontext: ignore, ontextentity: ignore,
};

/**
 * One pass of htmlparser2's tokenizer over `html` with `events` (their indices are into
 * `html`), character references left as written; text is skipped natively (scan-tokenizer.ts).
 */
function tokenize(html: string, events: Partial<TokenizerCallbacks>): void {
  const tokenizer = new ScanTokenizer({ decodeEntities: false }, { ...NO_EVENTS, ...events });
  tokenizer.write(html);
  tokenizer.end();
}

/** The lower-cased name between `start` and `end` of `html` (tag and attribute names are case-insensitive). */
const nameAt = (html: string, start: number, end: number): string => html.slice(start, end).toLowerCase();

/** The deepest element nesting of `html`, by a linear pass over the tokenizer's tag events. */
function nestingDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  let counted = false;
  tokenize(html, {
    onopentagname(start, end) {
      counted = !NO_DEPTH.has(nameAt(html, start, end));
      if (counted) deepest = Math.max(deepest, ++depth);
    },
    onselfclosingtag() {
      if (counted) depth -= 1;
    },
    onclosetag(start, end) {
      if (depth > 0 && !NO_DEPTH.has(nameAt(html, start, end))) depth -= 1;
    },
  });
  return deepest;
}

function robotsDirectives(values: Array<string | null | undefined>): Set<string> {
  const directives = new Set<string>();
  for (const value of values) {
    for (const part of value?.toLowerCase().split(',') ?? []) {
      // X-Robots-Tag may name a user agent first ("googlebot: noindex"); keep the directive.
      const directive = part.split(':').pop()?.trim();
      if (directive) directives.add(directive);
    }
  }
  return directives;
}

/** What one pass over a page finds, as written: hrefs are resolved once the base is known. */
interface PageMarkup {
  baseHref: string | undefined;
  hrefs: string[];
  canonicalHref: string | undefined;
  metaRobots: string[];
  title: string | undefined;
}

/** An attribute's value as written, its character references decoded as a DOM parser decodes them. */
function attributeValue(raw: string): string;
function attributeValue(raw: string | undefined): string | undefined;
function attributeValue(raw: string | undefined): string | undefined {
  return raw !== undefined && raw.includes('&') ? decodeHTMLAttribute(raw) : raw;
}

/** The elements whose attributes the scan reads; every other tag's are skipped unread. */
const READ_ELEMENTS = new Set(['a', 'area', 'link', 'meta', 'base', 'title']);
/** The longest name in READ_ELEMENTS: a longer tag name is not looked at. */
const LONGEST_READ_NAME = Math.max(...[...READ_ELEMENTS].map((name) => name.length));

/** What the scan keeps of one open tag of READ_ELEMENTS, as a DOM parser's attributes would be. */
function keepTag(found: PageMarkup, name: string, attribs: Readonly<Record<string, string>>): void {
  if ((name === 'a' || name === 'area') && attribs.href !== undefined) {
    found.hrefs.push(attributeValue(attribs.href));
  } else if (name === 'link') {
    if (found.canonicalHref === undefined && attribs.href !== undefined && isCanonicalRel(attributeValue(attribs.rel))) found.canonicalHref = attributeValue(attribs.href);
  } else if (name === 'meta') {
    const metaName = attributeValue(attribs.name);
    if (attribs.content !== undefined && metaName !== undefined && META_ROBOTS_NAMES.has(metaName.trim().toLowerCase())) found.metaRobots.push(attributeValue(attribs.content));
  } else if (name === 'base') {
    found.baseHref ??= attributeValue(attribs.href);
  }
}

/**
 * The first `<base href>`, every `<a href>` and `<area href>` in document order, the first
 * `<link rel~=canonical href>`, robots `<meta>` contents and the first `<title>`'s text: what
 * `base[href]`, `a[href], area[href]`, `link[rel~="canonical" i][href]`, `meta[name][content]`
 * and `title` select in a DOM.
 *
 * It reads htmlparser2's tokenizer, not its Parser: the Parser builds an attribute object and
 * a text string for every tag and text of the page and keeps an element stack, which none of
 * this needs; here only the tags above have their attributes read (tag and attribute names
 * lower-cased, the first of repeated attributes kept, as the Parser does), and only the
 * title's text is sliced.
 *
 * The tokenizer leaves character references as written and only the values kept are decoded,
 * by HTML's rules (entities' attribute and text modes: in an attribute, a reference without
 * its `;` stays as written before a letter, a digit or `=`). Decoding while tokenizing checks
 * every character of the text for `&`, where the undecoded scan jumps from one `<` to the
 * next: about half the time of a page's scan.
 */
function scanMarkup(html: string): PageMarkup {
  const found: PageMarkup = { baseHref: undefined, hrefs: [], canonicalHref: undefined, metaRobots: [], title: undefined };
  let titleText: string[] | undefined;
  /** The open tag being read when it is one of READ_ELEMENTS, and its attributes so far. */
  let tag: string | null = null;
  let attribs: Record<string, string> = {};
  let attribName = '';
  let attribValue = '';
  const endOpenTag = (): void => {
    if (tag === 'title') titleText ??= found.title === undefined ? [] : undefined;
    else if (tag !== null) keepTag(found, tag, attribs);
    tag = null;
  };
  tokenize(html, {
    onopentagname(start, end) {
      const name = end - start <= LONGEST_READ_NAME ? nameAt(html, start, end) : '';
      tag = READ_ELEMENTS.has(name) ? name : null;
      if (tag !== null) attribs = {};
    },
    onattribname(start, end) {
      if (tag !== null) attribName = nameAt(html, start, end);
    },
    onattribdata(start, end) {
      if (tag !== null) attribValue += html.slice(start, end);
    },
    onattribend() {
      if (tag !== null && !Object.hasOwn(attribs, attribName)) attribs[attribName] = attribValue;
      attribValue = '';
    },
    onopentagend: endOpenTag,
    onselfclosingtag: endOpenTag,
    ontext(start, end) {
      titleText?.push(html.slice(start, end));
    },
    onclosetag(start, end) {
      if (titleText === undefined || found.title !== undefined || nameAt(html, start, end) !== 'title') return;
      found.title = decodeHTML(titleText.join(''));
      titleText = undefined;
    },
  });
  // A title never closed runs to the end of the document, as a DOM parser reads it.
  if (found.title === undefined && titleText !== undefined) found.title = decodeHTML(titleText.join(''));
  return found;
}

function isCanonicalRel(rel: string | undefined): boolean {
  return rel !== undefined && rel.toLowerCase().split(/[\t\n\f\r ]+/).includes('canonical');
}

/** Links and the canonical are resolved with `resolve`: the crawl's normalization rules. */
export function parseHtmlPage(
  html: string,
  pageUrl: string,
  robotsHeader: string | null,
  limits: ParseLimits,
  resolve: UrlResolver = resolveUrl,
): ParsedPage {
  if (html.length > MEASURE_DEPTH_ABOVE_CHARS && nestingDepth(html) > MAX_NESTING_DEPTH) {
    throw new HtmlTooDeepError(`elements nested deeper than ${MAX_NESTING_DEPTH}`);
  }
  const markup = scanMarkup(html);
  // The base keeps its path as written: a trailing-slash rule must not change what relative links resolve to.
  // Parsed once: every link is resolved against it.
  const base = new URL((markup.baseHref && normalizeUrl(markup.baseHref, pageUrl)) || pageUrl);

  const links = new Map<string, URL>();
  for (const href of markup.hrefs) {
    if (links.size >= limits.maxLinks) break;
    const link = resolve(href, base);
    if (link === undefined) continue;
    const key = link.href;
    if (key.length <= limits.maxUrlLength && !links.has(key)) links.set(key, link);
  }

  const canonical = markup.canonicalHref ? resolve(markup.canonicalHref, base)?.href : undefined;
  const directives = robotsDirectives([...markup.metaRobots, robotsHeader]);
  const title = cutText((markup.title ?? '').replace(/\s+/g, ' ').trim(), MAX_TITLE_CHARS);

  return {
    title: title || null,
    links: [...links.keys()],
    linkUrls: [...links.values()],
    canonical: canonical !== undefined && canonical.length <= limits.maxUrlLength ? canonical : null,
    noindex: directives.has('noindex') || directives.has('none'),
    nofollow: directives.has('nofollow') || directives.has('none'),
    fields: limits.extractor?.(html) ?? {},
  };
}
