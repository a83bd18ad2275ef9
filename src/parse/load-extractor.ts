/**
 * The extractor of a crawl's `extract` setting, or undefined when it names no field. Its
 * module, with cheerio, is loaded by the first crawl that extracts: a worker
 * whose crawls extract nothing never pays their start-up time (about 0.1 s of CPU) and memory.
 */
import type { ExtractField } from '../shared/content-config';
import type { Extractor } from './extract-fields';

export async function loadExtractor(spec: Readonly<Record<string, ExtractField>>): Promise<Extractor | undefined> {
  if (Object.keys(spec).length === 0) return undefined;
  const { compileExtractor } = await import('./extract-fields.js');
  return compileExtractor(spec);
}
