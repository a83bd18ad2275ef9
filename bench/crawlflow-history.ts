/**
 * Temporal history events of a finished crawl, over its whole continue-as-new chain.
 * `crawlflow crawl` stops its embedded server when it exits, but the server's SQLite file
 * stays in the data directory: a dev server is started again on that file, headless and on
 * free ports, and every run of the crawl's workflow ID is read from it.
 */
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../src/temporal/dev-server';
import { freeServerPort } from '../src/workers/runtime';

export interface HistoryCount {
  runs: number;
  events: number;
}

/** Counts with a server that is already running (the 1-vs-2-worker runs keep theirs). */
export async function countHistoryEvents(address: string, workflowId: string): Promise<HistoryCount> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    let runs = 0;
    let events = 0;
    // Visibility is eventually consistent; the dev server's (SQLite) is immediate in practice.
    for await (const execution of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
      const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
      runs += 1;
      events += history.events?.length ?? 0;
    }
    if (runs === 0) throw new Error(`no workflow runs found for ${workflowId} at ${address}`);
    return { runs, events };
  } finally {
    await connection.close();
  }
}

/** Counts from the server database a finished `crawlflow crawl` left in its data directory. */
export async function countHistoryEventsInDataDir(dataDir: string, workflowId: string): Promise<HistoryCount> {
  const server = await startDevServer({
    port: await freeServerPort(),
    uiPort: await freeServerPort(),
    dbFile: join(dataDir, 'temporal.sqlite'),
    logFile: join(dataDir, 'temporal-server-reopened.log'),
    headless: true,
  });
  try {
    return await countHistoryEvents(server.address, workflowId);
  } finally {
    await server.stop();
  }
}
