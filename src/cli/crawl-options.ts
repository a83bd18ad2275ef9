/**
 * The crawl flags shared by `crawl`, `start`, `demo` and `schedule create`, and their
 * translation into the one crawl config schema. The flags are made from the schema's settings
 * (`setting()` in src/shared/setting-meta.ts); they are only parsed here, validation is the
 * schema's.
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { InvalidCrawlConfigError, parseCrawlConfig, type CrawlConfig, type CrawlInput } from '../shared/crawl-config';
import { choicesOf, CRAWL_SETTINGS, flagKind, isRepeatable, plainDefault, type CrawlSetting } from './crawl-settings';

/** Commander's values of the crawl flags, by attribute name (`--max-pages` is `maxPages`). */
export interface CrawlFlags {
  config?: string;
  [attribute: string]: unknown;
}

/** Commander's parser for integer flags (its error names the flag). */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('must be an integer.');
  return Number(value);
}

/** Commander's parser for decimal flags. */
function decimal(value: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number.');
  return n;
}

/** Commander's accumulator for repeatable flags. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * A repeatable `name<separator>value` flag, collected into a record (the schema validates
 * names and values). Its placeholder is the form (`<Name: value>`), whose first `=` or `:` is
 * the separator.
 */
function namedValues(flag: string) {
  const form = /<(.+)>/.exec(flag)?.[1] ?? '';
  const separator = /[=:]/.exec(form)?.[0] ?? '=';
  return (value: string, previous: Record<string, string> = {}): Record<string, string> => {
    const at = value.indexOf(separator);
    if (at <= 0) throw new InvalidArgumentError(`must be written as '${form}'.`);
    return { ...previous, [value.slice(0, at).trim()]: value.slice(at + 1).trim() };
  };
}

/** The settings a flag sets. */
const FLAG_SETTINGS = CRAWL_SETTINGS.filter((setting): setting is CrawlSetting & { meta: { flag: string } } => setting.meta.flag !== undefined);

/** The `--help` line: the setting's help, its choices, whether it repeats, and its default. */
function helpLine(setting: CrawlSetting): string {
  const choices = choicesOf(setting);
  const shown = flagKind(setting) === 'switch' ? undefined : plainDefault(setting);
  const notes = [
    isRepeatable(setting) ? 'repeatable' : undefined,
    shown === undefined ? undefined : flagKind(setting) === 'list' ? `replaces the default ${shown}` : `default ${shown}`,
  ].filter((note) => note !== undefined);
  return `${setting.meta.help ?? ''}${choices ? `: ${choices.join('|')}` : ''}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

function optionOf(setting: CrawlSetting & { meta: { flag: string } }): Option {
  const option = new Option(setting.meta.flag, helpLine(setting));
  const kind = flagKind(setting);
  if (kind === 'integer') option.argParser(integer);
  if (kind === 'number') option.argParser(decimal);
  if (kind === 'list') option.argParser(collect);
  if (kind === 'named-values') option.argParser(namedValues(setting.meta.flag));
  return option;
}

/** Each flag's commander option, for its attribute and long name. */
const FLAG_OPTIONS = FLAG_SETTINGS.map((setting) => ({ setting, option: optionOf(setting) }));

/** What the user types to set a setting, by its dotted path: `--max-pages`, or the seed arguments. */
const TYPED_AS = new Map<string, { name: string; namesEntries: boolean }>([
  ...CRAWL_SETTINGS.filter((setting) => setting.meta.argument !== undefined).map((setting) => [setting.path.join('.'), { name: setting.meta.argument ?? '', namesEntries: false }] as const),
  ...FLAG_OPTIONS.map(({ setting, option }) => [setting.path.join('.'), { name: option.long ?? option.flags, namesEntries: flagKind(setting) === 'named-values' }] as const),
]);

/**
 * The flag (or arguments) of the setting that holds `field`, or undefined. A repeatable
 * name=value flag names the entry too (`--header Host`, `--extract title.selector`).
 */
function typedName(field: string): string | undefined {
  const parts = field.split('.');
  for (let length = parts.length; length > 0; length--) {
    const typed = TYPED_AS.get(parts.slice(0, length).join('.'));
    if (typed === undefined) continue;
    const entry = parts.slice(length).join('.');
    return typed.namesEntries && entry !== '' ? `${typed.name} ${entry}` : typed.name;
  }
  return undefined;
}

export function addCrawlOptions(command: Command): Command {
  command.option('--config <file.json>', 'crawl config file: the same JSON as `temporal workflow start --input`; flags override it');
  for (const setting of FLAG_SETTINGS) command.addOption(optionOf(setting));
  return command;
}

/** The crawl input of a `--config` file: a JSON object, read as is (the schema validates it). */
function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--config ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--config ${file}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`--config ${file}: must be a JSON object of crawl settings`);
  return parsed as Record<string, unknown>;
}

/** The crawl fields the flags and seed arguments set (absent ones left out), nested as in the schema. */
function fieldsFromFlags(seeds: string[], flags: CrawlFlags): Record<string, unknown> {
  const fields: Record<string, unknown> = seeds.length > 0 ? { seeds } : {};
  for (const { setting, option } of FLAG_OPTIONS) {
    const value = flags[option.attributeName()];
    if (value === undefined) continue;
    const parents = setting.path.slice(0, -1).reduce<Record<string, unknown>>((parent, key) => (parent[key] ??= {}) as Record<string, unknown>, fields);
    parents[setting.path[setting.path.length - 1]] = setting.meta.flagSets ?? value;
  }
  return fields;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The config file's settings with the flags' over them; a nested object (`sitemaps`) is merged field by field. */
function mergeFlags(file: Record<string, unknown>, fromFlags: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...file };
  for (const [key, value] of Object.entries(fromFlags)) merged[key] = isObject(value) && isObject(file[key]) ? { ...file[key], ...value } : value;
  return merged;
}

/** The dotted paths of the settings the flags set (`maxPages`, `sitemaps.urls`). */
function flagPaths(fromFlags: Record<string, unknown>): string[] {
  return Object.entries(fromFlags).flatMap(([key, value]) => (isObject(value) ? Object.keys(value).map((sub) => `${key}.${sub}`) : [key]));
}

export class UsageError extends Error {
  readonly code = 'usage';
}

/** A URL as it may be shown in a message: any user:password@ replaced. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

/** Runs a parser of the crawl schema; its errors become usage errors (exit 2) that name what the user typed. */
export function validating<T>(parse: () => T, flagOf: (field: string) => string = (field) => field): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof InvalidCrawlConfigError) throw new UsageError(`${flagOf(err.field)}: ${err.reason}`);
    throw err;
  }
}

export interface CrawlRequest {
  /** What goes to the workflow: as the user wrote it, defaults left to the schema. */
  input: CrawlInput;
  config: CrawlConfig;
}

/**
 * The crawl the command line asks for: a config file (if any), the flags over it, and the
 * seed arguments (which replace the file's seeds when given), validated once. Errors name
 * what the user typed: the flag or seed argument, or else the config file and its field.
 */
export function crawlRequestFrom(seeds: string[], flags: CrawlFlags): CrawlRequest {
  const fromFlags = fieldsFromFlags(seeds, flags);
  const input = mergeFlags(flags.config === undefined ? {} : readConfigFile(flags.config), fromFlags) as CrawlInput;
  const setByFlags = flagPaths(fromFlags);
  const config = validating(
    () => parseCrawlConfig(input),
    (field) => {
      const path = setByFlags.find((flagged) => field === flagged || field.startsWith(`${flagged}.`));
      if (path === undefined && flags.config !== undefined) return `${flags.config}: ${field}`;
      if (field.startsWith('seeds.')) return `seed "${withoutCredentials(input.seeds[Number(field.slice(6))])}"`;
      return typedName(field) ?? field;
    },
  );
  return { input, config };
}
