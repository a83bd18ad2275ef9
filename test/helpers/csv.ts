/** Reads a `crawlflow results --format csv` file back into page records, with a real CSV parser. */
import type { PageRecord } from '../../src/store/frontier-store';

type Parse = (input: string, options: { cast: (value: string, context: { quoting: boolean }) => string | null }) => Array<Array<string | null>>;

const NUMBERS = new Set(['depth', 'status', 'bytes']);
const JSON_COLUMNS = new Set(['links']);
/** JSON values whose empty cell is null. */
const NULLABLE_JSON_COLUMNS = new Set(['payloadRecord']);

/** An unquoted empty cell is null; a quoted one an empty string. Lists are JSON arrays (so a text field must not start with `[`). */
export function csvRecords(text: string, parse: Parse): { header: string[]; rows: PageRecord[] } {
  const [header, ...cells] = parse(text, { cast: (value, context) => (value === '' && !context.quoting ? null : value) }) as [string[], ...Array<Array<string | null>>];
  const rows = cells.map((row) => {
    const record: Record<string, unknown> = { fields: {} };
    header.forEach((column, i) => {
      const value = row[i];
      if (column.startsWith('fields.')) {
        const fields = record.fields as Record<string, unknown>;
        // A list field is a JSON array; a field a record lacks reads back as null.
        fields[column.slice(7)] = value !== null && value.startsWith('[') ? JSON.parse(value) : value;
      } else if (NUMBERS.has(column)) record[column] = value === null ? null : Number(value);
      else if (JSON_COLUMNS.has(column)) record[column] = JSON.parse(value ?? '[]');
      else if (NULLABLE_JSON_COLUMNS.has(column)) record[column] = value === null ? null : JSON.parse(value);
      else if (column === 'noindex') record[column] = value === 'true';
      else record[column] = value;
    });
    return record as unknown as PageRecord;
  });
  return { header, rows };
}
