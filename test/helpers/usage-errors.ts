/** The contract for bad command-line input: exit code 2 and one line that says what is wrong. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './processes';

export type UsageCase = [name: string, args: string[], message: RegExp];

/** One test per case: `crawlflow <args>` exits with code 2 and a one-line message matching `message`. */
export function itRejectsEach(cases: readonly UsageCase[], env: NodeJS.ProcessEnv): void {
  for (const [name, args, message] of cases) {
    it(`rejects ${name} with exit code 2 and a one-line message`, async () => {
      const result = await runCli(args, env);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
    });
  }
}
