import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/lambda/runner';

/**
 * A green run prints the summary; a failing test still shows everything it wrote. Runs vitest with the suite's
 * config (global set-up included) on test/support/fixtures/quiet-run.cases.ts: one passing test that logs an
 * error it expects, one failing test.
 */
describe('the suite’s output', () => {
  it('leaves out what passing tests log, keeps what a failing test logged, and has no warning of the tools', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
    // As from a shell: not inside this run's worker, and without the variable vitest.config.ts sets itself.
    for (const name of Object.keys(env)) if (name.startsWith('VITEST')) delete env[name];
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const run = await promisify(execFile)(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--config',
        'test/support/fixtures/quiet-run.config.ts',
      ],
      { cwd: REPO_ROOT, env, encoding: 'utf8' },
    ).then(
      () => {
        throw new Error('the run with a failing test exited 0');
      },
      (error: { code?: number; stdout: string; stderr: string }) => error,
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.code, output).toBe(1);
    expect(output).toMatch(/Tests\s+1 failed \| 1 passed/);
    expect(output).toContain('failure logged by a failing test');
    expect(output).toContain('console output of a failing test');
    expect(output).not.toContain('failure expected by a passing test');
    expect(output).not.toContain('console output of a passing test');
    expect(output).not.toContain('NodeVersionSupportWarning');
    expect(output).not.toContain('Vite config');
  }, 120_000);
});
