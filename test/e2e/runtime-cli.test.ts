import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { freePort } from '../../local/dynamodb-local';
import { REPO_ROOT } from '../../local/lambda/runner';

/**
 * `npm start` exactly as the README says, as a child process: printed URLs and tokens, the ready-to-paste
 * commands of its banner, the API, a WebSocket, `--data` across a restart (with the dev auth file inside it),
 * `npm run token`, short log lines (JSON with --json-logs), no AWS SDK Node-version warning, and a clean stop on
 * SIGTERM and SIGINT with no process left.
 */
const work = mkdtempSync(join(tmpdir(), 'notify-cli-'));
const dataDir = join(work, 'data');
// As a developer runs it: no test override of the dev auth file, no log level or SDK variable from
// vitest.config.ts; `--data` keeps the developer's own .data/dev-auth.json out of this.
// The CLI's own defaults: AWS-like delivery, a new seed.
const env: NodeJS.ProcessEnv = { ...process.env, PORT: '', NOTIFY_LOCAL_DELIVERY: '', NOTIFY_LOCAL_SEED: '' };
for (const name of Object.keys(env)) if (name.startsWith('SERVICE__AUTH__')) delete env[name];
delete env.NOTIFY_DEV_AUTH_FILE;
delete env.NOTIFY_DATA_DIR;
delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
delete env.POWERTOOLS_LOG_LEVEL;
const repoDevAuth = join(REPO_ROOT, '.data', 'dev-auth.json');
const repoDevAuthState = () => (existsSync(repoDevAuth) ? statSync(repoDevAuth).mtimeMs : 'absent');

const run = promisify(execFile);
const started: ChildProcess[] = [];
afterAll(() => {
  // Each child leads its own process group: a failed test still takes npm, tsx, node and Java down.
  for (const child of started) {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  rmSync(work, { recursive: true, force: true });
});

/** Every process below `pid` (npm, tsx, node, java...), read from ps. */
const descendants = (pid: number): number[] => {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift();
    for (const [child, ppid] of table) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const startCli = async (port: number, extraArgs: string[] = []) => {
  const child = spawn('npm', ['start', '--', '--port', String(port), '--data', dataDir, ...extraArgs], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  let output = '';
  let errors = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (let waited = 0; !/Ctrl-C stops everything/.test(output); waited += 100) {
    if (child.exitCode !== null || waited > 90_000) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const line = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(output)?.[1];
  const token = (label: string) => new RegExp(`${label} token .*?\\): (\\S+)`).exec(output)?.[1];
  return {
    child,
    exited,
    output: () => output,
    errors: () => errors,
    restUrl: line('REST'),
    wsUrl: line('WebSocket'),
    userToken: token('user'),
    serviceToken: token('service'),
  };
};

/** `npm start -- ARGS` that is expected to give up: its exit code and stderr. */
const startCliToExit = (args: string[]) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn('npm', ['start', '--', ...args], { cwd: REPO_ROOT, env, detached: true });
    started.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('exit', (code) => resolve({ code, stderr }));
  });

const stopCli = async (cli: Awaited<ReturnType<typeof startCli>>, signal: NodeJS.Signals) => {
  const tree = descendants(cli.child.pid as number);
  expect(tree.length).toBeGreaterThan(0);
  cli.child.kill(signal);
  // npm forwards the signal to the runtime, then reports it in its own exit code (128 + signal number).
  expect([0, 128 + os.constants.signals[signal]]).toContain(await cli.exited);
  for (let attempt = 0; attempt < 50 && tree.some(isAlive); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(tree.filter(isAlive)).toEqual([]);
};

const waitFor = async (condition: () => boolean) => {
  for (let attempt = 0; attempt < 200 && !condition(); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(condition()).toBe(true);
};

const unreadCount = async (restUrl: string, token: string) => {
  const response = await fetch(`${restUrl}/notifications/unread-count`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { count: number }).count;
};

describe('npm start', () => {
  it('runs the service, keeps --data across a restart and leaves no process behind', async () => {
    const port = await freePort();
    const repoDevAuthBefore = repoDevAuthState();
    const first = await startCli(port);
    expect(first.restUrl).toBe(`http://127.0.0.1:${port}/api/v1`);
    expect(first.wsUrl).toBe(`ws://127.0.0.1:${port}/ws`);
    expect((await fetch(`${first.restUrl}/ready`)).status).toBe(200);
    const demo = await fetch(`http://127.0.0.1:${port}/demo/`);
    expect(demo.status).toBe(200);
    expect(await demo.text()).toContain('<script type="module" src="app.js">');

    const socket = new WebSocket(`${first.wsUrl}?token=${first.userToken}`);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.close();

    const created = await fetch(`${first.restUrl}/notifications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.serviceToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ event_type: 'cli.test', title: 'kept', recipient_ids: ['dev-user'] }),
    });
    expect(created.status).toBe(202);
    let count = 0;
    for (let attempt = 0; attempt < 200 && count === 0; attempt += 1) {
      count = await unreadCount(first.restUrl as string, first.userToken as string);
      if (count === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(count).toBe(1);
    // One short line per request, naming its own route, no JSON record and no 9-line SDK warning.
    await waitFor(() =>
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}202 notifications\.create \d+ms/m.test(first.output()),
    );
    expect(first.output()).not.toContain('{"level"');
    expect(first.output() + first.errors()).not.toContain('NodeVersionSupportWarning');
    // The secret lives with the data it protects, not in the repository's .data/.
    expect(first.output()).toContain(`(saved in ${join(dataDir, 'dev-auth.json')})`);
    expect(existsSync(join(dataDir, 'dev-auth.json'))).toBe(true);

    // AWS-like delivery is on, with the seed that repeats the run.
    expect(first.output()).toMatch(/Delivery {3}AWS-like delivery .*, seed (\d+): repeat with --seed \1 /);
    // The banner's ready-to-paste commands work as pasted (wscat is not a dependency: npx would download it).
    const banner = first.output();
    const commands = banner
      .slice(banner.indexOf('Try it'), banner.indexOf('Ctrl-C stops everything'))
      .split('\n')
      .slice(1)
      .filter((line) => !/npx wscat/.test(line))
      .join('\n');
    expect(commands).toContain(`export NOTIFY_USER_TOKEN=${first.userToken}`);
    const pasted = await run('sh', ['-c', `set -e\n${commands}`], {
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(pasted.stdout).toMatch(/"status":"accepted"/);
    expect(pasted.stdout).toMatch(/"items":\[/);
    expect(pasted.stdout).toContain('All 9 checks passed.');
    const kept = await unreadCount(first.restUrl as string, first.userToken as string);
    await stopCli(first, 'SIGTERM');

    const second = await startCli(port, ['--json-logs']);
    const minted = execFileSync(
      'npm',
      ['run', '--silent', 'token', '--', '--data', dataDir, '--user', 'dev-user'],
      { cwd: REPO_ROOT, env, encoding: 'utf8' },
    ).trim();
    expect(await unreadCount(second.restUrl as string, minted)).toBe(kept);
    await waitFor(() => second.output().includes('"message":"request"'));
    const record = second
      .output()
      .split('\n')
      .find((line) => line.includes('"message":"request"'));
    expect(JSON.parse(record as string)).toMatchObject({ level: 'INFO', status: 200 });
    await stopCli(second, 'SIGINT');
    expect(repoDevAuthState()).toBe(repoDevAuthBefore);
  }, 240_000);

  // Each start that gives up is npm, a shell and a TypeScript load: the three run side by side.
  it.concurrent('refuses a --cors-origins entry that is not an origin, in one line, before starting anything', async () => {
    const result = await startCliToExit(['--port', '1', '--cors-origins', 'https://app.example.test/']);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('notify:'))).toEqual([
      'notify: --cors-origins: "https://app.example.test/" is not an origin: write it as https://app.example.test ' +
        '(scheme, host and port only, lower case, no trailing slash)',
    ]);
  }, 60_000);

  it.concurrent('refuses a --seed that is not a number, in one line, before starting anything', async () => {
    const result = await startCliToExit(['--port', '1', '--seed', 'lucky']);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('notify:'))).toEqual([
      'notify: not a seed: lucky',
    ]);
  }, 60_000);

  it.concurrent('explains a port in use in one line and exits 1', async () => {
    const port = await freePort();
    const holder = (await import('node:net')).createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    try {
      const result = await startCliToExit(['--port', String(port)]);
      expect(result.code).toBe(1);
      const lines = result.stderr.split('\n').filter((line) => line.startsWith('notify:'));
      expect(lines).toEqual([
        `notify: Port ${port} is already in use: stop what runs there or choose another with --port or PORT`,
      ]);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      holder.close();
    }
  }, 60_000);
});
