import { describe, expect, it } from 'vitest';
import { eventually } from '../support/api';
import { LONG } from '../support/reliability';
import type { Frame, TestClient } from '../support/ws-client';
import { realtimeRuntime } from '../support/ws-runtime';

/**
 * A `reconnect` that names a session whose connection is still open takes the session over. The connection
 * that loses it must be told why (an `error` frame `session_taken_over`) and closed, never left open without a
 * session (heartbeat acks, `unauthorized` on everything else, not counted in presence), also when many
 * connections race to resume one session. Over real WebSockets on the local runtime (AWS-like delivery).
 */
const RACERS = 10;
const RACES = LONG ? 10 : 2;

const realtime = realtimeRuntime();
const { api, run } = realtime;

const connectAs = async (userId: string): Promise<{ client: TestClient; session: Frame }> => {
  const connected = await realtime.connectAs(userId);
  watch(connected.client);
  return connected;
};

const isTakeover = (frame: Frame) => frame.type === 'error' && frame.code === 'session_taken_over';

/** The `session_taken_over` frames each connection received (TestClient.next takes frames out of `frames`). */
const told = new Map<TestClient, Frame[]>();
const watch = (client: TestClient) => {
  told.set(client, []);
  client.socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as Frame;
    if (isTakeover(frame)) told.get(client)?.push(frame);
  });
};

/** API Gateway's own answer when the function behind a frame failed or timed out (contract §4: send it again). */
const isNotProcessed = (frame: Frame) =>
  frame.type === undefined && frame.message === 'Internal server error';

/**
 * Sends a frame with an id; its answer, or undefined when the connection closed first. A frame the gateway
 * says was not processed (a function timed out on a loaded machine) is sent again, as the contract says.
 */
const answerTo = async (client: TestClient, frame: Record<string, unknown>): Promise<Frame | undefined> => {
  for (let attempt = 0; ; attempt += 1) {
    const id = `r-${Math.random().toString(36).slice(2)}`;
    client.send({ ...frame, id });
    const answer = await client
      .next((answer) => answer.id === id || isNotProcessed(answer), 30_000)
      .catch((error: unknown) => {
        if (client.closed) return undefined;
        throw error;
      });
    if (!answer || !isNotProcessed(answer) || attempt === 2) return answer;
  }
};

/**
 * What became of a connection: `served` when it still answers as a connection with a session does (a
 * subscribe is acked, not `unauthorized`), else it must have been told it lost its session (an unasked error
 * frame, no `id`) and been closed: `taken_over`.
 */
const fate = async (client: TestClient, room: string): Promise<'served' | 'taken_over'> => {
  const answer = client.closed
    ? undefined
    : await answerTo(client, { type: 'subscribe', channel: `room:${room}` });
  if (answer?.type === 'ack' && (told.get(client) ?? []).length === 0) return 'served';
  expect(
    told.get(client)?.[0],
    `answered ${JSON.stringify(answer)} without session_taken_over`,
  ).toMatchObject({
    type: 'error',
    message: expect.any(String),
  });
  expect(told.get(client)?.[0]).not.toHaveProperty('id');
  await client.waitClosed();
  return 'taken_over';
};

const presenceOf = async (userId: string) => {
  const { body } = await api('GET', `/presence/${userId}`, await realtime.runtime.mintUserToken('observer'));
  return body as { status: string; connections: number };
};

describe('a session taken over by reconnect', () => {
  it('closes the connection that had it, after an error frame saying why', async () => {
    const userId = `taken-${run}`;
    const first = await connectAs(userId);
    await answerTo(first.client, { type: 'join.room', room_id: `takeover-${run}` });
    const second = await connectAs(userId);
    expect(
      await answerTo(second.client, { type: 'reconnect', session_id: first.session.session_id }),
    ).toMatchObject({ type: 'ack', op: 'reconnect', session_id: first.session.session_id });
    expect(await fate(first.client, `after-${run}`)).toBe('taken_over');
    expect(await fate(second.client, `after-${run}`)).toBe('served');
    expect(
      (
        await eventually(
          () => presenceOf(userId),
          (p) => p.connections === 1,
        )
      ).connections,
    ).toBe(1);
  });

  it(`leaves one holder and no open connection without a session when ${RACERS} reconnects race`, async () => {
    for (let race = 0; race < RACES; race += 1) {
      const userId = `race-${run}-${race}`;
      const holder = await connectAs(userId);
      await answerTo(holder.client, { type: 'join.room', room_id: `race-${run}-${race}` });
      const racers = await Promise.all(Array.from({ length: RACERS }, () => connectAs(userId)));
      const answers = await Promise.all(
        racers.map(({ client }) =>
          answerTo(client, { type: 'reconnect', session_id: holder.session.session_id }),
        ),
      );
      // The original holder always loses the session (at least one racer takes it over).
      expect(await fate(holder.client, `served-${run}-${race}`)).toBe('taken_over');
      let holders = 0;
      let stillOpen = 0;
      for (const [index, { client }] of racers.entries()) {
        // A racer that took the session, or was taking it, and then lost it was told and closed.
        if ((await fate(client, `served-${run}-${race}`)) === 'taken_over') continue;
        const answer = answers[index];
        expect(answer).toMatchObject(
          answer?.type === 'ack' ? { op: 'reconnect' } : { type: 'error', code: 'session_expired' },
        );
        stillOpen += 1;
        if (answer?.type === 'ack') holders += 1;
      }
      expect(holders).toBe(1);
      // Presence counts exactly the open connections: none is a zombie it forgot.
      expect(
        (
          await eventually(
            () => presenceOf(userId),
            (p) => p.connections === stillOpen,
          )
        ).connections,
      ).toBe(stillOpen);
      for (const { client } of [holder, ...racers]) client.socket.terminate();
    }
  }, 120_000);
});
