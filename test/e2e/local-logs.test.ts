import { afterAll, beforeAll, expect, it } from 'vitest';
import { wiring } from '../../lib/wiring';
import { localFunctionName } from '../../local/lambda/runner';
import { type Runtime, startTestRuntime } from '../support/runtime';

/**
 * The local runtime runs every function in one process, at the same time: each log record still names the
 * function and the request that wrote it, as each Lambda environment's records do.
 */
let runtime: Runtime;
const records: Record<string, unknown>[] = [];
const write = process.stdout.write.bind(process.stdout);

beforeAll(async () => {
  // The access log is at INFO (vitest.config.ts keeps handlers at WARN); read before the first handler loads.
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
    if (text.startsWith('{"level"')) {
      records.push(JSON.parse(text) as Record<string, unknown>);
      return true;
    }
    return write(chunk as string, ...(rest as []));
  }) as typeof process.stdout.write;
  runtime = await startTestRuntime();
});
afterAll(async () => {
  await runtime?.stop();
  process.stdout.write = write;
});

const functionOf = (routeId: string): string => {
  const route = wiring.httpRoutes.find((candidate) => candidate.id === routeId);
  if (!route) throw new Error(`no route ${routeId}`);
  return localFunctionName(route);
};

it('names the function and request of every record while requests to different routes run at once', async () => {
  const user = await runtime.mintUserToken('log-reader');
  const service = await runtime.mintServiceToken('log-writer', ['notifications:write']);
  const run = Date.now();
  const requests = [
    { route: 'notifications.unreadCount', path: '/notifications/unread-count', token: user },
    { route: 'notifications.feed', path: '/notifications', token: user },
    { route: 'presence.scope', path: '/presence?scope=room:lobby', token: user },
    { route: 'presence.user', path: '/presence/log-reader', token: user },
    { route: 'notifications.create', path: '/notifications', token: service, method: 'POST' },
  ];
  const sent = Array.from({ length: 4 }, (_, round) =>
    requests.map((request, index) => ({ ...request, requestId: `logs-${run}-${round}-${index}` })),
  ).flat();
  const statuses = await Promise.all(
    sent.map(async ({ path, token, method, requestId }) => {
      const response = await fetch(`${runtime.httpUrl}${path}`, {
        method: method ?? 'GET',
        headers: {
          authorization: `Bearer ${token}`,
          'x-request-id': requestId,
          'content-type': 'application/json',
        },
        ...(method === 'POST'
          ? {
              body: JSON.stringify({
                event_type: 'logs.test',
                title: 'hello',
                recipient_ids: ['log-reader'],
              }),
            }
          : {}),
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  expect(statuses.filter((status) => status >= 300)).toEqual([]);

  for (const { route, requestId } of sent) {
    const own = records.filter((record) => record.request_id === requestId);
    // At least the access log line; every record with this request id is this route's, in its function.
    expect(own.length, requestId).toBeGreaterThanOrEqual(1);
    for (const record of own) {
      expect(record, JSON.stringify(record)).toMatchObject({ route, function_name: functionOf(route) });
    }
    const accessLines = records.filter((record) => record.message === 'request' && record.route === route);
    expect(accessLines.filter((record) => record.request_id === requestId)).toHaveLength(1);
  }
  // Each access log line carries its own Lambda request id: no two requests share one.
  const accessLog = records.filter((record) => record.message === 'request');
  const awsRequestIds = accessLog.map((record) => record.function_request_id ?? record.aws_request_id);
  expect(new Set(awsRequestIds).size).toBe(accessLog.length);
  // Worker records name their worker's function, never an HTTP route.
  for (const record of records.filter((candidate) => candidate.worker !== undefined)) {
    expect(record.route, JSON.stringify(record)).toBeUndefined();
    expect(String(record.function_name)).toMatch(/^notify-local-/);
  }
}, 60_000);
