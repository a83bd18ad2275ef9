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

export const FIELD_TYPES = ['text', 'attribute', 'html'] as const;

/** Field names become JSON keys and CSV column names (`fields.<name>`): keep them plain. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export const MAX_FIELDS = 50;

/** Why a selector does not compile, or undefined when it does. */
function selectorProblem(selector: string): string | undefined {
  try {
    compile(selector);
    return undefined;
  } catch (err) {
    return `invalid CSS selector "${selector.slice(0, 200)}": ${(err as Error).message}`;
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
    selector,
    type: z.enum(FIELD_TYPES).default('text'),
    /** The attribute to read when `type` is `attribute`. */
    attribute: z.string().min(1).max(256).optional(),
    /** Every match (an array), instead of the first match (a string or null). */
    list: z.boolean().default(false),
    /** Characters kept of each value; longer ones are cut, so a hostile page cannot bloat a record. */
    maxChars: z.number().int().min(1).max(100_000).default(1_000),
    /** Values kept of a list. */
    maxItems: z.number().int().min(1).max(10_000).default(100),
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

/** A crawl ID as the CLI and Temporal accept it (it names the previous crawl's store). */
const crawlId = z.string().min(1).max(256);

/** The content fields of the crawl schema, spread into it. */
export const contentFields = {
  /** Named fields extracted from every HTML page by CSS selector, stored in the record's `fields`. */
  extract: extractSchema.default({}),
  /** Keep the bodies of fetched HTML pages (gzipped WARC records under the data directory). */
  storeBodies: z.boolean().default(false),
  /** An earlier crawl to compare with: conditional requests, and a change kind per URL. */
  recrawlOf: crawlId.optional(),
};
