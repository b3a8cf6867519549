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
    const burst = 300;
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
