/**
 * `npm start`: the whole service on this machine (docs/local-runtime.md).
 *
 *   npm start [-- --port 3000] [-- --data .data/local] [-- --json-logs]      (or PORT / NOTIFY_DATA_DIR)
 *             [-- --cors-origins https://a.test,http://localhost:5173 | '*' | none]   (or NOTIFY_CORS_ORIGINS)
 *             [-- --seed N] [-- --exact-delivery]          (or NOTIFY_LOCAL_SEED / NOTIFY_LOCAL_DELIVERY=exact)
 */
import '../sdk-env';
import { ConfigError } from '../../common/settings';
import { invalidOriginReason } from '../../lib/wiring';
import { describeDelivery } from '../delivery';
import { ALL_SCOPES, devAuthFile, hasAuthSettings, readDevAuth, writeDevAuth } from '../dev-auth';
import { JavaMissingError } from '../dynamodb-local';
import { PortInUseError } from '../gateway/server';
import { shortenLogRecords } from '../log-format';
import { type Runtime, startRuntime } from '../runtime';
import { fail, parseCliArgs } from './args';

const USAGE =
  'npm start -- [--port N] [--data DIR] [--cors-origins ORIGIN,ORIGIN… | * | none] [--json-logs] [--seed N] [--exact-delivery]';
const DETAILS = `Runs the whole service on local stand-ins (DynamoDB Local needs Java 17+).
  --port N        HTTP and WebSocket port (or PORT), default 3000
  --data DIR      keep data, and the development auth secret, in DIR across restarts (or NOTIFY_DATA_DIR);
                  default: data in memory, the secret in .data/dev-auth.json
  --cors-origins  origins browser pages may call from, comma-separated, '*' (default) or none
                  (or NOTIFY_CORS_ORIGINS)
  --json-logs     print the functions' log records as JSON lines, as CloudWatch gets them (default: one short line)
  --seed N        repeat the choices of an earlier run's AWS-like delivery (or NOTIFY_LOCAL_SEED; printed at start)
  --exact-delivery  turn AWS-like delivery off while debugging: each SQS message once and in order, events
                  delivered before PutEvents answers, $disconnect always (or NOTIFY_LOCAL_DELIVERY=exact)`;
const PRINTED_TOKEN_SECS = 24 * 3600;

const args = parseCliArgs(
  {
    port: { type: 'string' },
    data: { type: 'string' },
    'cors-origins': { type: 'string' },
    'json-logs': { type: 'boolean' },
    seed: { type: 'string' },
    'exact-delivery': { type: 'boolean' },
  },
  USAGE,
  DETAILS,
);
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
const seedText = args.seed as string | undefined;
const seed =
  seedText === undefined
    ? undefined
    : /^\d{1,15}$/.test(seedText)
      ? Number(seedText)
      : fail(`not a seed: ${seedText}`);
/**
 * Tests that wait out a function's timeout in `npm start` (a restart, then a dead holder's claim expiring):
 * `NOTIFY_LOCAL_FUNCTION_TIMEOUTS=webhooks.match=10,push.deliver=10` shortens those (RuntimeOptions.functionTimeouts).
 */
const functionTimeouts = Object.fromEntries(
  (process.env.NOTIFY_LOCAL_FUNCTION_TIMEOUTS ?? '')
    .split(',')
    .filter((entry) => entry.trim() !== '')
    .map((entry) => {
      const [id = '', secs = ''] = entry.trim().split('=');
      return /^\d{1,3}$/.test(secs)
        ? [id, Number(secs)]
        : fail(`NOTIFY_LOCAL_FUNCTION_TIMEOUTS: not "function id=seconds": ${entry}`);
    }),
);
if (!args['json-logs']) {
  shortenLogRecords(process.stdout);
  shortenLogRecords(process.stderr);
}

let runtime: Runtime | undefined;
try {
  runtime = await startRuntime({
    port,
    corsOrigins,
    demo: true,
    delivery: {
      ...(args['exact-delivery'] ? { mode: 'exact' as const } : {}),
      ...(seed !== undefined ? { seed } : {}),
    },
    ...(dataDir ? { dataDir } : {}),
    functionTimeouts,
    ...(devAuth ? { devSecret: readDevAuth(devAuthFile(dataDir))?.secret } : {}),
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

const nodeMajor = Number(process.versions.node.split('.')[0]);
const lines = [
  'Notify is running on local stand-ins',
  `  REST       ${running.httpUrl}`,
  `  WebSocket  ${running.wsUrl}`,
  `  Demo inbox ${running.demoUrl} (local only: docs/demo.md${devAuth ? '' : '; SERVICE__AUTH__* set, so it asks for a user token'})`,
  `  Data       ${dataDir ? `${dataDir} (kept across restarts)` : 'in memory'}`,
  `  CORS       ${corsOrigins.length ? corsOrigins.join(', ') : 'none (browser pages of other origins are refused)'}`,
  `  Logs       one line per record below${args['json-logs'] ? ', as JSON' : ' (--json-logs for JSON)'}`,
  `  Delivery   ${describeDelivery(running.delivery)}`,
  ...(running.standIns.push.length > 0
    ? running.standIns.push.map(
        (standIn, index) =>
          `  ${index === 0 ? 'Push      ' : '          '} ${standIn.provider.padEnd(8)} ${standIn.url}`,
      )
    : ['  Push       no provider stand-ins (local/push/stand-ins.ts)']),
  // The SDK's own 9-line warning is switched off (../sdk-env.ts); this says the same in one line.
  ...(nodeMajor < 22
    ? [
        `  Node       ${process.version}: works, but AWS SDK releases after early January 2027 need Node 22+ (README)`,
      ]
    : []),
];
const tryIt = [
  `  export NOTIFY_API_URL=${running.httpUrl} NOTIFY_WS_URL=${running.wsUrl}`,
  ...(devAuth ? [] : ['  export NOTIFY_USER_TOKEN=<a user token> NOTIFY_SERVICE_TOKEN=<a service token>']),
];
if (devAuth && running.hs256) {
  const authFile = devAuthFile(dataDir);
  writeDevAuth(running.hs256, authFile);
  const user = await running.mintUserToken('dev-user', { expiresInSecs: PRINTED_TOKEN_SECS });
  const service = await running.mintServiceToken('dev-service', ALL_SCOPES, {
    expiresInSecs: PRINTED_TOKEN_SECS,
  });
  lines.push(
    '',
    'No SERVICE__AUTH__* settings: development HS256 auth',
    `  issuer ${running.hs256.issuer}, audiences ${running.hs256.audience} / ${running.hs256.serviceAudience}`,
    `  secret         ${running.hs256.secret}   (saved in ${authFile})`,
    `  user token     (sub dev-user, 24 h): ${user}`,
    `  service token  (dev-service, ${ALL_SCOPES.join(' ')}, 24 h): ${service}`,
    `  more tokens:   npm run -s token -- ${dataDir ? `--data ${dataDir} ` : ''}--user alice [--roles admin]`,
  );
  tryIt.push(`  export NOTIFY_USER_TOKEN=${user}`, `  export NOTIFY_SERVICE_TOKEN=${service}`);
}
const recipient = devAuth ? 'dev-user' : "<the user token's sub>";
lines.push(
  '',
  'Try it from another terminal (paste the exports first):',
  ...tryIt,
  '  npx wscat -c "$NOTIFY_WS_URL?token=$NOTIFY_USER_TOKEN"     # watch the user\'s realtime frames',
  '  curl -sS -X POST "$NOTIFY_API_URL/notifications" -H "Authorization: Bearer $NOTIFY_SERVICE_TOKEN" \\',
  "    -H 'Content-Type: application/json' \\",
  `    -d '{"event_type":"demo.hello","title":"Hello","channels":["in_app","realtime"],"recipient_ids":["${recipient}"]}'`,
  '  curl -sS "$NOTIFY_API_URL/notifications" -H "Authorization: Bearer $NOTIFY_USER_TOKEN"',
  "  npm run pushes                                             # what the user's devices would have received",
  '  npm run smoke                                              # the deployment smoke test, run against this',
  '',
  'Ctrl-C stops everything.',
);
process.stdout.write(`${lines.join('\n')}\n`);
