/** The contract for bad command-line input: exit code 2 and one line that says what is wrong. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './processes';

/** `env` adds to the command's environment (a bad setting that comes from a variable). */
export type UsageCase = [name: string, args: string[], message: RegExp, env?: NodeJS.ProcessEnv];

/** Test secrets contain this word: no message may echo it. */
const SECRET = 'topsecret';

/**
 * One test per case: `crawlflow <args>` exits with code 2 and a one-line message matching
 * `message`, which never echoes a secret.
 */
export function itRejectsEach(cases: readonly UsageCase[], env: NodeJS.ProcessEnv): void {
  for (const [name, args, message, caseEnv] of cases) {
    it(`rejects ${name} with exit code 2 and a one-line message`, async () => {
      const result = await runCli(args, { ...env, ...caseEnv });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.ok(!result.stderr.includes(SECRET), 'a secret is never echoed');
      assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
    });
  }
}
