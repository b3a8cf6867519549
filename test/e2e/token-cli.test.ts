import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt, jwtVerify } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { writeDevAuth } from '../../local/dev-auth';
import { REPO_ROOT } from '../../local/lambda/runner';

/**
 * `npm run token` as the README uses it: `$(npm run -s token -- …)`, `--data DIR`, `--help`, and a clear refusal
 * when npm's header would end up in the captured output.
 */
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'notify-token-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env: NodeJS.ProcessEnv = { ...process.env };
for (const name of Object.keys(env)) if (name.startsWith('SERVICE__AUTH__')) delete env[name];
delete env.NOTIFY_DEV_AUTH_FILE;
delete env.NOTIFY_DATA_DIR;

const npm = (args: string[]) =>
  run('npm', args, { cwd: REPO_ROOT, env, encoding: 'utf8' }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );

describe('npm run token', () => {
  const dataDir = join(work, 'data');
  const settings = {
    secret: 's'.repeat(48),
    issuer: 'http://127.0.0.1:4321',
    audience: 'notify',
    serviceAudience: 'notify.s2s',
  };
  writeDevAuth(settings, join(dataDir, 'dev-auth.json'));

  it('prints only a token signed with the secret `npm start --data DIR` saved there', async () => {
    const empty = join(work, 'never-started');
    // Independent runs start together: each is npm, a shell and a TypeScript load.
    const [user, service, fromEnv] = await Promise.all([
      npm(['run', '-s', 'token', '--', '--data', dataDir, '--user', 'alice', '--roles', 'admin']),
      npm(['run', '-s', 'token', '--', '--data', empty, '--service', 'billing']),
      run('npm', ['run', '-s', 'token', '--', '--service', 'billing', '--scope', 'events:publish'], {
        cwd: REPO_ROOT,
        env: { ...env, NOTIFY_DATA_DIR: dataDir },
        encoding: 'utf8',
      }),
    ]);
    expect(user.code).toBe(0);
    expect(user.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const key = new TextEncoder().encode(settings.secret);
    const { payload } = await jwtVerify(user.stdout.trim(), key, {
      issuer: settings.issuer,
      audience: 'notify',
    });
    expect(payload).toMatchObject({ sub: 'alice', roles: ['admin'] });

    expect(service.code).toBe(1);
    expect(service.stderr).toContain(`no HS256 secret: run npm start -- --data ${empty} once`);
    expect(decodeJwt(fromEnv.stdout.trim())).toMatchObject({ service: 'billing', aud: 'notify.s2s' });
  }, 90_000);

  it('refuses, with the remedy, when npm has written its header into captured output (no -s)', async () => {
    const result = await npm(['run', 'token', '--', '--data', dataDir, '--user', 'alice']);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toMatch(/eyJ/);
    expect(result.stderr).toContain('run `npm run -s token -- …`');
  }, 90_000);

  it('refuses a user id or service name the service would refuse (past its bound in UTF-8 bytes)', async () => {
    const overBound = [
      ['--user', '😀'.repeat(129), '--user must be 1 to 512 bytes in UTF-8'],
      ['--service', 'é'.repeat(65), '--service must be 1 to 128 bytes in UTF-8'],
    ] as const;
    const [atBound, ...refused] = await Promise.all([
      npm(['run', '-s', 'token', '--', '--data', dataDir, '--user', '😀'.repeat(128)]),
      ...overBound.map(([flag, value]) => npm(['run', '-s', 'token', '--', '--data', dataDir, flag, value])),
    ]);
    overBound.forEach(([flag, , rule], index) => {
      const result = refused[index];
      expect(result?.code, flag).toBe(1);
      expect(result?.stdout, flag).toBe('');
      expect(result?.stderr, flag).toContain(rule);
    });
    expect(decodeJwt(atBound.stdout.trim())).toMatchObject({ sub: '😀'.repeat(128) });
  }, 90_000);

  it('answers --help with its usage and exit code 0, as the other CLIs do', async () => {
    const scripts = ['token', 'replay', 'start'] as const;
    const [bogus, ...helps] = await Promise.all([
      npm(['run', '-s', 'token', '--', '--bogus']),
      ...scripts.map((script) => npm(['run', '-s', script, '--', '--help'])),
    ]);
    scripts.forEach((script, index) => {
      expect(helps[index]?.code, script).toBe(0);
      expect(helps[index]?.stdout, script).toMatch(new RegExp(`^usage: npm (run -s |run )?${script}`));
    });
    expect(helps[0]?.stdout).toContain('--data DIR');
    expect(bogus.stderr).toContain("Unknown option '--bogus'");
  }, 90_000);
});
