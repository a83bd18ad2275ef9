/**
 * `--seeds-file -`: the seed list on stdin is checked line by line (a bad line stops the
 * command before anything starts, as `stdin:12: ...`) and staged as a file under the data
 * dir, which the crawl's input then names. The embedded workers read it there; workers on
 * other machines read it only if the data dir is shared with them (docs/configuration.md).
 */
import { createHash } from 'node:crypto';
import { renameSync } from 'node:fs';
import { makeDirectory } from '../shared/make-directory';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { CrawlInput } from '../shared/crawl-config';
import { crawlFileName } from '../shared/crawl-id';
import { writeAtomically, writeChunk } from '../results/atomic-file';
import { InvalidSeedLineError } from '../seeds/seed-errors';
import { LIST_START, seedChunks } from '../seeds/seed-lines';
import { STDIN_SEEDS, UsageError } from './crawl-options';
const STAGE_CHUNK = 10_000;

/**
 * The input with stdin's seed list staged, or as it is when it reads no stdin. The staged
 * file is named by its content, so a crawl resumed by byte offset never meets other seeds
 * under its name.
 */
export async function withStdinSeeds(input: CrawlInput, dataDir: string, crawlId: string, stdin: Readable = process.stdin): Promise<CrawlInput> {
  if (input.seedsFile !== STDIN_SEEDS) return input;
  const dir = resolve(dataDir, 'seeds');
  makeDirectory(dir);
  const staging = join(dir, `${crawlFileName(crawlId)}.staging`);
  const hash = createHash('sha256');
  try {
    await writeAtomically(staging, async (out) => {
      for await (const { urls } of seedChunks(stdin, 'stdin', LIST_START, STAGE_CHUNK)) {
        if (urls.length === 0) continue;
        const text = `${urls.join('\n')}\n`;
        hash.update(text);
        await writeChunk(out, text);
      }
    });
  } catch (err) {
    if (err instanceof InvalidSeedLineError) throw new UsageError(`--seeds-file -: ${err.message}`);
    throw err;
  }
  const staged = join(dir, `${crawlFileName(crawlId)}-${hash.digest('hex').slice(0, 16)}.txt`);
  renameSync(staging, staged);
  return { ...input, seedsFile: staged };
}
