/**
 * The crawl settings as a list, in schema order: each with its place in the input, what
 * `setting()` says about it (src/shared/setting-meta.ts) and what its schema says (type,
 * bounds, default). The CLI's options and the docs tables are made from this list.
 */
import { z } from 'zod';
import { crawlConfigSchema } from '../shared/crawl-config';
import { settingMeta, type SettingMeta, type SettingSection } from '../shared/setting-meta';

/** A JSON Schema of one setting's value, as zod writes it. */
export type ValueSchema = z.core.JSONSchema.BaseSchema;

/** Whether a setting may be left out, and what it is then. */
export type Presence = { kind: 'required' } | { kind: 'optional' } | { kind: 'default'; value: unknown };

export interface CrawlSetting {
  /** Where it is in the input (`['sitemaps', 'urls']`); a record's keys are `<entry>`. */
  path: string[];
  meta: SettingMeta;
  /** Its own section, or the one of the object it is in. */
  section?: SettingSection;
  presence: Presence;
  /** Its value's type and bounds, the default left out. */
  value: ValueSchema;
}

/** Zod's wrappers around a setting's schema that say whether it may be left out. */
const PRESENCE_WRAPPERS = new Set(['default', 'prefault', 'optional']);

interface Unwrapped {
  schema: z.ZodType;
  presence: Presence;
  meta?: SettingMeta;
}

/** A setting's schema without its wrappers; the metadata is the outermost found on the way. */
function unwrap(schema: z.ZodType): Unwrapped {
  let presence: Presence = { kind: 'required' };
  let meta = settingMeta.get(schema);
  let inner = schema;
  while (PRESENCE_WRAPPERS.has(inner.def.type)) {
    const def = inner.def as z.core.$ZodDefaultDef | z.core.$ZodOptionalDef;
    if (presence.kind === 'required') presence = 'defaultValue' in def ? { kind: 'default', value: def.defaultValue } : { kind: 'optional' };
    inner = def.innerType as z.ZodType;
    meta ??= settingMeta.get(inner);
  }
  return { schema: inner, presence, meta };
}

/** The object schema behind a schema, through a `z.preprocess` (the compact extract field form). */
function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  if (schema instanceof z.ZodObject) return schema;
  if (schema instanceof z.ZodPipe) return objectOf(schema.out as z.ZodType);
  return undefined;
}

function valueSchemaOf(schema: z.ZodType): ValueSchema {
  // Refinements and transforms (a duration's parsing) have no JSON Schema: their input type stands for them.
  const value = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  delete value.$schema;
  return value;
}

function* settingsIn(shape: z.ZodRawShape, prefix: string[], section: SettingSection | undefined): Generator<CrawlSetting> {
  for (const [key, field] of Object.entries(shape)) {
    const path = [...prefix, key];
    const { schema, presence, meta = {} } = unwrap(field as z.ZodType);
    const own = meta.section ?? section;
    const nested = objectOf(schema);
    // An object of settings (`sitemaps`) is no setting itself: its fields are.
    if (nested !== undefined && meta.doc === undefined && meta.help === undefined) {
      yield* settingsIn(nested.shape, path, own);
      continue;
    }
    yield { path, meta, section: own, presence, value: valueSchemaOf(schema) };
    const entries = meta.entry !== undefined && schema instanceof z.ZodRecord ? objectOf(schema.valueType as z.ZodType) : undefined;
    if (entries !== undefined) yield* settingsIn(entries.shape, [...path, `<${meta.entry}>`], own);
  }
}

/** Every crawl setting, in schema order. */
export const CRAWL_SETTINGS: readonly CrawlSetting[] = [...settingsIn(crawlConfigSchema.shape, [], undefined)];

/** How the flag's text becomes the setting's value, from the value's JSON type. */
export type FlagKind = 'switch' | 'integer' | 'number' | 'list' | 'named-values' | 'text';

export function flagKind(setting: CrawlSetting): FlagKind {
  switch (setting.value.type) {
    case 'boolean':
      return 'switch';
    case 'integer':
      return 'integer';
    case 'number':
      return 'number';
    case 'array':
      return 'list';
    case 'object':
      return 'named-values';
    default:
      return 'text';
  }
}

/** A list or record flag is given once per value. */
export const isRepeatable = (setting: CrawlSetting): boolean => ['list', 'named-values'].includes(flagKind(setting));

/** The values of an enum setting, or undefined. */
export function choicesOf(setting: CrawlSetting): string[] | undefined {
  return setting.value.enum?.map(String);
}

/** The setting's default as a user would write it: `10000`, `text/html, application/xhtml+xml`; undefined when empty or none. */
export function plainDefault(setting: CrawlSetting): string | undefined {
  if (setting.presence.kind !== 'default') return undefined;
  const { value } = setting.presence;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.join(', ');
  if (typeof value === 'object' && value !== null) return Object.keys(value).length === 0 ? undefined : JSON.stringify(value);
  return String(value);
}
