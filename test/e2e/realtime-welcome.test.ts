/**
 * The `session` frame of a connection authenticated with `?token=` (docs/realtime.md): `$connect` queues it before
 * the gateway has opened the socket, so the welcome worker's post can come first and be answered 410. Here the
 * local gateway opens every socket 800 ms after `$connect` answers, so every welcome comes early (found by a user
 * probe: 1–2 of every 15–60 connections never got their frame).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endAndCleanUp } from '../support/disconnect';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

/**
 * How long after `$connect` answers each socket opens: between two of the worker's retries (at 0.1, 0.3, 0.7, 1.5
 * and 2.7 s), so that a client's first frame is handled before the retry that gets through.
 */
const OPEN_DELAY_MS = 800;

let runtime: Runtime;
const open: TestClient[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime({ webSocket: { openDelayMs: OPEN_DELAY_MS } });
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((client) => client.close()));
  await runtime?.stop();
});

describe('the session frame', () => {
  it('reaches every ?token= connection whose welcome came before its socket was open', async () => {
    const users = Array.from({ length: 8 }, (_, index) => `early-${index}`);
    const clients = await Promise.all(
      users.map(async (user) =>
        TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(user)}`),
      ),
    );
    open.push(...clients);
    const sessions = await Promise.all(
      clients.map((client) =>
        client.nextOfType('session', 10_000).then(
          (frame) => frame.user_id,
          () => 'no session frame',
        ),
      ),
    );
    expect(sessions).toEqual(users);
  }, 60_000);

  it('is not sent for a session a reconnect abandoned while the welcome was retrying (found by a review)', async () => {
    const token = await runtime.mintUserToken('resumer');
    const first = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
    open.push(first);
    const resumed = (await first.nextOfType('session', 10_000)).session_id as string;
    await endAndCleanUp(first, { userId: 'resumer', sessionId: resumed });
    // The second connection resumes the first session the moment its socket opens, while the welcome worker
    // still retries the session frame of the second connection's own new session.
    const second = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
    open.push(second);
    expect(await second.request({ type: 'reconnect', session_id: resumed })).toMatchObject({
      op: 'reconnect',
      session_id: resumed,
    });
    const framesBeforeAck = second.frames.length;
    // Past the worker's retries (2.7 s): no frame naming the abandoned session comes after the ack (one may come
    // before it, from the reconnect frame's own handler: the client then takes the ack's session).
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(second.frames.slice(framesBeforeAck).filter((frame) => frame.type === 'session')).toEqual([]);
  }, 60_000);
});
