/**
 * The dev server that tests of `crawlflow` processes share within a `describe`: one in-process
 * worker on a task queue of its own, and the environment through which a process reaches them.
 */
import { after, before } from 'node:test';
import { startTestTemporal, uniqueQueue, type TestTemporal } from './temporal';

export interface CliTemporal {
  readonly env: TestTemporal;
  /** The queue the worker polls. */
  readonly taskQueue: string;
  /** What a `crawlflow` process needs to reach the server, the worker's task queue and the data dir. */
  readonly cliEnv: NodeJS.ProcessEnv;
}

/**
 * Registers hooks in the enclosing `describe` that start the server and worker before its tests
 * and close them after. `env` and `cliEnv` can be read once the `before` hook has run.
 */
export function cliTemporal(queuePrefix: string): CliTemporal {
  const taskQueue = uniqueQueue(queuePrefix);
  let started: TestTemporal | undefined;
  before(async () => {
    started = await startTestTemporal();
    await started.startWorker(taskQueue);
  });
  after(async () => {
    await started?.close();
  });
  const env = (): TestTemporal => {
    if (!started) throw new Error('cliTemporal: its server is read before the before hook started it');
    return started;
  };
  return {
    get env() {
      return env();
    },
    taskQueue,
    get cliEnv() {
      return { TEMPORAL_ADDRESS: env().address, CRAWLFLOW_TASK_QUEUE: taskQueue, CRAWLFLOW_DATA_DIR: env().dataDir };
    },
  };
}
