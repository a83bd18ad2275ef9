/**
 * Writes a crawl's page records as CSV (RFC 4180, via csv-stringify): one header row, then
 * one row per record. Every value is quoted; a null is an empty unquoted cell and an empty
 * string a quoted one (`""`), so the two stay apart. Lists (`links`, list fields) are JSON
 * arrays in their cell, booleans `true`/`false`. Each extracted field is a column
 * `fields.<name>`: the crawl's `extract` fields in their order, then any other its records
 * show (a config changed between runs under one ID), in the order they first do. The export
 * reads the records twice, once to find the columns and once to write, so memory stays flat.
 *
 * Values are written as the pages had them, in UTF-8 without a byte order mark: a spreadsheet
 * may read a cell starting with `=`, `+`, `-` or `@` as a formula, so exports of untrusted sites
 * are imported as text (docs/extraction-recrawl-exports.md#csv). Prefixing such cells would
 * alter the data for every other reader.
 */
import { stringify } from 'csv-stringify/sync';
import type { PageRecord } from '../store/frontier-store';
import { RECORD_FIELDS, type Storage } from '../store/record-fields';
import { ChunkedWriter } from './atomic-file';
import { writeExport } from './out-target';
import type { StoreConfig } from '../store/store-url';
import { withCrawlStore } from './export-jsonl';
import { recordedConfig } from './recorded-settings';

type Cell = string | null;

/** Every record field but `fields` (which has a column per field), as a function of the record. */
const RECORD_COLUMNS: Array<[string, (record: PageRecord) => Cell]> = RECORD_FIELDS.filter((field) => field.storage !== 'json-object').map(
  ({ name, storage }) => [name, (record) => cellOf(record[name], storage)],
);

/** A list is a JSON array even when empty; a JSON value is JSON, and null an empty cell. */
function cellOf(value: unknown, storage: Storage): Cell {
  if (storage === 'json-list') return JSON.stringify(value);
  if (value === null) return null;
  return storage === 'json' ? JSON.stringify(value) : String(value);
}

export const FIELD_COLUMN_PREFIX = 'fields.';

const fieldCell = (value: string | string[] | null | undefined): Cell =>
  value === null || value === undefined ? null : Array.isArray(value) ? JSON.stringify(value) : value;

const row = (cells: Cell[]): string => stringify([cells], { quoted: true, quoted_match: /^$/ });

export function exportCsv(config: StoreConfig, crawlId: string, outFile: string): Promise<number> {
  return withCrawlStore(config, crawlId, async (store) => {
    // The crawl's fields first, so a crawl whose records show none (no HTML page yet) has their columns all the same.
    const fieldNames = new Set<string>(Object.keys((await recordedConfig(store))?.extract ?? {}));
    for await (const record of store.records()) for (const name of Object.keys(record.fields)) fieldNames.add(name);
    return writeExport(outFile, async (out) => {
      const writer = new ChunkedWriter(out);
      await writer.add(row([...RECORD_COLUMNS.map(([name]) => name), ...[...fieldNames].map((name) => FIELD_COLUMN_PREFIX + name)]));
      let rows = 0;
      for await (const record of store.records()) {
        await writer.add(row([...RECORD_COLUMNS.map(([, cell]) => cell(record)), ...[...fieldNames].map((name) => fieldCell(record.fields[name]))]));
        rows += 1;
      }
      await writer.flush();
      return rows;
    });
  });
}
