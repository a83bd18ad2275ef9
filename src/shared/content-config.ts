/**
 * The crawl settings about page content: named fields extracted by CSS selector, raw bodies
 * kept for later (as WARC records), and an incremental recrawl of an earlier crawl. They are
 * part of the one crawl schema (`crawl-config.ts`), so every boundary validates them the same
 * way, including `temporal workflow start --input`: a selector that does not compile fails
 * the crawl at once with the field's name.
 *
 * Selectors are compiled with css-select, the engine cheerio itself uses; it is pure
 * JavaScript, so the workflow sandbox can run this check too.
 */
import { compile } from 'css-select';
import { z } from 'zod';
import { setting } from './setting-meta';
import { crawlIdProblem } from './crawl-id';

export const FIELD_TYPES = ['text', 'attribute', 'html'] as const;

/** Field names become JSON keys and CSV column names (`fields.<name>`): keep them plain. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export const MAX_FIELDS = 50;

/**
 * Whether `selector` has an `@` outside strings, brackets and parentheses, unescaped, which no
 * CSS selector has. css-select takes `@src` for an element name, so a compact field whose
 * attribute the compact form does not take (`img @1x`, `h1 @src @alt`) would compile and never
 * match: its value would be null on every page, with no word of why.
 */
function hasStrayAt(selector: string): boolean {
  let quote: string | undefined;
  let depth = 0;
  for (let i = 0; i < selector.length; i++) {
    const char = selector[i];
    if (char === '\\') i++;
    else if (quote !== undefined) quote = char === quote ? undefined : quote;
    else if (char === '"' || char === "'") quote = char;
    else if (char === '[' || char === '(') depth++;
    else if (char === ']' || char === ')') depth--;
    else if (char === '@' && depth === 0) return true;
  }
  return false;
}

/** Why a selector does not compile, or undefined when it does. */
function selectorProblem(selector: string): string | undefined {
  const invalid = `invalid CSS selector "${selector.slice(0, 200)}"`;
  if (hasStrayAt(selector)) return `${invalid}: a stray "@" (an attribute is read by ending the field with one " @name", the name starting with a letter, _ or :)`;
  try {
    compile(selector);
    return undefined;
  } catch (err) {
    return `${invalid}: ${(err as Error).message}`;
  }
}

const selector = z
  .string()
  .trim()
  .min(1, 'must be a CSS selector')
  .max(1_000)
  .superRefine((value, ctx) => {
    const problem = selectorProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

const fieldObject = z
  .object({
    selector: setting(selector, {
      type: 'CSS selector',
      doc:
        'CSS Selectors Level 4, as cheerio runs it (css-select), plus `:contains()`. jQuery positional pseudos (`:first`, `:eq()`) are not supported. ' +
        'The selector is compiled when the crawl starts, and one that does not compile is an error.',
    }),
    type: setting(z.enum(FIELD_TYPES).default('text'), {
      doc: '`text`: the text as a browser shows it on one line (innerText): blocks, list items, table cells and line breaks set apart by a space, scripts and styles left out, whitespace collapsed and trimmed. `attribute`: the value of `attribute`. `html`: the inner HTML.',
    }),
    attribute: setting(z.string().min(1).max(256).optional(), {
      doc: 'The attribute to read: required with `type: attribute`, and not allowed with the other types.',
    }),
    list: setting(z.boolean().default(false), {
      doc: '`true`: an array with the value of every match (elements that lack the attribute are left out). `false`: the first match\'s value, or `null` when nothing matches.',
    }),
    maxChars: setting(z.number().int().min(1).max(100_000).default(1_000), {
      doc: 'Each value is cut to this many characters, so a hostile page cannot bloat a record.',
    }),
    maxItems: setting(z.number().int().min(1).max(10_000).default(100), { doc: 'A list keeps at most this many values.' }),
  })
  .strict()
  .superRefine((field, ctx) => {
    if (field.type === 'attribute' && field.attribute === undefined) {
      ctx.addIssue({ code: 'custom', path: ['attribute'], message: "is required when type is 'attribute'" });
    }
    if (field.type !== 'attribute' && field.attribute !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['attribute'], message: "is only allowed when type is 'attribute'" });
    }
  });

/** Compact form: `"h1"` is the text of the first match, `"a.next @href"` an attribute of it. */
const COMPACT_ATTRIBUTE = /^(.*\S)\s+@([A-Za-z_:][-A-Za-z0-9_:.]*)$/;

function expandCompact(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = COMPACT_ATTRIBUTE.exec(value.trim());
  return match ? { selector: match[1], type: 'attribute', attribute: match[2] } : { selector: value };
}

/** Either form; errors name the object form's property (`extract.title.selector: ...`). */
const field = z.preprocess(expandCompact, fieldObject);

export type ExtractField = z.output<typeof fieldObject>;

export const extractSchema = z.record(z.string(), field).superRefine((fields, ctx) => {
  const names = Object.keys(fields);
  if (names.length > MAX_FIELDS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_FIELDS} fields` });
  for (const name of names.filter((candidate) => !FIELD_NAME.test(candidate))) {
    ctx.addIssue({ code: 'custom', path: [name], message: 'field names are letters, digits, _ and -, starting with a letter or _ (at most 64)' });
  }
});

/** An earlier crawl's ID (it names that crawl's store), which crawl-id.ts says what may be. */
const crawlId = z
  .string()
  .min(1)
  .superRefine((id, ctx) => {
    const problem = crawlIdProblem(id);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/** The content fields of the crawl schema, spread into it. */
export const contentFields = {
  extract: setting(extractSchema.default({}), {
    section: 'content',
    flag: '--extract <name=selector>',
    help: 'a field to extract from every page: name=css-selector, or name=css-selector @attribute',
    type: 'object: field name → field',
    entry: 'name',
    doc:
      "Named fields taken from every HTML page by CSS selector and stored in the record's `fields`. A field is a string or an object: " +
      'the compact string `"h1"` is the text of the first match, `"img.hero @src"` an attribute of the first match, and the object form has the fields below. ' +
      "`--extract` sets or overrides one field of the file's `extract`.",
  }),
  storeBodies: setting(z.boolean().default(false), {
    section: 'content',
    flag: '--store-bodies',
    help: 'keep the bodies of fetched HTML pages as WARC records (for `results --format warc`)',
    doc: 'Keep the bodies of fetched HTML pages as gzipped WARC records, with every redirect that led to them (see [Where bodies go](extraction-recrawl-exports.md#where-bodies-go)). `results --format warc` needs them.',
  }),
  recrawlOf: setting(crawlId.optional(), {
    section: 'content',
    flag: '--recrawl-of <crawl-id>',
    help: 'compare with an earlier crawl: conditional requests, new/changed/unchanged/gone per URL',
    type: 'crawl ID',
    doc: 'Make this crawl an incremental recrawl of an earlier crawl in the same data directory: conditional requests, and a change kind for every URL.',
  }),
};
