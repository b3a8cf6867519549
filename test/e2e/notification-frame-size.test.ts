/**
 * The `notification` frame fits one API Gateway WebSocket frame (32 KiB) by design: the largest notification the
 * create accepts, with every free-text field at or near its limit in the characters that take the most bytes, is
 * measured as the local gateway sends it, live and replayed after a reconnect; one byte more is a 400 naming the
 * bulkiest field. The client refuses any
 * message over 32 KiB (`maxPayload`), and the gateway sends a message of at most 32 KiB as one frame.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { WEBSOCKET_FRAME_MAX_BYTES } from '../../common/limits';
import { apiClient } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  runtime = await startTestRuntime();
});
afterAll(() => runtime?.stop());

/** A connection that keeps every message as the bytes it arrived as. */
const connect = async (token: string) => {
  const socket = new WebSocket(`${runtime.wsUrl}?token=${token}`, { maxPayload: WEBSOCKET_FRAME_MAX_BYTES });
  const messages: Buffer[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data: Buffer) => {
    messages.push(data);
    for (const wake of waiters.splice(0)) wake();
  });
  let closed: number | undefined;
  socket.on('close', (code) => {
    closed = code;
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  /** The raw bytes of the next `notification` frame of `notificationId`. */
  const frameOf = async (notificationId: string): Promise<Buffer> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = messages.find((data) => JSON.parse(data.toString()).notification_id === notificationId);
      if (found) return found;
      if (closed !== undefined) throw new Error(`closed with ${closed} before the frame arrived`);
      if (Date.now() > deadline) throw new Error('no frame within 20 s');
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 500);
      });
    }
  };
  /** The next message matching `match`, parsed. */
  const next = async (match: (frame: Record<string, unknown>) => boolean) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = messages.map((data) => JSON.parse(data.toString())).find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error('no such frame within 20 s');
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 500);
      });
    }
  };
  return { socket, frameOf, next };
};

describe('the notification frame', () => {
  it('of the largest notification the create accepts fits one 32 KiB frame; a byte more is a 400', async () => {
    const user = `frame-size-${Date.now()}`;
    const token = await runtime.mintUserToken(user);
    const client = await connect(token);
    // Characters that take the most bytes in the frame's JSON: a control character is 6 (\u0001), € is 3.
    const content = (padding: number) => ({
      event_type: 'report.ready',
      title: '€'.repeat(256),
      body: '\u0001'.repeat(4096),
      url: `https://app.example/${'€'.repeat(800)}`,
      actions: ['approve', 'reject', 'later'].map((id) => ({
        id,
        label: '€'.repeat(64),
        url: `https://app.example/${id}/${'€'.repeat(100)}`,
      })),
      category: 'reports.weekly',
      tags: ['a'.repeat(32), 'b'.repeat(32), 'c'.repeat(32), 'd'.repeat(32), 'e'.repeat(32)],
      channels: ['in_app', 'realtime'],
      data: { padding: 'x'.repeat(padding) },
    });
    const send = (padding: number) => api('POST', '/notifications', token, content(padding));
    try {
      // Measure once, then pad `data` to the last byte the frame limit leaves.
      const first = await send(100);
      expect(first.status).toBe(202);
      const measured = (await client.frameOf(first.body.id)).length;
      const largest = 100 + WEBSOCKET_FRAME_MAX_BYTES - measured;
      const accepted = await send(largest);
      expect(accepted.status).toBe(202);
      const frame = await client.frameOf(accepted.body.id);
      expect(frame.length).toBe(WEBSOCKET_FRAME_MAX_BYTES);
      expect(JSON.parse(frame.toString())).toMatchObject({
        type: 'notification',
        body: content(0).body,
        data: { padding: 'x'.repeat(largest) },
        actions: content(0).actions,
      });

      // Replayed after a reconnect, the same frame: as many bytes.
      const { session_id: sessionId } = await client.next((frame) => frame.type === 'session');
      client.socket.close();
      await new Promise((resolve) => client.socket.once('close', resolve));
      const whileAway = await send(largest);
      expect(whileAway.status).toBe(202);
      const resumed = await connect(token);
      try {
        resumed.socket.send(JSON.stringify({ type: 'reconnect', id: 'r1', session_id: sessionId }));
        expect(await resumed.next((frame) => frame.type === 'ack')).toMatchObject({
          op: 'reconnect',
          replayed: 1,
        });
        expect((await resumed.frameOf(whileAway.body.id)).length).toBe(WEBSOCKET_FRAME_MAX_BYTES);
      } finally {
        resumed.socket.close();
      }

      const over = await send(largest + 1);
      expect(over.status).toBe(400);
      expect(over.body).toMatchObject({
        code: 'validation',
        message: expect.stringContaining(`${WEBSOCKET_FRAME_MAX_BYTES + 1} bytes`),
        details: [{ field: 'body', issue: expect.stringContaining('by at least 1 bytes') }],
      });
      // Nothing of it was stored: the feed holds the three accepted ones.
      const feed = await api('GET', '/notifications', token);
      expect(feed.body.items.map((item: { notification_id: string }) => item.notification_id)).toEqual([
        whileAway.body.id,
        accepted.body.id,
        first.body.id,
      ]);
    } finally {
      client.socket.close();
    }
  });

  it('is not bounded for a notification that sends no frame (in_app, push)', async () => {
    const token = await runtime.mintUserToken(`frame-size-feed-${Date.now()}`);
    const answer = await api('POST', '/notifications', token, {
      event_type: 'report.ready',
      title: 'Weekly report',
      body: '\u0001'.repeat(4096),
      data: { padding: 'x'.repeat(16_000) },
      channels: ['in_app'],
    });
    expect(answer.status).toBe(202);
  });
});
