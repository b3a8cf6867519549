import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/lambda/runner';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { authEnvFor } from '../support/tokens';

/**
 * `npm run smoke` (smoke/run.ts), the deployment smoke test, pointed at the local runtime with HS256 tokens and
 * the strictest replay protection (`all`): every token is good for one request.
 */
const run = promisify(execFile);
const authEnv = authEnvFor(undefined, { replayProtection: 'all' });

let runtime: Runtime;
beforeAll(async () => {
  runtime = await startTestRuntime({ env: authEnv });
});
afterAll(() => runtime?.stop());

const smoke = (tokens: Record<string, string>) => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...authEnv, ...tokens };
  for (const name of ['NOTIFY_API_URL', 'NOTIFY_WS_URL', 'NOTIFY_DEV_AUTH_FILE', 'NOTIFY_DATA_DIR'])
    delete env[name];
  return run(
    'npm',
    ['run', '-s', 'smoke', '--', '--api', runtime.httpUrl, '--ws', runtime.wsUrl, '--timeout', '60'],
    {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
    },
  ).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
};

describe('npm run smoke', () => {
  it('passes every check with token commands, as README step 4 shows for single-use tokens', async () => {
    const result = await smoke({
      NOTIFY_USER_TOKEN_COMMAND: 'npm run -s token -- --user smoke-user',
      NOTIFY_SERVICE_TOKEN_COMMAND: 'npm run -s token -- --service smoke --scope notifications:write',
    });
    expect(result.stdout).not.toContain('FAIL');
    expect(result.stdout).toContain('All 9 checks passed.');
    expect(result.code).toBe(0);
    // It cleans up after itself: the notification it sent is read.
    const count = await fetch(`${runtime.httpUrl}/notifications/unread-count`, {
      headers: { authorization: `Bearer ${await runtime.mintUserToken('smoke-user')}` },
    });
    expect(await count.json()).toEqual({ count: 0 });
  }, 180_000);

  it('fails, naming the check and the cause, when a token can be used once only', async () => {
    const result = await smoke({
      NOTIFY_USER_TOKEN: await runtime.mintUserToken('smoke-user'),
      NOTIFY_SERVICE_TOKEN: await runtime.mintServiceToken('smoke', ['notifications:write']),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/ok {4}a user connects over WebSocket/);
    expect(result.stdout).toMatch(
      /FAIL {2}it is in the user's feed\n.*already been used.*NOTIFY_\*_TOKEN_COMMAND/,
    );
    expect(result.stdout).toMatch(/\d of 9 checks failed\./);
  }, 180_000);

  it('says what is missing without tokens or URLs', async () => {
    const missing = await smoke({});
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('set NOTIFY_USER_TOKEN or NOTIFY_USER_TOKEN_COMMAND');
    const noUrl = await run('npm', ['run', '-s', 'smoke', '--', '--api', 'localhost:3000'], {
      cwd: REPO_ROOT,
    }).catch((error: { code: number; stderr: string }) => error);
    expect(noUrl.stderr).toContain('--api must be the HttpApiUrl output');
  }, 90_000);
});
