/**
 * `npm run smoke`: black-box checks of a running Notify — a deployed stage (its stack outputs) or `npm start`.
 *
 *   npm run smoke -- --api <HttpApiUrl> --ws <WebSocketUrl>          (or NOTIFY_API_URL / NOTIFY_WS_URL)
 *
 * Tokens come from the environment: NOTIFY_USER_TOKEN and NOTIFY_SERVICE_TOKEN (scope notifications:write), or,
 * where auth.replay_protection makes them single-use ("service", "all"), NOTIFY_SERVICE_TOKEN_COMMAND /
 * NOTIFY_USER_TOKEN_COMMAND: shell commands printing a fresh token, run once per request. The same user
 * (the token's `sub`) gets one notification, marked read at the end. Exit code 0 when every check passes.
 */
import '../local/sdk-env';
import { execSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { WebSocket } from 'ws';
import { fail, parseCliArgs } from '../local/cli/args';

const USAGE = 'npm run smoke -- --api <HttpApiUrl> --ws <WebSocketUrl> [--timeout SECONDS]';
const DETAILS = `Checks a running Notify from outside: health, the error format, the WebSocket handshake, a notification
created, delivered in realtime, listed in the feed and marked read.
  --api URL         the HttpApiUrl stack output, ending in /api/v1 (or NOTIFY_API_URL)
  --ws URL          the WebSocketUrl stack output, ending in /ws (or NOTIFY_WS_URL)
  --timeout SECONDS how long to wait for asynchronous delivery, default 30
Tokens: NOTIFY_USER_TOKEN and NOTIFY_SERVICE_TOKEN (notifications:write), or NOTIFY_USER_TOKEN_COMMAND and
NOTIFY_SERVICE_TOKEN_COMMAND (a shell command printing a fresh token, run per request: needed where
auth.replay_protection makes those tokens single-use, "service" or "all").`;

const args = parseCliArgs(
  { api: { type: 'string' }, ws: { type: 'string' }, timeout: { type: 'string' } },
  USAGE,
  DETAILS,
);
const apiUrl = ((args.api as string | undefined) ?? process.env.NOTIFY_API_URL ?? '').replace(/\/+$/, '');
const wsUrl = ((args.ws as string | undefined) ?? process.env.NOTIFY_WS_URL ?? '').replace(/\/+$/, '');
if (!/^https?:\/\/\S+\/api\/v1$/.test(apiUrl)) {
  fail(`--api must be the HttpApiUrl output (http(s)://…/api/v1), got "${apiUrl}"\nusage: ${USAGE}`);
}
if (!/^wss?:\/\/\S+$/.test(wsUrl))
  fail(`--ws must be the WebSocketUrl output (ws(s)://…), got "${wsUrl}"\nusage: ${USAGE}`);
const timeoutText = (args.timeout as string | undefined) ?? '30';
if (!/^\d{1,4}$/.test(timeoutText) || Number(timeoutText) < 1)
  fail(`--timeout must be seconds, got ${timeoutText}`);
const timeoutMs = Number(timeoutText) * 1000;

/** A token source: the variable's token, or the output of the variable's command, run each time. */
const tokenSource = (kind: 'USER' | 'SERVICE'): (() => string) => {
  const command = process.env[`NOTIFY_${kind}_TOKEN_COMMAND`]?.trim();
  if (command) {
    return () => {
      try {
        return execSync(command, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
      } catch (error) {
        throw new Error(`NOTIFY_${kind}_TOKEN_COMMAND failed: ${(error as Error).message.split('\n')[0]}`);
      }
    };
  }
  const token = process.env[`NOTIFY_${kind}_TOKEN`]?.trim();
  if (!token) {
    return fail(`set NOTIFY_${kind}_TOKEN or NOTIFY_${kind}_TOKEN_COMMAND (npm run smoke -- --help)`);
  }
  return () => token;
};
const userToken = tokenSource('USER');
const serviceToken = tokenSource('SERVICE');

class CheckFailed extends Error {}
const expectThat = (condition: unknown, message: string): void => {
  if (!condition) throw new CheckFailed(message);
};

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
  readonly text: string;
}

/**
 * One request. `token` is a source, asked again for a retry (a single-use token may have been spent). Requests
 * that may be repeated (`idempotent`) are sent once more after a connection failure — typically a keep-alive
 * connection the server closed while this process waited for a token command.
 */
const call = async (
  method: string,
  path: string,
  options: { readonly token?: () => string; readonly body?: unknown; readonly idempotent?: boolean } = {},
): Promise<Answer> => {
  const { token, body, idempotent = method === 'GET' } = options;
  const send = async () => {
    const bearer = token?.();
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: {
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    return { response, text: await response.text() };
  };
  let sent: Awaited<ReturnType<typeof send>>;
  try {
    sent = await send();
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (!idempotent || !(error instanceof TypeError)) {
      throw new CheckFailed(
        `${method} ${path}: ${(error as Error).message} (${cause?.code ?? cause?.message ?? 'no cause'})`,
      );
    }
    sent = await send();
  }
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(sent.text) as Record<string, unknown>;
  } catch {
    // not JSON: the checks say so
  }
  return { status: sent.response.status, headers: sent.response.headers, body: parsed, text: sent.text };
};

/** What a refused token means here, for the report. */
const explain = (answer: Answer): string => {
  const hint = /already been used/.test(String(answer.body.message))
    ? ' (the stage has replay protection: give NOTIFY_*_TOKEN_COMMAND instead of a token)'
    : '';
  return `${answer.status} ${answer.text.slice(0, 300)}${hint}`;
};

const expectStatus = (answer: Answer, status: number, what: string): void =>
  expectThat(answer.status === status, `${what}: expected ${status}, got ${explain(answer)}`);

/** The contract's error body (§7) and the correlation header. */
const expectErrorBody = (answer: Answer, code: string): void => {
  expectThat(answer.body.code === code, `expected code "${code}", got ${answer.text.slice(0, 300)}`);
  expectThat(typeof answer.body.message === 'string', 'the error has no message');
  expectThat(
    typeof answer.body.request_id === 'string' &&
      answer.headers.get('x-request-id') === answer.body.request_id,
    `request_id and X-Request-Id differ: ${answer.body.request_id} / ${answer.headers.get('x-request-id')}`,
  );
};

const until = async <T>(what: string, attempt: () => Promise<T | undefined>): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 250; ; pause = Math.min(pause * 2, 2000)) {
    const result = await attempt();
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new CheckFailed(`${what} within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
};

/** A WebSocket connection that keeps the frames it receives. */
interface Socket {
  readonly frames: Record<string, unknown>[];
  close(): void;
}

const connect = (token: string | undefined): Promise<Socket | { refused: number }> =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(token ? `${wsUrl}?token=${encodeURIComponent(token)}` : wsUrl);
    const frames: Record<string, unknown>[] = [];
    // A cold $connect function (and a loaded machine locally) can take a while: 30 s, as for REST calls.
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new CheckFailed('no WebSocket handshake answer within 30 s'));
    }, 30_000);
    socket.on('message', (data) => {
      try {
        frames.push(JSON.parse(data.toString()) as Record<string, unknown>);
      } catch {
        frames.push({ type: '(not JSON)', text: data.toString() });
      }
    });
    socket.once('open', () => {
      clearTimeout(timer);
      resolve({ frames, close: () => socket.close(1000) });
    });
    socket.once('unexpected-response', (_request, response) => {
      clearTimeout(timer);
      socket.terminate();
      resolve({ refused: response.statusCode ?? 0 });
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(new CheckFailed(`WebSocket error: ${error.message}`));
    });
  });

const results: { name: string; error?: string }[] = [];
const check = async (name: string, body: () => Promise<void>): Promise<boolean> => {
  try {
    await body();
    results.push({ name });
    process.stdout.write(`  ok    ${name}\n`);
    return true;
  } catch (error) {
    const message =
      error instanceof CheckFailed ? error.message : `${(error as Error).name}: ${(error as Error).message}`;
    results.push({ name, error: message });
    process.stdout.write(`  FAIL  ${name}\n        ${message}\n`);
    return false;
  }
};

process.stdout.write(`Smoke test of ${apiUrl} and ${wsUrl}\n`);
const marker = `smoke-${randomUUID()}`;
let userId = '';
let socket: Socket | undefined;
let created: string | undefined;
let receiverId: string | undefined;

await check('GET /health answers 200 {"status":"ok"}', async () => {
  const answer = await call('GET', '/health');
  expectStatus(answer, 200, 'GET /health');
  expectThat(answer.body.status === 'ok', `status is not ok: ${answer.text.slice(0, 300)}`);
});

await check('a request without a token gets 401 in the contract error format', async () => {
  const answer = await call('GET', '/notifications');
  expectStatus(answer, 401, 'GET /notifications without a token');
  expectErrorBody(answer, 'unauthorized');
});

await check('an unknown path gets 404 in the contract error format', async () => {
  const answer = await call('GET', `/${marker}`);
  expectStatus(answer, 404, `GET /${marker}`);
  expectErrorBody(answer, 'not_found');
});

await check('a WebSocket handshake with a bad token is refused', async () => {
  const result = await connect('not-a-token');
  if ('frames' in result) {
    result.close();
    throw new CheckFailed('the connection opened');
  }
  // 401 from the $connect function (contract §5); 403 where a gateway in front refuses first.
  expectThat(result.refused === 401 || result.refused === 403, `expected 401, got ${result.refused}`);
});

const connected = await check('a user connects over WebSocket and gets its session frame', async () => {
  const token = userToken();
  const sub = decodeJwt(token).sub;
  expectThat(typeof sub === 'string' && sub !== '', 'the user token has no sub');
  userId = sub as string;
  const result = await connect(token);
  if (!('frames' in result)) throw new CheckFailed(`handshake refused with ${result.refused}`);
  socket = result;
  const open = result;
  await until('no session frame', async () =>
    open.frames.some((frame) => frame.type === 'session') ? true : undefined,
  );
});

await check('a service creates a notification for that user: 202', async () => {
  expectThat(userId, 'no user (the WebSocket check failed)');
  const answer = await call('POST', '/notifications', {
    token: serviceToken,
    body: {
      event_type: 'notify.smoke',
      title: `Smoke test ${marker}`,
      body: 'Sent by npm run smoke; marked read when it passes.',
      channels: ['in_app', 'realtime'],
      recipient_ids: [userId],
    },
  });
  expectStatus(answer, 202, 'POST /notifications');
  expectThat(typeof answer.body.id === 'string', `no id in ${answer.text.slice(0, 300)}`);
  created = answer.body.id as string;
});

await check('the notification arrives as a realtime frame', async () => {
  expectThat(connected && socket && created, 'nothing to wait for (an earlier check failed)');
  const open = socket as Socket;
  await until('no notification frame', async () =>
    open.frames.some((frame) => frame.type === 'notification' && frame.notification_id === created)
      ? true
      : undefined,
  );
});

await check("it is in the user's feed", async () => {
  expectThat(created, 'nothing to look for (the create check failed)');
  const item = await until(`notification ${created} not in the feed`, async () => {
    const answer = await call('GET', '/notifications?limit=20', { token: userToken });
    expectStatus(answer, 200, 'GET /notifications');
    const items = (answer.body.items ?? []) as { id: string; notification_id: string }[];
    return items.find((entry) => entry.notification_id === created);
  });
  receiverId = item.id;
});

await check('the user marks it read', async () => {
  expectThat(receiverId, 'nothing to mark (the feed check failed)');
  // Marking read is idempotent (docs/notifications.md): safe to send again after a connection failure.
  const answer = await call('POST', `/notifications/${encodeURIComponent(receiverId as string)}/read`, {
    token: userToken,
    idempotent: true,
  });
  expectThat(
    answer.status >= 200 && answer.status < 300,
    `POST …/read: expected 2xx, got ${explain(answer)}`,
  );
});

socket?.close();
const failed = results.filter((result) => result.error);
process.stdout.write(
  failed.length === 0
    ? `All ${results.length} checks passed.\n`
    : `${failed.length} of ${results.length} checks failed.\n`,
);
process.exit(failed.length === 0 ? 0 : 1);
