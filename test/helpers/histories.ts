/** Reading every run of a crawl's history (continue-as-new makes a chain of runs). */
import type { Client } from '@temporalio/client';
import { writeFileSync } from 'node:fs';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

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

/** When activities of `type` were scheduled in a history (epoch ms), in order. */
export function eventTimes(history: temporal.api.history.v1.IHistory, type: string): number[] {
  return (history.events ?? [])
    .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === type)
    .map((event) => Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6));
}

/** A JSON payload's value (activity inputs, summaries). */
export function decodePayload(payload: { data?: Uint8Array | null } | null | undefined): unknown {
  return payload?.data ? JSON.parse(Buffer.from(payload.data).toString('utf8')) : undefined;
}

/** The inputs of the activities of type `type` scheduled in a history, in order. */
export function scheduledInputs<T>(history: temporal.api.history.v1.IHistory, type: string): T[] {
  return (history.events ?? []).flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    return scheduled?.activityType?.name === type ? [decodePayload(scheduled.input?.payloads?.[0]) as T] : [];
  });
}

/** The results of the activities of type `type` that completed in a history, in order. */
export function completedResults<T>(history: temporal.api.history.v1.IHistory, type: string): T[] {
  const events = history.events ?? [];
  const scheduledIds = new Set(
    events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === type).map((event) => String(event.eventId)),
  );
  return events.flatMap((event) => {
    const completed = event.activityTaskCompletedEventAttributes;
    return completed && scheduledIds.has(String(completed.scheduledEventId)) ? [decodePayload(completed.result?.payloads?.[0]) as T] : [];
  });
}

/** Writes a history as the SDK's JSON, the form the replay test reads. */
export function writeHistoryFile(file: string, history: temporal.api.history.v1.IHistory): void {
  writeFileSync(file, historyToJSON(temporal.api.history.v1.History.fromObject(history)));
  console.log(`recorded ${file} (${history.events?.length} events)`);
}
