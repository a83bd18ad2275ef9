/** Reading every run of a crawl's history (continue-as-new makes a chain of runs). */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

export interface RunHistory {
  runId: string;
  history: temporal.api.history.v1.IHistory;
}

export async function historiesOf(client: Client, workflowId: string): Promise<RunHistory[]> {
  const runs: RunHistory[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    runs.push({ runId: execution.runId, history });
  }
  return runs;
}
