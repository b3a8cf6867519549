/**
 * `npm start`: the whole service on this machine (docs/local-runtime.md).
 *
 *   npm start [-- --port 3000] [-- --data .data/local]      (or PORT / NOTIFY_DATA_DIR)
 *             [-- --cors-origins https://a.test,http://localhost:5173 | '*' | none]   (or NOTIFY_CORS_ORIGINS)
 */
import { ConfigError } from '../../lambdas/core/config';
import { invalidOriginReason } from '../../lib/wiring';
import { ALL_SCOPES, devAuthFile, hasAuthSettings, readDevAuth, writeDevAuth } from '../dev-auth';
import { JavaMissingError } from '../dynamodb-local';
import { PortInUseError } from '../gateway/server';
import { type Runtime, startRuntime } from '../runtime';
import { fail, parseCliArgs } from './args';

const USAGE = 'npm start -- [--port N] [--data DIR] [--cors-origins ORIGIN,ORIGIN… | * | none]';
const PRINTED_TOKEN_SECS = 24 * 3600;

const args = parseCliArgs(
  {
    port: { type: 'string' },
    data: { type: 'string' },
    'cors-origins': { type: 'string' },
    help: { type: 'boolean' },
  },
  USAGE,
);
if (args.help) {
  process.stdout.write(`usage: ${USAGE}\n`);
  process.exit(0);
}
const portText = (args.port as string | undefined) ?? process.env.PORT ?? '3000';
const port =
  /^\d{1,5}$/.test(portText) && Number(portText) <= 65535
    ? Number(portText)
    : fail(`not a port: ${portText}`);
const dataDir = (args.data as string | undefined) ?? (process.env.NOTIFY_DATA_DIR || undefined);
const devAuth = !hasAuthSettings(process.env);
/** The stage setting cors.allowed_origins, comma-separated; `none` configures no CORS (as a stage without it). */
const corsText = (
  (args['cors-origins'] as string | undefined) ??
  process.env.NOTIFY_CORS_ORIGINS ??
  '*'
).trim();
const corsOrigins =
  corsText === 'none'
    ? []
    : corsText
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean);
if (corsOrigins.includes('*') && corsOrigins.length > 1)
  fail('--cors-origins: "*" allows every origin: list it alone');
for (const origin of corsOrigins) {
  const reason = invalidOriginReason(origin);
  if (reason) fail(`--cors-origins: ${reason}`);
}

let runtime: Runtime | undefined;
try {
  runtime = await startRuntime({
    port,
    corsOrigins,
    ...(dataDir ? { dataDir } : {}),
    ...(devAuth ? { devSecret: readDevAuth()?.secret } : {}),
  });
} catch (error) {
  if (error instanceof PortInUseError || error instanceof JavaMissingError || error instanceof ConfigError) {
    fail(error.message);
  }
  fail(`could not start: ${(error as Error).message}`);
}
const running = runtime as Runtime;

let stopping = false;
const shutdown = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${signal}: stopping…\n`);
  // Never hang on a stuck stand-in: everything started is a child of this process or inside it.
  setTimeout(() => process.exit(1), 15_000).unref();
  running.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
// For supervisors (tests) that may die without a signal: stop when the stdin pipe they hold closes.
if (process.env.NOTIFY_STOP_ON_STDIN_END === '1') {
  process.stdin.on('end', () => shutdown('stdin closed'));
  process.stdin.resume();
}

const lines = [
  'Notify is running on local stand-ins',
  `  REST       ${running.httpUrl}`,
  `  WebSocket  ${running.wsUrl}`,
  `  Data       ${dataDir ? `${dataDir} (kept across restarts)` : 'in memory'}`,
  `  CORS       ${corsOrigins.length ? corsOrigins.join(', ') : 'none (browser pages of other origins are refused)'}`,
];
if (devAuth && running.hs256) {
  writeDevAuth(running.hs256);
  const user = await running.mintUserToken('dev-user', { expiresInSecs: PRINTED_TOKEN_SECS });
  const service = await running.mintServiceToken('dev-service', ALL_SCOPES, {
    expiresInSecs: PRINTED_TOKEN_SECS,
  });
  lines.push(
    '',
    'No SERVICE__AUTH__* settings: development HS256 auth',
    `  issuer ${running.hs256.issuer}, audiences ${running.hs256.audience} / ${running.hs256.serviceAudience}`,
    `  secret         ${running.hs256.secret}   (saved in ${devAuthFile()})`,
    `  user token     (sub dev-user, 24 h): ${user}`,
    `  service token  (dev-service, ${ALL_SCOPES.join(' ')}, 24 h): ${service}`,
    '  more tokens:   npm run token -- --user alice [--roles admin]',
  );
}
lines.push('', 'Ctrl-C stops everything.');
process.stdout.write(`${lines.join('\n')}\n`);
