/**
 * Commander options made from the crawl settings that declare a `flag`
 * (src/shared/setting-meta.ts): how each flag's text is parsed, its `--help` line, where its
 * value goes in the crawl input, and which flag to name when a field is invalid.
 */
import { InvalidArgumentError, Option } from 'commander';
import { choicesOf, CRAWL_SETTINGS, flagKind, isRepeatable, plainDefault, type CrawlSetting } from './crawl-settings';

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

type FlagSetting = CrawlSetting & { meta: { flag: string } };

/** The settings a flag sets, in schema order. */
const FLAG_SETTINGS = CRAWL_SETTINGS.filter((setting): setting is FlagSetting => setting.meta.flag !== undefined);

/** The `--help` line: the setting's help, its choices, whether it repeats, and (when asked) its default. */
function helpLine(setting: CrawlSetting, showDefault: boolean): string {
  const choices = choicesOf(setting);
  const shown = showDefault && flagKind(setting) !== 'switch' ? plainDefault(setting) : undefined;
  const notes = [
    isRepeatable(setting) ? 'repeatable' : undefined,
    shown === undefined ? undefined : flagKind(setting) === 'list' ? `replaces the default ${shown}` : `default ${shown}`,
  ].filter((note) => note !== undefined);
  return `${setting.meta.help ?? ''}${choices ? `: ${choices.join('|')}` : ''}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

function optionOf(setting: FlagSetting, showDefault = true): Option {
  const option = new Option(setting.meta.flag, helpLine(setting, showDefault));
  const kind = flagKind(setting);
  if (kind === 'integer') option.argParser(integer);
  if (kind === 'number') option.argParser(decimal);
  if (kind === 'list') option.argParser(collect);
  if (kind === 'named-values') option.argParser(namedValues(setting.meta.flag));
  return option;
}

/** Each flag's commander option, for its attribute and long name. */
const FLAG_OPTIONS = FLAG_SETTINGS.map((setting) => ({ setting, option: optionOf(setting) }));

/** A new option for every crawl setting's flag (commander options belong to one command each). */
export function settingOptions(): Option[] {
  return FLAG_SETTINGS.map((setting) => optionOf(setting));
}

/**
 * The option of one top-level setting, for a command that changes it on a running crawl
 * (`set-limits`): there an absent flag leaves the value as it is, so no default is shown.
 */
export function changeOption(field: string): Option {
  const setting = FLAG_SETTINGS.find((candidate) => candidate.path.join('.') === field);
  if (setting === undefined) throw new Error(`crawl setting ${field} has no flag`);
  return optionOf(setting, false);
}

/** The crawl fields the flags set (absent ones left out), nested as in the schema. */
export function fieldsFromFlags(flags: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const { setting, option } of FLAG_OPTIONS) {
    const value = flags[option.attributeName()];
    if (value === undefined) continue;
    const parent = setting.path.slice(0, -1).reduce<Record<string, unknown>>((object, key) => (object[key] ??= {}) as Record<string, unknown>, fields);
    parent[setting.path[setting.path.length - 1]] = setting.meta.flagSets ?? value;
  }
  return fields;
}

/** What the user types to set a setting, by its dotted path: `--max-pages`, or the seed arguments. */
const TYPED_AS = new Map<string, { name: string; namesEntries: boolean }>([
  ...CRAWL_SETTINGS.flatMap((setting) => (setting.meta.argument === undefined ? [] : [[setting.path.join('.'), { name: setting.meta.argument, namesEntries: false }] as const])),
  ...FLAG_OPTIONS.map(({ setting, option }) => [setting.path.join('.'), { name: option.long ?? setting.meta.flag, namesEntries: flagKind(setting) === 'named-values' }] as const),
]);

/**
 * The flag (or arguments) of the setting that holds `field`, or undefined. A repeatable
 * name=value flag names the entry too (`--header Host`, `--extract title.selector`).
 */
export function flagOfField(field: string): string | undefined {
  const parts = field.split('.');
  for (let length = parts.length; length > 0; length--) {
    const typed = TYPED_AS.get(parts.slice(0, length).join('.'));
    if (typed === undefined) continue;
    const entry = parts.slice(length).join('.');
    return typed.namesEntries && entry !== '' ? `${typed.name} ${entry}` : typed.name;
  }
  return undefined;
}
