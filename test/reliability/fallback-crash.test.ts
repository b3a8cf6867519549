import { describe, expect, it } from 'vitest';
import { tokenHashOf } from '../../lambdas/domain/devices/devices';
import { pushIdFor } from '../../lambdas/domain/push/records';
import { mintServiceToken, mintUserToken } from '../../local/dev-auth';
import { WS_PATH } from '../../local/gateway/server';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { apiClient, eventually } from '../support/api';
import { pushCrashRuntime } from '../support/push-crash-runtime';
import { LONG } from '../support/reliability';
import { TestClient } from '../support/ws-client';

/**
 * `npm start --data` killed (SIGKILL to the whole process group) between a notification's fallback steps, and in the
 * long form (RELIABILITY_LONG=1) also before them: two notifications with the steps `toast` at 120 s and `push` at
 * 300 s (18 s and 45 s here: SQS time runs 6.7× faster), one delivered by the accepting request, one through the
 * fan-out queue (11 recipients). The long form's first kill comes right after the 202s; the kill between the steps
 * comes once the toast steps have reached a connection opened after the delivery (and that restart). After the
 * restart a new connection gets no toast again (the toast step ran once), and each push reaches the device once.
 * The Expo stand-in runs in this process, so what it saw outlives the kills.
 */
const crashable = pushCrashRuntime('fallback-crash', { [TIME_SCALE_ENV]: '0.15' });

describe('the runtime killed before and between fallback steps', () => {
  it('sends each step once, in order, following the restarts', async () => {
    const standIn = await crashable.standIn();
    const start = crashable.start;
    let runtime = await start();
    const port = runtime.port;
    const settings = crashable.devAuth();
    const service = await mintServiceToken(settings, 'fallback-crash', ['notifications:write']);
    const user = `fallback-crash-${Date.now()}`;
    const userToken = await mintUserToken(settings, user);
    const api = apiClient(() => runtime?.restUrl ?? '');
    const open = async () => {
      const client = await TestClient.open(`ws://127.0.0.1:${port}${WS_PATH}?token=${userToken}`);
      await client.nextOfType('session');
      // Kept open until the steps by heartbeats (an idle connection is closed after 45 s).
      const heartbeat = setInterval(() => client.send({ type: 'heartbeat' }), 10_000);
      const close = () => {
        clearInterval(heartbeat);
        return client.close();
      };
      return { frames: client.frames, next: client.next.bind(client), close };
    };
    const pushToken = `ExponentPushToken[${user}]`;
    expect((await api('POST', '/devices', userToken, { token: pushToken, platform: 'ios' })).status).toBe(
      201,
    );
    const notify = async (recipients: string[]) => {
      const created = await api('POST', '/notifications', service, {
        event_type: 'fallback.crash',
        title: 'Reply',
        recipient_ids: recipients,
        channels: ['in_app', 'toast', 'push'],
        fallback: [
          { channel: 'toast', after_secs: 120 },
          { channel: 'push', after_secs: 300 },
        ],
      });
      expect(created.status).toBe(202);
      return created.body.id as string;
    };
    const inRequest = await notify([user]);
    const others = Array.from({ length: 10 }, (_, index) => `${user}-other-${index}`);
    const throughQueue = await notify([user, ...others]);
    const ids = [inRequest, throughQueue];
    if (LONG) {
      await runtime.crash();
      runtime = await start(port);
    }

    // Opened after the delivery (and the long form's restart): the toast steps reach it, once each, before any push.
    const first = await open();
    try {
      for (const id of ids) {
        expect(await first.next((frame) => frame.notification_id === id, 120_000)).toMatchObject({
          channel: 'toast',
        });
      }
      expect(standIn.received(), runtime.stderr()).toEqual([]);
      // The toast steps' messages acknowledged (a kill between a frame's send and that is a redelivery, which sends
      // the frame again: frames are at least once across a crash, docs/reliability.md); the push steps about 25 s away.
      await new Promise((resolve) => setTimeout(resolve, 5000));
    } finally {
      await first.close();
    }
    await runtime.crash();
    runtime = await start(port);

    const second = await open();
    try {
      const expected = ids.map((id) => pushIdFor(id, tokenHashOf(pushToken)));
      await eventually(
        () => new Set(standIn.received().map((push) => push.push_id)),
        (received) => expected.every((pushId) => received.has(pushId)),
        240_000,
      );
      // Time for anything sent twice to show.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      for (const pushId of expected) {
        expect(standIn.received().filter((push) => push.push_id === pushId)).toHaveLength(1);
      }
      expect(standIn.received()).toHaveLength(2);
      expect(second.frames.filter((frame) => ids.includes(frame.notification_id as string))).toEqual([]);
    } finally {
      await second.close();
    }
  }, 600_000);
});
