/**
 * API Gateway sends `$disconnect` on a best-effort basis. Here it never comes (a delivery that loses every one):
 * the sweep must then find the connection gone (GetConnection answers 410) and clean up as `$disconnect` would:
 * the connection record deleted, presence told, the session detached so a reconnect replays what it missed.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { deliverToChannel } from '../../lambdas/domain/realtime/deliver';
import { getConnection } from '../../lambdas/domain/realtime/lifecycle';
import { sweep } from '../../lambdas/domain/realtime/sweeper';
import { type Delivery, exactDelivery } from '../../local/delivery';
import { eventually } from '../support/api';
import { connectionIdOf } from '../support/disconnect';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

/** Exact delivery, except that the WebSocket gateway loses every `$disconnect`. */
const everyDisconnectLost: Delivery = {
  mode: 'aws',
  seed: 0,
  chooser: (name) =>
    name === 'websocket'
      ? { chance: () => true, between: (min) => min, shuffled: (items) => [...items] }
      : exactDelivery().chooser(name),
};

let runtime: Runtime;
const open: TestClient[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime({
    delivery: everyDisconnectLost,
    // A connection is looked at by the sweep once its idle timeout has passed: 3 s here, not 10 minutes.
    env: { NOTIFY_WS_IDLE_TIMEOUT_SECS: '3' },
  });
}, 90_000);
afterAll(() => runtime?.stop());
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

const connectAs = async (userId: string) => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(userId)}`);
  open.push(client);
  const session = await client.nextOfType('session');
  return { client, sessionId: session.session_id as string };
};

const heartbeat = async (client: TestClient) => {
  // API Gateway answers it (a MOCK route): the ack names no id.
  client.send({ type: 'heartbeat' });
  await client.nextOfType('heartbeat.ack');
};

it('cleans up after a closed connection whose $disconnect never came, through the sweep', async () => {
  const alice = await connectAs('lost-alice');
  const bob = await connectAs('lost-bob');
  expect(await alice.client.request({ type: 'join.room', room_id: 'lost' })).toMatchObject({ type: 'ack' });
  expect(await bob.client.request({ type: 'join.room', room_id: 'lost' })).toMatchObject({ type: 'ack' });
  await alice.client.next(
    (frame) => frame.type === 'presence' && frame.user_id === 'lost-bob' && frame.change === 'join',
  );
  const bobConnection = await connectionIdOf('lost-bob', bob.sessionId);

  await bob.client.close();
  // No $disconnect: the service still records the connection as open.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(await getConnection(bobConnection)).toBeDefined();

  // The sweep (once a minute on AWS; run here) looks at bob once his idle timeout has passed.
  const left = await eventually(
    async () => {
      await heartbeat(alice.client); // alice is alive: the sweep must not close her
      await sweep();
      return getConnection(bobConnection);
    },
    (connection) => connection === undefined,
    30_000,
  );
  expect(left).toBeUndefined();
  expect(
    await alice.client.next(
      (frame) => frame.type === 'presence' && frame.user_id === 'lost-bob' && frame.change === 'leave',
    ),
  ).toMatchObject({ status: 'offline' });
  expect(alice.client.closed).toBeUndefined();

  // Detached, not dropped: what the room got meanwhile is replayed to bob's session.
  await deliverToChannel('room:lost', { type: 'custom', seq: 'while-away' });
  const again = await connectAs('lost-bob');
  expect(await again.client.request({ type: 'reconnect', session_id: bob.sessionId })).toMatchObject({
    type: 'ack',
    op: 'reconnect',
    replayed: 1,
  });
  expect(await again.client.nextOfType('custom')).toMatchObject({ seq: 'while-away' });
}, 90_000);
