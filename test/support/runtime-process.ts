import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../local/dynamodb-local';
import { REPO_ROOT } from '../../local/lambda/runner';

/**
 * The local runtime as `npm start -- --port P --data DIR` in a child process of its own process group, for
 * tests that kill it (SIGKILL takes npm, tsx, node and Java down at once, as a crash or power loss would) and
 * start it again on the same data folder. The dev HS256 settings live in `<work>/dev-auth.json`, so tokens
 * minted once stay valid across restarts (same port, same issuer).
 */
export interface RuntimeProcess {
  readonly restUrl: string;
  readonly port: number;
  /** SIGKILL to the whole process group; resolves once npm has exited. */
  crash(): Promise<void>;
  /** SIGTERM: a clean stop. */
  stop(): Promise<void>;
  /** The last few KB of its stderr (handler error logs), for failure messages. */
  stderr(): string;
}

export const runtimeProcessEnv = (work: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NOTIFY_DEV_AUTH_FILE: join(work, 'dev-auth.json'),
    PORT: '',
    // Handler logs of the child are not read here; errors still go to its stderr.
    POWERTOOLS_LOG_LEVEL: 'ERROR',
  };
  for (const name of Object.keys(env)) if (name.startsWith('SERVICE__AUTH__')) delete env[name];
  return env;
};

export const startRuntimeProcess = async (options: {
  readonly work: string;
  readonly dataDir: string;
  readonly port?: number;
  readonly env?: Record<string, string>;
  readonly startTimeoutMs?: number;
}): Promise<RuntimeProcess> => {
  const port = options.port ?? (await freePort());
  const child: ChildProcess = spawn(
    'npm',
    ['start', '--', '--port', String(port), '--data', options.dataDir],
    {
      cwd: REPO_ROOT,
      env: { ...runtimeProcessEnv(options.work), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = `${errors}${chunk.toString()}`.slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // already gone
    }
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  while (!/Ctrl-C stops everything/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      signalGroup('SIGKILL');
      throw new Error(`npm start did not come up:\n${output}\n${errors}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    restUrl: `http://127.0.0.1:${port}/api/v1`,
    port,
    crash: async () => {
      signalGroup('SIGKILL');
      await exited;
    },
    stop: async () => {
      signalGroup('SIGTERM');
      await exited;
    },
    stderr: () => errors,
  };
};
