// Lint rules that keep workflow code deterministic: src/workflows runs inside Temporal's
// sandbox and is replayed, so it may not import Node builtins or any module that does I/O.
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers',
  'tls', 'url', 'util', 'worker_threads', 'zlib',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', '.data/**', 'test-output/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Type-aware rules, for the TypeScript the compiler sees (tsconfig.json's include).
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits hides its rejection and lets a test end before its work does.
      // node:test's test()/describe() return promises the runner itself awaits and reports.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }],
      }],
    },
  },
  {
    // A focused test silently skips every other test in its file.
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error',
        ...['test', 'it', 'describe', 'suite'].map((object) => ({ object, property: 'only', message: 'Focused tests skip the rest of the file.' })),
      ],
      'no-restricted-syntax': ['error', {
        selector: "CallExpression Property[key.name='only']",
        message: 'Focused tests ({ only: true }) skip the rest of the file.',
      }],
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
