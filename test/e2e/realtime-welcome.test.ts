/**
 * The `session` frame of a connection authenticated with `?token=` (docs/realtime.md): `$connect` queues it before
 * the gateway has opened the socket, so the welcome worker's post can come first and be answered 410. Here the
 * local gateway opens every socket 300 ms after `$connect` answers, so every welcome comes early (found by a user
 * probe: 1–2 of every 15–60 connections never got their frame).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

let runtime: Runtime;
const open: TestClient[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime({ webSocket: { openDelayMs: 300 } });
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
});
