/**
 * Reliability suite, hostile input: property-based fuzzing (fast-check) of every write endpoint and every
 * WebSocket frame type, over real HTTP and WebSocket connections on the local runtime. Properties:
 * never a 5xx; every error in the contract's shape (`code`, `message`, `request_id`, and `details` for
 * `validation`, nothing else) with the status its code stands for, and every answer as docs/api/openapi.json
 * documents the operation; nothing stored on a 4xx (the tables the
 * route may write hold as many items after as before); a frame is always answered by an ack or a contract
 * error frame (never `internal`), and the connection stays open.
 *
 * Short form (inside `npm test`, ~20 s): 5 cases per endpoint and frame type. Long form: RELIABILITY_LONG=1, 2,000 each.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { STATUS_OF } from '../../lambdas/core/errors';
import { httpRouteById } from '../../lib/wiring';
import { assertDocumentedResponse } from '../support/api-conformance';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

/** Cases per endpoint or frame type (RELIABILITY_RUNS overrides, e.g. to reproduce a long-form finding). */
const RUNS = Number(process.env.RELIABILITY_RUNS) || (LONG ? 2_000 : 5);
/** Time per property: a case takes well under a second even on a loaded machine. */
const TIMEOUT_MS = Math.max(60_000, RUNS * 1_000);

let runtime: Runtime;
const tokens: Record<'user' | 'writer' | 'publisher' | 'admin' | 'broadcaster', string> = {
  user: '',
  writer: '',
  publisher: '',
  admin: '',
  broadcaster: '',
};

beforeAll(async () => {
  runtime = await startTestRuntime();
  tokens.user = await runtime.mintUserToken('fuzz-user');
  tokens.writer = await runtime.mintServiceToken('fuzz', ['notifications:write']);
  tokens.publisher = await runtime.mintServiceToken('fuzz', ['events:publish']);
  tokens.admin = await runtime.mintServiceToken('fuzz', ['webhooks:admin']);
  tokens.broadcaster = await runtime.mintServiceToken('fuzz', ['broadcast:write']);
}, 90_000);
afterAll(() => runtime?.stop());

const CONTRACT_KEYS = new Set(['code', 'message', 'request_id', 'details']);

/** Contract §3 error body with the status its code stands for. */
const expectContractError = (status: number, text: string, what: string) => {
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(
    Object.keys(body).every((key) => CONTRACT_KEYS.has(key)),
    `${what}: ${text}`,
  ).toBe(true);
  expect(typeof body.message, what).toBe('string');
  expect(typeof body.request_id, what).toBe('string');
  const code = body.code as keyof typeof STATUS_OF;
  expect(Object.hasOwn(STATUS_OF, code), `${what}: code ${String(code)}`).toBe(true);
  // 431 is the gateway's answer to oversized headers, with the validation body.
  if (status !== 431) expect(STATUS_OF[code], `${what}: ${text}`).toBe(status);
  if (code === 'validation') {
    expect(Array.isArray(body.details), what).toBe(true);
    for (const detail of body.details as Record<string, unknown>[]) {
      expect(typeof detail.field, what).toBe('string');
      expect(typeof detail.issue, what).toBe('string');
    }
  } else {
    expect(body.details, what).toBeUndefined();
  }
};

/** Items in each table the route may write. */
const itemCounts = async (tables: readonly string[]): Promise<number[]> =>
  Promise.all(
    tables.map(async (table) => {
      let count = 0;
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await documentClient().send(
          new ScanCommand({ TableName: tableName(table), Select: 'COUNT', ExclusiveStartKey: startKey }),
        );
        count += page.Count ?? 0;
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return count;
    }),
  );

/** Counts once workers of earlier accepted cases went quiet (two equal readings in a row). */
const settledCounts = async (tables: readonly string[]): Promise<number[]> => {
  let previous = await itemCounts(tables);
  for (let attempt = 0; attempt < 50; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 30));
    const current = await itemCounts(tables);
    if (current.join() === previous.join()) return current;
    previous = current;
  }
  return previous;
};

/** A value a field might plausibly hold, or anything at all. */
const maybe = <T>(plausible: fc.Arbitrary<T>) => fc.oneof(plausible, fc.jsonValue());
const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const shortName = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/);
const timestamp = fc
  .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
  .map((date) => date.toISOString());

/** Bodies: near-valid records with random fields missing or wrong, any JSON, or text that is no JSON. */
const bodies = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.record(fields, { requiredKeys: [] }).map((body) => JSON.stringify(body)) },
    { weight: 2, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
  );

const NOTIFICATION_FIELDS = {
  event_type: maybe(shortName),
  title: maybe(text),
  body: maybe(text),
  source: maybe(fc.constantFrom('fuzz', 'fuzz.sub', 'other')),
  data: maybe(fc.dictionary(text, fc.jsonValue(), { maxKeys: 4 })),
  priority: maybe(fc.constantFrom('low', 'normal', 'high', 'urgent')),
  channels: maybe(fc.subarray(['in_app', 'toast', 'realtime'])),
  recipient_ids: maybe(fc.array(fc.constantFrom('fuzz-a', 'fuzz-b', 'fuzz-user'), { maxLength: 3 })),
  topics: maybe(fc.array(shortName, { maxLength: 2 })),
  scheduled_at: maybe(fc.option(timestamp)),
  expires_at: maybe(fc.option(timestamp)),
};

interface Endpoint {
  readonly route: string;
  readonly method: string;
  readonly path: fc.Arbitrary<string>;
  readonly token: keyof typeof tokens;
  readonly body: fc.Arbitrary<string | undefined>;
}

const segment = fc.oneof(
  fc.uuid({ version: 7 }),
  text.filter((value) => value.length > 0 && !/[/?#%]/.test(value) && value !== '.' && value !== '..'),
);
const at = (template: (...parts: string[]) => string, count = 1) =>
  fc.array(segment, { minLength: count, maxLength: count }).map((parts) => template(...parts));
const noBody = fc.constant(undefined);

const ENDPOINTS: readonly Endpoint[] = [
  {
    route: 'notifications.create',
    method: 'POST',
    path: fc.constant('/notifications'),
    token: 'writer',
    body: bodies(NOTIFICATION_FIELDS),
  },
  {
    route: 'notifications.read',
    method: 'POST',
    path: at((id) => `/notifications/${encodeURIComponent(id)}/read`),
    token: 'user',
    body: noBody,
  },
  {
    route: 'notifications.readAll',
    method: 'POST',
    path: fc.constant('/notifications/read-all'),
    token: 'user',
    body: fc.option(
      fc.jsonValue().map((value) => JSON.stringify(value)),
      { nil: undefined },
    ),
  },
  {
    route: 'events.publish',
    method: 'POST',
    path: fc.constant('/events'),
    token: 'publisher',
    body: bodies({
      event_type: maybe(shortName),
      source: maybe(fc.constantFrom('fuzz', 'fuzz.orders', 'aws.fuzz', 'other')),
      version: maybe(fc.integer({ min: -1, max: 3 })),
      data: maybe(fc.dictionary(text, fc.jsonValue(), { maxKeys: 4 })),
      priority: maybe(fc.constantFrom('low', 'normal', 'high', 'urgent')),
      archive: maybe(fc.boolean()),
    }),
  },
  {
    route: 'topics.create',
    method: 'POST',
    path: fc.constant('/topics'),
    token: 'writer',
    body: bodies({ name: maybe(shortName), description: maybe(text) }),
  },
  {
    route: 'subscriptions.create',
    method: 'POST',
    path: fc.constant('/subscriptions'),
    token: 'user',
    body: bodies({ topic: maybe(shortName), user_id: maybe(fc.constantFrom('fuzz-user', 'someone')) }),
  },
  {
    route: 'subscriptions.delete',
    method: 'DELETE',
    path: at((id) => `/subscriptions/${encodeURIComponent(id)}`),
    token: 'user',
    body: noBody,
  },
  {
    route: 'devices.register',
    method: 'POST',
    path: fc.constant('/devices'),
    token: 'user',
    body: bodies({
      token: maybe(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 })),
      platform: maybe(fc.constantFrom('ios', 'android', 'web', 'symbian')),
      provider: maybe(fc.constantFrom('fcm', 'apns', 'webpush', 'expo', 'gcm')),
      apns_environment: maybe(fc.constantFrom('sandbox', 'production', 'development')),
      subscription: maybe(
        fc.record({
          endpoint: fc.constantFrom('https://10.0.0.1/push', 'http://127.0.0.1:9/push', 'not a url'),
          keys: fc.record({ p256dh: text, auth: text }),
        }),
      ),
      app_id: maybe(fc.option(text)),
    }),
  },
  {
    route: 'devices.delete',
    method: 'DELETE',
    path: fc.constant('/devices'),
    token: 'user',
    body: bodies({ token: maybe(text) }),
  },
  {
    route: 'webhooks.create',
    method: 'POST',
    path: fc.constant('/webhooks'),
    token: 'admin',
    body: bodies({
      url: maybe(
        fc.oneof(
          fc.webUrl(),
          fc.constantFrom(
            'http://127.0.0.1:9/hook',
            'https://10.0.0.1/x',
            'https://[::ffff:0:a9fe:a9fe]/',
            ' https://example.com',
            'https://example.com:0/',
          ),
        ),
      ),
      secret: maybe(fc.string({ minLength: 10, maxLength: 40 })),
      event_filters: maybe(fc.array(fc.oneof(shortName, fc.constant('*')), { maxLength: 3 })),
      name: maybe(text),
    }),
  },
  {
    route: 'webhooks.delete',
    method: 'DELETE',
    path: at((id) => `/webhooks/${encodeURIComponent(id)}`),
    token: 'admin',
    body: noBody,
  },
  {
    route: 'webhooks.retry',
    method: 'POST',
    path: at(
      (id, delivery) =>
        `/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(delivery)}/retry`,
      2,
    ),
    token: 'admin',
    body: noBody,
  },
  {
    route: 'broadcast.send',
    method: 'POST',
    path: fc.constant('/broadcast'),
    token: 'broadcaster',
    body: bodies({
      channel: maybe(fc.constantFrom('room:fuzz', 'user:fuzz-user', 'topic:none', 'bogus')),
      payload: maybe(fc.record({ type: maybe(shortName), data: fc.jsonValue() }, { requiredKeys: [] })),
    }),
  },
];

describe('HTTP fuzzing', () => {
  it('covers every write route of the declaration', () => {
    const writes = ENDPOINTS.map((endpoint) => httpRouteById(endpoint.route).method);
    expect(writes.every((method) => method === 'POST' || method === 'DELETE')).toBe(true);
  });

  for (const endpoint of ENDPOINTS) {
    it(
      `${endpoint.method} ${endpoint.route}: no 5xx, contract errors, nothing stored on a 4xx`,
      async () => {
        const tables = httpRouteById(endpoint.route).writes ?? [];
        await fc.assert(
          fc.asyncProperty(
            endpoint.path,
            endpoint.body,
            fc.option(fc.string({ minLength: 1, maxLength: 140 }), { nil: undefined }),
            fc.constantFrom(
              'application/json',
              'application/json; charset=utf-8',
              'text/plain',
              'application/json; charset=latin1',
            ),
            async (path, body, idempotencyKey, contentType) => {
              const before = await settledCounts(tables);
              const response = await fetch(`${runtime.httpUrl}${path}`, {
                method: endpoint.method,
                headers: {
                  authorization: `Bearer ${tokens[endpoint.token]}`,
                  'content-type': contentType,
                  ...(idempotencyKey === undefined
                    ? {}
                    : { 'idempotency-key': encodeURIComponent(idempotencyKey) }),
                },
                ...(body === undefined ? {} : { body }),
              });
              const responseText = await response.text();
              const what = `${endpoint.method} ${path} ${body?.slice(0, 200)} → ${response.status}`;
              expect(response.status, `${what} ${responseText}`).toBeLessThan(500);
              // Every status and body as docs/api/openapi.json describes it for this operation.
              assertDocumentedResponse({
                method: endpoint.method,
                path,
                status: response.status,
                headers: response.headers,
                text: responseText,
              });
              if (response.status >= 400) {
                expectContractError(response.status, responseText, what);
                expect(await itemCounts(tables), `${what}: stored something`).toEqual(before);
              }
            },
          ),
          { numRuns: RUNS },
        );
      },
      TIMEOUT_MS,
    );
  }
});

const FRAME_FIELDS: Record<string, Record<string, fc.Arbitrary<unknown>>> = {
  auth: { token: maybe(fc.string({ maxLength: 100 })) },
  subscribe: {
    channel: maybe(fc.constantFrom('room:fuzz', 'user:fuzz-user', 'user:other', 'topic:none', 'x')),
  },
  unsubscribe: { channel: maybe(fc.constantFrom('room:fuzz', 'user:fuzz-user', 'x')) },
  'join.room': { room_id: maybe(shortName) },
  'join.topic': { topic: maybe(shortName) },
  'presence.update': { status: maybe(fc.constantFrom('online', 'away', 'busy', 'asleep')) },
  reconnect: { session_id: maybe(fc.oneof(fc.uuid({ version: 7 }), text)) },
  heartbeat: {},
};

const WS_ERROR_CODES = new Set([
  'validation',
  'unauthorized',
  'forbidden',
  'not_found',
  'payload_too_large',
  'token_expired',
  'session_expired',
  'rate_limited',
  'unavailable',
]);

describe('WebSocket fuzzing', () => {
  for (const [type, fields] of Object.entries(FRAME_FIELDS)) {
    it(
      `${type}: always an ack or a contract error frame, never internal, the connection stays`,
      async () => {
        const client = await TestClient.open(`${runtime.wsUrl}?token=${tokens.user}`);
        try {
          await client.nextOfType('session');
          const frames = fc.oneof(
            {
              weight: 8,
              arbitrary: fc
                .record(
                  { id: fc.option(fc.string({ maxLength: 80 }), { nil: undefined }), ...fields },
                  { requiredKeys: [] },
                )
                .map((frame) => JSON.stringify({ type, ...frame })),
            },
            { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
            { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
          );
          await fc.assert(
            fc.asyncProperty(frames, async (frame) => {
              client.frames.length = 0;
              client.send(frame);
              const answer = await client.next((received) =>
                ['ack', 'heartbeat.ack', 'error'].includes(received.type),
              );
              if (answer.type === 'error') {
                expect(
                  WS_ERROR_CODES.has(answer.code as string),
                  `${frame} → ${JSON.stringify(answer)}`,
                ).toBe(true);
                expect(typeof answer.message).toBe('string');
              }
              expect(client.closed, frame).toBeUndefined();
            }),
            { numRuns: RUNS },
          );
        } finally {
          await client.close();
        }
      },
      TIMEOUT_MS,
    );
  }
});
