// Lint rules that keep workflow code deterministic: src/workflows runs inside Temporal's
// sandbox and is replayed, so it may not import Node builtins or any module that does I/O.
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers',
  'tls', 'url', 'util', 'worker_threads', 'zlib',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', '.data/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeBuiltins.flatMap((name) => [name, `node:${name}`]).map((name) => ({
          name,
          message: 'Workflow code is replayed in a sandbox: no Node builtins.',
        })),
        patterns: [
          { group: ['undici', 'cheerio', 'better-sqlite3', 'pino', 'prom-client', '@temporalio/activity', '@temporalio/worker', '@temporalio/client'], message: 'Workflow code only orchestrates: no I/O libraries.' },
          { group: ['**/activities', '**/activities/*'], importNamePattern: '^', allowTypeImports: true, message: 'Import activities with `import type` only.' },
          { group: ['**/store/*', '**/fetch/*', '**/metrics/*', '**/workers/*', '**/cli/*'], message: 'Workflow code only orchestrates: no I/O modules.' },
        ],
      }],
    },
  },
);
