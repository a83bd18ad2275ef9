/**
 * Named fields pulled out of a page by CSS selector. The selectors are compiled once per
 * crawl (`compileExtractor`), then run on a cheerio document of each page. The link scan
 * (html-page.ts) builds no document, so a crawl that extracts nothing never loads cheerio:
 * workers load this module with `loadExtractor` (load-extractor.ts).
 *
 * Values are bounded: each to its field's `maxChars`, each list to `maxItems`, and a whole
 * page's values to `MAX_PAGE_FIELD_CHARS`, so a hostile page cannot blow up its record.
 */
import { load, type CheerioAPI } from 'cheerio';
import { isTag, isText, type AnyNode, type Element } from 'domhandler';
import { compile, selectAll, selectOne } from 'css-select';
import type { ExtractField } from '../shared/content-config';
import { cutText } from './cut-text';

export type FieldValue = string | string[] | null;
export type ExtractedFields = Record<string, FieldValue>;
/** A page's fields, from its HTML. */
export type Extractor = (html: string) => ExtractedFields;

/** All of one page's values together, in characters. */
export const MAX_PAGE_FIELD_CHARS = 1_000_000;

interface CompiledField {
  name: string;
  query: ReturnType<typeof compile<AnyNode, Element>>;
  field: ExtractField;
}

/** Phrasing elements, whose text runs on into their neighbours'; every other element's text is set apart. */
const INLINE = new Set(
  'a abbr b bdi bdo cite code data del dfn em font i ins kbd label mark q s samp small span strike strong sub sup time tt u var wbr'.split(' '),
);
/** Elements whose content is no text of the page. */
const HIDDEN = new Set(['script', 'style', 'template']);
/** Marks, on the walk's stack, the end of an element whose text is set apart. */
const APART = Symbol('apart');

/**
 * The element's text in one line, as a browser lays it out (innerText) rather than as its text
 * nodes run together (textContent): blocks, list items, table cells and line breaks are set
 * apart by a space (`<p>10 Main St</p><p>Springfield</p>` is `10 Main St Springfield`, not
 * `10 Main StSpringfield`), scripts and styles left out, whitespace collapsed. The walk keeps
 * its own stack: a hostile page nests elements deeper than the call stack goes.
 */
function innerText(element: Element): string {
  let text = '';
  const stack: Array<AnyNode | typeof APART> = [...element.children].reverse();
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next === APART) text += ' ';
    else if (isText(next)) text += next.data;
    else if (isTag(next) && !HIDDEN.has(next.name)) {
      if (!INLINE.has(next.name)) {
        text += ' ';
        stack.push(APART);
      }
      for (let i = next.children.length - 1; i >= 0; i--) stack.push(next.children[i]);
    }
  }
  return text.replace(/\s+/g, ' ').trim();
}

function valueOf($: CheerioAPI, element: Element, field: ExtractField): string | null {
  switch (field.type) {
    case 'text':
      return innerText(element);
    case 'html':
      return $(element).html() ?? '';
    case 'attribute':
      // The HTML parser lowercases attribute names, as selectors match them: `@SRC` is `src`.
      return element.attribs[(field.attribute ?? '').toLowerCase()] ?? null;
  }
}

/** Builds the extractor of a crawl's `extract` setting; undefined when it names no field. */
export function compileExtractor(spec: Readonly<Record<string, ExtractField>>): Extractor | undefined {
  const fields: CompiledField[] = Object.entries(spec).map(([name, field]) => ({ name, field, query: compile<AnyNode, Element>(field.selector) }));
  if (fields.length === 0) return undefined;
  return (html) => {
    const $ = load(html, { xml: { xmlMode: false, decodeEntities: true } });
    const root: AnyNode[] = $.root().toArray();
    let budget = MAX_PAGE_FIELD_CHARS;
    const cut = (value: string | null, maxChars: number): string | null => {
      if (value === null) return null;
      const kept = cutText(value, Math.min(maxChars, budget));
      budget -= kept.length;
      return kept;
    };
    const valueOfField = ({ query, field }: CompiledField): FieldValue => {
      if (!field.list) {
        const element = selectOne<AnyNode, Element>(query, root);
        return element === null ? null : cut(valueOf($, element, field), field.maxChars);
      }
      const values: string[] = [];
      for (const element of selectAll<AnyNode, Element>(query, root)) {
        if (values.length >= field.maxItems || budget <= 0) break;
        const value = cut(valueOf($, element, field), field.maxChars);
        if (value !== null) values.push(value);
      }
      return values;
    };
    const result: ExtractedFields = {};
    for (const compiled of fields) result[compiled.name] = guarded(compiled.field, () => valueOfField(compiled));
    return result;
  };
}

/**
 * A field's value, or no value (null, or an empty list) where the selector engine or the HTML
 * serializer, which recurse once per level, run out of stack on a page nested thousands deep
 * (below html-page.ts's MAX_NESTING_DEPTH, which refuses deeper ones). The error would fail the
 * page's whole batch, retried until the crawl gave up on it, for the sake of one field.
 */
function guarded(field: ExtractField, value: () => FieldValue): FieldValue {
  try {
    return value();
  } catch (err) {
    if (err instanceof RangeError) return field.list ? [] : null;
    throw err;
  }
}
