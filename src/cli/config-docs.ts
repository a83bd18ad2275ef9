/**
 * The generated tables of docs/configuration.md: each block between
 * `<!-- generated:crawl-settings SECTION -->` and `<!-- /generated -->` becomes the table of
 * that section's settings, in schema order, the `<!-- generated:record-fields -->` block
 * the table of page record fields, from their declaration (src/store/record-fields.ts), and
 * the `<!-- generated:host-overrides -->` block the fields a `hosts` override may set.
 * `npm run docs:config` rewrites the file, and test/docs-config.test.ts fails when the
 * committed one differs from what this makes.
 */
import { SETTING_SECTIONS, type SettingSection } from '../shared/setting-meta';
import { hostOverrideSchema } from '../shared/politeness-config';
import { RECORD_FIELDS } from '../store/record-fields';
import { CRAWL_SETTINGS, flagKind, isRepeatable, type CrawlSetting, type ValueSchema } from './crawl-settings';

export const CONFIG_DOCS = 'docs/configuration.md';
export const REGENERATE_CONFIG_DOCS = 'npm run docs:config';

const BLOCK = /<!-- generated:crawl-settings (\S+) -->\n[\s\S]*?<!-- \/generated -->/g;
const RECORD_BLOCK = /<!-- generated:record-fields -->\n[\s\S]*?<!-- \/generated -->/g;
const OVERRIDE_BLOCK = /<!-- generated:host-overrides -->\n[\s\S]*?<!-- \/generated -->/g;

/** 100000000 as 100,000,000. */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

function rangeText(value: ValueSchema): string {
  const { minimum, maximum, exclusiveMinimum } = value;
  if (minimum !== undefined && maximum !== undefined) return `${grouped(minimum)}–${grouped(maximum)}`;
  const lower = exclusiveMinimum !== undefined ? `> ${grouped(exclusiveMinimum as number)}` : minimum !== undefined ? `≥ ${grouped(minimum)}` : undefined;
  return [lower, maximum === undefined ? undefined : `≤ ${grouped(maximum)}`].filter((part) => part !== undefined).join(', ');
}

/** A type as the schema says it: `integer 1–512`, `` `host` | `domain` ``, `string[]`. */
function schemaTypeText(value: ValueSchema): string {
  if (value.enum !== undefined) return value.enum.map((option) => `\`${String(option)}\``).join(' | ');
  if (Array.isArray(value.type)) return value.type.join(' or ');
  switch (value.type) {
    case 'integer':
    case 'number':
      return `${value.type} ${rangeText(value)}`.trim();
    case 'array':
      return `${value.items !== undefined && !Array.isArray(value.items) && typeof value.items === 'object' ? schemaTypeText(value.items) : 'value'}[]`;
    default:
      return value.type ?? 'value';
  }
}

const json = (value: unknown): string => (Array.isArray(value) ? `[${value.map((item) => JSON.stringify(item)).join(', ')}]` : JSON.stringify(value));

function defaultText(setting: CrawlSetting): string {
  if (setting.meta.shownDefault !== undefined) return setting.meta.shownDefault;
  const { presence } = setting;
  if (presence.kind === 'default') return `\`${json(presence.value)}\``;
  return presence.kind === 'required' ? 'required' : 'none';
}

function flagText(setting: CrawlSetting): string {
  const { flag, flagSets, argument } = setting.meta;
  if (argument !== undefined) return `the \`${argument}\` arguments`;
  if (flag === undefined) return '—';
  const replaces = flagKind(setting) === 'list' && setting.presence.kind === 'default' && Array.isArray(setting.presence.value) && setting.presence.value.length > 0;
  const note = replaces ? ' (repeatable, replaces the default)' : isRepeatable(setting) ? ' (repeatable)' : '';
  return `\`${flag}\`${flagSets === false ? ' sets `false`' : ''}${note}`;
}

/** One table cell: one line, its pipes escaped (GitHub tables split on them even in code spans). */
const cell = (text: string): string => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

function row(setting: CrawlSetting): string {
  const cells = [
    `\`${setting.path.join('.')}\``,
    setting.meta.type ?? schemaTypeText(setting.value),
    defaultText(setting),
    flagText(setting),
    setting.meta.doc ?? setting.meta.help ?? '',
  ];
  return `| ${cells.map(cell).join(' | ')} |`;
}

/** Throws naming the first setting the docs could not list. */
function checkDescribed(settings: readonly CrawlSetting[]): void {
  for (const setting of settings) {
    const problem =
      setting.section === undefined ? 'has no section' : setting.meta.doc === undefined && setting.meta.help === undefined ? 'has neither doc nor help' : undefined;
    if (problem !== undefined) throw new Error(`crawl setting ${setting.path.join('.')} ${problem}: describe it with setting() (src/shared/setting-meta.ts)`);
  }
}

export function settingsTable(section: SettingSection): string {
  const rows = CRAWL_SETTINGS.filter((setting) => setting.section === section).map(row);
  return ['| Field | Type | Default | Flag | Meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

const isSection = (name: string): name is SettingSection => (SETTING_SECTIONS as readonly string[]).includes(name);

/** The Markdown with every settings block replaced by its table; every section must have exactly one block. */
export function withSettingsTables(markdown: string): string {
  checkDescribed(CRAWL_SETTINGS);
  const found: string[] = [];
  const result = markdown.replace(BLOCK, (_block, section: string) => {
    if (!isSection(section)) throw new Error(`${CONFIG_DOCS}: "${section}" is no settings section (${SETTING_SECTIONS.join(', ')})`);
    found.push(section);
    return `<!-- generated:crawl-settings ${section} -->\n${settingsTable(section)}\n<!-- /generated -->`;
  });
  const unplaced = SETTING_SECTIONS.filter((section) => found.filter((name) => name === section).length !== 1);
  if (unplaced.length > 0) throw new Error(`${CONFIG_DOCS} needs exactly one <!-- generated:crawl-settings NAME --> block for: ${unplaced.join(', ')}`);
  return result;
}

/** Every record field with what it means, in the order the CSV export writes them. */
export function recordFieldsTable(): string {
  return ['| field | meaning |', '|---|---|', ...RECORD_FIELDS.map((field) => `| \`${field.name}\` | ${cell(field.doc)} |`)].join('\n');
}

/** Every field a `hosts` override may set, with what it means, in schema order. */
export function hostOverridesTable(): string {
  const rows = Object.entries(hostOverrideSchema.shape).map(([name, field]) => {
    const meaning = field.unwrap().description;
    if (meaning === undefined) throw new Error(`host override field ${name} has no description: describe it in src/shared/politeness-config.ts`);
    return `| \`${name}\` | ${cell(meaning)} |`;
  });
  return ['| Override field | Meaning |', '|---|---|', ...rows].join('\n');
}

/** `markdown` with its one `name` block (`block` matches it) replaced by `table`. */
function withBlock(markdown: string, name: string, block: RegExp, table: string): string {
  const blocks = markdown.match(block)?.length ?? 0;
  if (blocks !== 1) throw new Error(`${CONFIG_DOCS} needs exactly one <!-- generated:${name} --> block, not ${blocks}`);
  return markdown.replace(block, `<!-- generated:${name} -->\n${table}\n<!-- /generated -->`);
}

/** The Markdown with its settings blocks, its record-fields block and its host-overrides block replaced by their tables. */
export function withGeneratedTables(markdown: string): string {
  const withRecords = withBlock(withSettingsTables(markdown), 'record-fields', RECORD_BLOCK, recordFieldsTable());
  return withBlock(withRecords, 'host-overrides', OVERRIDE_BLOCK, hostOverridesTable());
}
