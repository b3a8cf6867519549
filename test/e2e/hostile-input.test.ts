/**
 * Hostile input found by the reliability probe (issue 20 items 4–6, issue 22 items 3–5): every case here
 * failed before its fix. Over real HTTP and WebSocket connections on the local runtime.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { documentClient } from '../../lambdas/core/clients';
import { MAX_CHANNELS_PER_CONNECTION } from '../../lambdas/domain/realtime/config';
import { table } from '../../lambdas/domain/realtime/tables';
import { apiClient, eventually } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { type Frame, TestClient } from '../support/ws-client';

let runtime: Runtime;
const open: TestClient[] = [];
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  runtime = await startTestRuntime();
}, 60_000);
afterAll(() => runtime?.stop());
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

const connectAs = async (userId: string): Promise<TestClient> => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(userId)}`);
  open.push(client);
  await client.nextOfType('session');
  return client;
};

/** Membership rows of a user, live or detached. */
const membershipRows = async (userId: string): Promise<number> => {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(
      new ScanCommand({
        TableName: table('channels'),
        FilterExpression: 'user_id = :user',
        ExpressionAttributeValues: { ':user': userId },
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
};

describe('the channel cap under a subscribe burst', () => {
  it('holds exactly, and the disconnect still cleans up', async () => {
    const client = await connectAs('burst');
    const burst = 200;
    for (let index = 0; index < burst; index++) {
      client.send({ type: 'subscribe', id: `b${index}`, channel: `room:r${index}` });
    }
    const answers: Frame[] = [];
    for (let index = 0; index < burst; index++) {
      answers.push(await client.next((frame) => frame.id === `b${index}`, 60_000));
    }
    const acks = answers.filter((frame) => frame.type === 'ack');
    const refused = answers.filter((frame) => frame.type === 'error');
    // `user:burst` is the connection's first channel.
    expect(acks).toHaveLength(MAX_CHANNELS_PER_CONNECTION - 1);
    expect(refused).toHaveLength(burst - (MAX_CHANNELS_PER_CONNECTION - 1));
    expect(new Set(refused.map((frame) => frame.code))).toEqual(new Set(['validation']));
    expect(await membershipRows('burst')).toBe(MAX_CHANNELS_PER_CONNECTION);
    // Subscribing again to a held channel is still fine at the cap.
    expect(await client.request({ type: 'subscribe', channel: 'room:r0' })).toMatchObject({ type: 'ack' });

    const token = await runtime.mintUserToken('burst');
    await client.close();
    const presence = await eventually(
      () => api('GET', '/presence/burst', token),
      (response) => response.body?.status === 'offline',
    );
    expect(presence.body).toMatchObject({ status: 'offline', connections: 0 });
  }, 90_000);
});

/** JSON text of an object `levels` deep: `{"a":{"a":…{}}}`. */
const nested = (levels: number): string => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;

/** POSTs JSON text as is (a deep value would overflow JSON.stringify in the test itself). */
const postText = async (path: string, token: string, text: string) => {
  const response = await fetch(`${runtime.httpUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: text,
  });
  return { status: response.status, body: JSON.parse(await response.text()) };
};

describe('deeply nested data', () => {
  const notification = (data: string) =>
    `{"event_type":"deep.test","title":"deep","recipient_ids":["deep-user"],"data":${data}}`;
  const event = (data: string) => `{"event_type":"deep.test","source":"deep","version":1,"data":${data}}`;
  const broadcast = (data: string) => `{"channel":"room:deep","payload":{"type":"x","data":${data}}}`;

  it('is refused at the edge with 400 validation, however deep, and accepted up to the limit', async () => {
    const writer = await runtime.mintServiceToken('deep', ['notifications:write', 'events:publish']);
    const broadcaster = await runtime.mintServiceToken('deep', ['broadcast:write']);
    const arrays = `{"deep":${'['.repeat(120_000)}${']'.repeat(120_000)}}`;
    for (const data of [nested(17), nested(40), nested(3_000), nested(10_000), arrays]) {
      for (const [path, body, token] of [
        ['/notifications', notification(data), writer],
        ['/events', event(data), writer],
        ['/broadcast', broadcast(data), broadcaster],
      ] as const) {
        const response = await postText(path, token, body);
        expect(response.status, path).toBe(400);
        expect(response.body).toMatchObject({ code: 'validation' });
        expect(JSON.stringify(response.body.details)).toContain('nested at most 16 levels');
      }
    }
    expect((await postText('/notifications', writer, notification(nested(16)))).status).toBe(202);
    expect((await postText('/events', writer, event(nested(16)))).status).toBe(202);
  });
});
