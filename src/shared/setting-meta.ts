/**
 * What the command line and the docs know about a crawl setting, kept beside its zod schema
 * so each fact is written once: the schema holds the type, bounds and default; `setting()`
 * adds the flag, the `--help` line and the docs' wording. The CLI's options
 * (src/cli/setting-flags.ts) and the tables of docs/configuration.md (`npm run docs:config`)
 * are made from these.
 *
 * A new setting is one entry in the schema, wrapped in `setting()`:
 *
 *     maxPages: setting(count(1, 100_000_000).default(10_000), {
 *       section: 'limits', flag: '--max-pages <n>', help: 'stop after this many URLs',
 *       doc: 'URLs processed in total ...',
 *     }),
 *
 * then `npm run docs:config`. Without `flag` it is set in the JSON only. How the flag's text
 * becomes the value follows from the schema: a boolean flag takes no value, an integer one is
 * parsed as an integer, an array one is repeatable, and a record one (`--header <Name: value>`)
 * is a repeatable name/value pair written as its placeholder shows. The fields of a nested
 * object take its section (`render: setting(renderSchema.optional(), { section: 'render' })`).
 * A setting the docs cannot list (no section, or neither `doc` nor `help`) makes
 * `npm run docs:config` and test/docs-config.test.ts fail, naming it.
 *
 * Plain data and zod only: the crawl schema is imported by workflow code.
 */
import { z } from 'zod';

/** The tables of docs/configuration.md, each a `<!-- generated:crawl-settings NAME -->` block. */
export const SETTING_SECTIONS = ['limits', 'fetching', 'politeness', 'discovery', 'content', 'render'] as const;
export type SettingSection = (typeof SETTING_SECTIONS)[number];

export interface SettingMeta {
  /** The docs table that lists it; the fields of a nested object (`render.*`) take their object's. */
  section?: SettingSection;
  /** The docs' Meaning column, in Markdown (one paragraph); `help` when absent. */
  doc?: string;
  /**
   * The CLI flag and its value placeholder, as commander spells them (`--max-pages <n>`); a
   * boolean has no placeholder. A record's placeholder is the form of one entry, and its
   * `=` or `:` separates name and value (`--header <Name: value>`).
   */
  flag?: string;
  /** What a boolean flag sets, when not `true`: `--ignore-robots` sets `respectRobots` to false. */
  flagSets?: false;
  /** The flag's `--help` line; its choices, repeatability and default are added to it. */
  help?: string;
  /** The docs' Type column, for a type the schema cannot say (`URL[]`, `duration`). */
  type?: string;
  /** The docs' Default column, for a default computed when the code runs (the version in the user agent). */
  shownDefault?: string;
  /** Set by the command's arguments instead of a flag; the name errors give them (`<seed-url...>`). */
  argument?: string;
  /** For a record of objects: what its keys are called, so the docs list its values' fields (`extract.<name>.type`). */
  entry?: string;
}

/** The metadata of the crawl settings. */
export const settingMeta = z.registry<SettingMeta>();

/**
 * The schema, described. A copy is described, so one schema reused by two settings
 * (`include` and `exclude`) gets two descriptions.
 */
export function setting<T extends z.ZodType>(schema: T, meta: SettingMeta): T {
  const described = schema.clone();
  settingMeta.add(described, meta);
  return described;
}
