/**
 * Reliability suite, identifier bounds (lambdas/core/identifiers.ts): identifiers generated at and around each
 * bound in a random mix of 1- to 4-byte characters, used the way clients use them, over real HTTP and WebSocket
 * connections on the local runtime. Properties: within its bound an identifier works end to end (every key built
 * from it is legal: feeds, devices, preferences, presence rows, channel memberships, subscriptions, idempotency
 * records); past it the answer is a 401 (token subject, service name), a 400 or a `validation` error frame; never
 * a 5xx or `internal`.
 *
 * Short form (inside `npm test`): 4 cases per property. Long form: RELIABILITY_LONG=1, 100 each.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PATH_PARAMETER_BYTES } from '../../lambdas/core/identifiers';
import { apiClient } from '../support/api';
import { nearBound } from '../support/identifiers';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { HandshakeError, TestClient } from '../support/ws-client';

const RUNS = Number(process.env.RELIABILITY_RUNS) || (LONG ? 100 : 4);
const TIMEOUT_MS = Math.max(120_000, RUNS * 5_000);
/** The longest topic name (contract §3). */
const TOPIC = `t${'x'.repeat(127)}`;
const IDEMPOTENCY_KEY = 'k'.repeat(128);

let runtime: Runtime;
let writer: string;
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  runtime = await startTestRuntime();
  writer = await runtime.mintServiceToken('bounds', ['notifications:write']);
  expect((await api('POST', '/topics', writer, { name: TOPIC })).status).toBe(201);
}, 90_000);
afterAll(() => runtime?.stop());

/** Each case's identifiers start with their own number, so cases never share a user or a room. */
let caseNumber = 0;
const tagged = () => `c${++caseNumber}-`;

/** The open connection, or the handshake's refusal status. */
const connect = async (token: string): Promise<TestClient | number> => {
  try {
    return await TestClient.open(`${runtime.wsUrl}?token=${token}`);
  } catch (error) {
    if (error instanceof HandshakeError) return error.status;
    throw error;
  }
};

describe('identifiers at and around their bounds', () => {
  it(
    'user ids as token subjects, recipients and subscribers; room ids as rooms, presence scopes and channels',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc
            .constant(null)
            .chain(() => fc.tuple(nearBound('userId', tagged()), nearBound('channelName', tagged()))),
          async ([user, room]) => {
            const what = `user ${user.bytes} bytes, room ${room.bytes} bytes`;
            const token = await runtime.mintUserToken(user.value);
            const expected = user.within ? 200 : 401;
            expect((await api('GET', '/notifications/unread-count', token)).status, what).toBe(expected);
            expect((await api('PUT', '/preferences', token, { rules: [] })).status, what).toBe(expected);
            const device = await api('POST', '/devices', token, {
              token: `d-${caseNumber}`,
              platform: 'android',
            });
            expect(device.status, what).toBe(user.within ? 201 : 401);

            const sent = await api('POST', '/notifications', writer, {
              event_type: 'bounds.test',
              title: 'x',
              recipient_ids: [user.value],
            });
            expect(sent.status, what).toBe(user.within ? 202 : 400);
            const subscribed = await api('POST', '/subscriptions', writer, {
              topic: TOPIC,
              user_id: user.value,
            });
            expect(subscribed.status, what).toBe(user.within ? 201 : 400);
            if (user.within) {
              const id = encodeURIComponent(subscribed.body.id);
              expect((await api('DELETE', `/subscriptions/${id}`, writer)).status, what).toBe(204);
            }
            // Over 1,024 bytes a path parameter names nothing on any route: 404 (contract §5).
            const presence = await api('GET', `/presence/${encodeURIComponent(user.value)}`, writer);
            expect(presence.status, what).toBe(
              user.within ? 200 : user.bytes > MAX_PATH_PARAMETER_BYTES ? 404 : 400,
            );

            const scope = encodeURIComponent(`room:${room.value}`);
            expect((await api('GET', `/presence?scope=${scope}`, writer)).status, what).toBe(
              room.within ? 200 : 400,
            );

            const client = await connect(token);
            if (!user.within) {
              expect(client, what).toBe(401);
              return;
            }
            expect(client, what).toBeInstanceOf(TestClient);
            const socket = client as TestClient;
            try {
              await socket.nextOfType('session');
              const joined = await socket.request({ type: 'join.room', room_id: room.value });
              expect(joined, what).toMatchObject(
                room.within ? { type: 'ack' } : { type: 'error', code: 'validation' },
              );
              const subscribedRoom = await socket.request({
                type: 'subscribe',
                channel: `room:${room.value}`,
              });
              expect(subscribedRoom, what).toMatchObject(
                room.within ? { type: 'ack' } : { type: 'error', code: 'validation' },
              );
              if (room.within) {
                const members = await api('GET', `/presence?scope=${scope}`, writer);
                expect(members.body.members, what).toEqual([
                  expect.objectContaining({ user_id: user.value, status: 'online' }),
                ]);
              }
              socket.assertDocumentedFrames();
            } finally {
              await socket.close();
            }
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );

  it(
    'service names: sending with the longest Idempotency-Key, and sending again',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constant(null).chain(() => nearBound('serviceName', tagged())),
          async (service) => {
            const what = `service ${service.bytes} bytes`;
            const token = await runtime.mintServiceToken(service.value, ['notifications:write']);
            const send = () =>
              api(
                'POST',
                '/notifications',
                token,
                { event_type: 'bounds.test', title: 'x', recipient_ids: ['bounds-reader'] },
                { 'idempotency-key': IDEMPOTENCY_KEY },
              );
            const first = await send();
            expect(first.status, what).toBe(service.within ? 202 : 401);
            const again = await send();
            expect(again.status, what).toBe(first.status);
            if (service.within) expect(again.body.id, what).toBe(first.body.id);
          },
        ),
        { numRuns: RUNS },
      );
    },
    TIMEOUT_MS,
  );
});
