/**
 * The settings tables of docs/configuration.md are made from the crawl schema
 * (src/cli/config-docs.ts): the committed file must be what the schema makes now.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_DOCS, hostOverridesTable, recordFieldsTable, REGENERATE_CONFIG_DOCS, settingsTable, withGeneratedTables, withSettingsTables } from '../src/cli/config-docs';
import { hostOverrideSchema } from '../src/shared/politeness-config';
import { RECORD_FIELDS } from '../src/store/record-fields';

const committed = readFileSync(join(__dirname, '..', '..', CONFIG_DOCS), 'utf8');

describe(CONFIG_DOCS, () => {
  it('has the settings tables the schema makes, the record table the record fields make, and the host-override table', () => {
    assert.ok(withGeneratedTables(committed) === committed, `${CONFIG_DOCS} is stale: run \`${REGENERATE_CONFIG_DOCS}\` and commit the result`);
  });

  it('lists every record field once, in the CSV order', () => {
    const names = [...recordFieldsTable().matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1]);
    assert.deepEqual(names, RECORD_FIELDS.map((field) => field.name));
    assert.throws(() => withGeneratedTables(committed.replace('<!-- generated:record-fields -->', '')), /exactly one <!-- generated:record-fields --> block, not 0/);
  });

  it('lists every field a host override may set once, with its meaning, in schema order', () => {
    const rows = [...hostOverridesTable().matchAll(/^\| `(\w+)` \| (.+) \|$/gm)];
    assert.deepEqual(
      rows.map((match) => match[1]),
      Object.keys(hostOverrideSchema.shape),
    );
    assert.ok(rows.every((match) => match[2].length > 10), 'each with a meaning');
    assert.throws(() => withGeneratedTables(committed.replace('<!-- generated:host-overrides -->', '')), /exactly one <!-- generated:host-overrides --> block, not 0/);
  });

  it("lists a setting's type, default and flag as the schema has them", () => {
    const table = settingsTable('limits');
    assert.match(table, /^\| `maxPages` \| integer 1–100,000,000 \| `10000` \| `--max-pages <n>` \| URLs processed in total/m);
    assert.match(table, /^\| `seeds` \| URL\[\] \| required unless `seedsFile` \| the `<seed-url\.\.\.>` arguments \|/m);
    assert.match(settingsTable('fetching'), /^\| `respectRobots` \| boolean \| `true` \| `--ignore-robots` sets `false` \|/m);
    assert.match(settingsTable('content'), /^\| `extract\.<name>\.maxChars` \| integer 1–100,000 \| `1000` \| — \|/m);
  });

  it('refuses Markdown that lacks a section, or names an unknown one', () => {
    assert.throws(() => withSettingsTables(committed.replace('<!-- generated:crawl-settings render -->', '')), /needs exactly one .* block for: render/);
    assert.throws(() => withSettingsTables(`${committed}\n<!-- generated:crawl-settings plans -->\n<!-- /generated -->\n`), /"plans" is no settings section/);
  });
});
