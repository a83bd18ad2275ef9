/**
 * The workflow code bundle, built once by `npm run build` instead of by every worker at
 * start-up: bundling with webpack took about 6 s of CPU and most of a worker's start-up
 * memory (a 20-page crawl peaked at 446 MB), paid again by every `crawlflow crawl`.
 * Run as a script (`node dist/src/workers/workflow-bundle.js`) it writes the bundle.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createLogger } from '../observability/logger';
import { WORKFLOW_TRACING_MODULES } from '../observability/tracing';

/** `dist/workflow-bundle.js`, next to the compiled sources it was built from. */
const BUNDLE_PATH = join(__dirname, '..', '..', 'workflow-bundle.js');

/** The prebuilt bundle, or undefined (the worker then bundles `src/workflows` itself). */
export function prebuiltWorkflowBundle(): { codePath: string } | undefined {
  return existsSync(BUNDLE_PATH) ? { codePath: BUNDLE_PATH } : undefined;
}

async function writeWorkflowBundle(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    // The tracing plugin adds its workflow interceptors only when the worker bundles; a
    // prebuilt bundle must carry them itself.
    workflowInterceptorModules: WORKFLOW_TRACING_MODULES,
    logger: createLogger('workflow-bundler', 'warn') as never,
    // The SDK needs an inline source map, and keeps both the bundle and its parsed map in
    // memory for the worker's life; with every module's source embedded (the bundler's
    // default) the map was 4.5 MB of a 7.2 MB bundle and cost a worker about 100 MB of peak
    // RSS. Line mappings without the sources still point workflow stack traces at dist/.
    webpackConfigHook: (config) => ({
      ...config,
      devtool: 'inline-nosources-cheap-source-map',
      // zod exports every locale (0.4 MB) next to the English one it uses; workflows only
      // validate, so the bundle takes the module as empty.
      resolve: { ...config.resolve, alias: { ...config.resolve?.alias, [require.resolve('zod/v4/locales/index.cjs')]: false } },
    }),
  });
  writeFileSync(BUNDLE_PATH, latin1Only(code));
}

/**
 * `code` with every character above U+00FF written as a `\uXXXX` escape, which means the same
 * in a string, a regular expression, an identifier or a comment. Why: the SDK keeps the bundle
 * as a string in the worker's main thread and again in the workflow thread, and V8 stores a
 * string with one such character (an arrow in a setting's doc) at two bytes a character.
 */
function latin1Only(code: string): string {
  return code.replace(/[^\u0000-\u00ff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

if (require.main === module) {
  writeWorkflowBundle().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
