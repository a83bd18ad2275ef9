/**
 * Names shared by clients, workers and workflows. Every task queue, workflow type and
 * message name is spelled here once; nothing else repeats these strings.
 */
import { version } from '../../package.json';

/** The release, as `crawlflow --version` prints it; package.json is its one source. */
export const CRAWLFLOW_VERSION = version;
/** The default User-Agent names the release that sends it. */
export const DEFAULT_USER_AGENT = `crawlflow/${CRAWLFLOW_VERSION}`;
export const DEFAULT_TASK_QUEUE = 'crawlflow';
export const CRAWL_WORKFLOW_TYPE = 'crawlSession';
export const DEFAULT_NAMESPACE = 'default';

/** Environment variables read by the CLI and workers (besides the SDK's TEMPORAL_*). */
export const ENV = {
  taskQueue: 'CRAWLFLOW_TASK_QUEUE',
  renderTaskQueue: 'CRAWLFLOW_RENDER_TASK_QUEUE',
  renderMetricsAddress: 'CRAWLFLOW_RENDER_METRICS_ADDRESS',
  dataDir: 'CRAWLFLOW_DATA_DIR',
  /** Where frontier stores live: unset for SQLite files under the data dir, or a postgres:// URL. */
  storeUrl: 'CRAWLFLOW_STORE_URL',
  metricsAddress: 'CRAWLFLOW_METRICS_ADDRESS',
  temporalBinary: 'CRAWLFLOW_TEMPORAL_BIN',
  devServerPort: 'CRAWLFLOW_DEV_SERVER_PORT',
  devServerUiPort: 'CRAWLFLOW_DEV_SERVER_UI_PORT',
  logLevel: 'CRAWLFLOW_LOG_LEVEL',
  logFormat: 'CRAWLFLOW_LOG_FORMAT',
} as const;

/** A variable of ENV holds a value crawlflow cannot use: its message names the variable and what it must be. */
export class InvalidEnvError extends Error {
  readonly code = 'invalid-env';
}

/** The task queue of render batches (pages rendered in Chromium), polled by render workers only. */
export const DEFAULT_RENDER_TASK_QUEUE = 'crawlflow-render';
