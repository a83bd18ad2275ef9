/** The `results` export in each format, and where it goes by default. */
import type { StoreConfig } from '../store/store-url';
import { crawlFileName } from '../shared/crawl-id';
import { exportCsv } from './export-csv';
import { exportJsonl } from './export-jsonl';
import { exportWarc } from './export-warc';

export const EXPORT_FORMATS = ['jsonl', 'csv', 'warc'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const EXPORTERS: Record<ExportFormat, (store: StoreConfig, crawlId: string, outFile: string) => Promise<number>> = {
  jsonl: exportJsonl,
  csv: exportCsv,
  warc: exportWarc,
};

const EXTENSIONS: Record<ExportFormat, string> = { jsonl: 'jsonl', csv: 'csv', warc: 'warc.gz' };

/** What the count an export returns counts, for messages (singular: see `counted`). */
export const EXPORT_UNITS: Record<ExportFormat, string> = { jsonl: 'line', csv: 'row', warc: 'page' };

/** `<crawl-id>.jsonl` (or .csv, .warc.gz) in the working directory, whatever the ID holds: it is encoded as for the crawl's store. */
export function defaultOutFile(crawlId: string, format: ExportFormat): string {
  return `${crawlFileName(crawlId)}.${EXTENSIONS[format]}`;
}

export function exportResults(format: ExportFormat, store: StoreConfig, crawlId: string, outFile: string): Promise<number> {
  return EXPORTERS[format](store, crawlId, outFile);
}
