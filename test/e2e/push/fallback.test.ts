import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pushSettingName } from '../../../common/env';
import { type ExpoStandIn, startExpoStandIn } from '../../../local/push/expo-stand-in';
import type { ReceivedPush } from '../../../local/push/stand-in';
import { TIME_SCALE_ENV } from '../../../local/sqs/time-scale';
import { apiClient, eventually } from '../../support/api';
import { queueIdle } from '../../support/queues';
import { type Runtime, startTestRuntime } from '../../support/runtime';
import { TestClient } from '../../support/ws-client';

/**
 * Fallback steps end to end over real HTTP and WebSocket connections: POST /notifications with `fallback` (or a
 * default rule's) → the delivery withholds the steps' channels → each step, `after_secs` later, pushes (Expo's
 * stand-in) or sends the toast frame only while the feed item is not seen / not read. SQS time runs 100× faster
 * here, so a step of 300 s comes in 3 s.
 */
/** The wait of a step that the test's own reads must beat (10 s here): a few requests take seconds on a loaded machine. */
const READ_RACE_SECS = 1000;
let runtime: Runtime;
let expo: ExpoStandIn;
let run = 0;
const savedScale = process.env[TIME_SCALE_ENV];

beforeAll(async () => {
  process.env[TIME_SCALE_ENV] = '0.01';
  expo = await startExpoStandIn();
  runtime = await startTestRuntime({ env: { [pushSettingName('EXPO_URL')]: expo.url } });
  run = Date.now();
});
afterAll(async () => {
  await runtime?.stop();
  await expo?.close();
  if (savedScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = savedScale;
});

// Steps cross one or two queue hops after their wait: up to a minute on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const api = apiClient(() => runtime.httpUrl);
const service = () => runtime.mintServiceToken('fallback', ['notifications:write']);
let seq = 0;

/** A user with one registered Expo device. */
const userWithDevice = async (name: string) => {
  const id = `${name}-${run}-${++seq}`;
  const token = await runtime.mintUserToken(id);
  const pushToken = `ExponentPushToken[${id}]`;
  expect((await api('POST', '/devices', token, { token: pushToken, platform: 'ios' })).status).toBe(201);
  return { id, token, pushToken };
};

const notify = async (body: Record<string, unknown>) => {
  const answer = await api('POST', '/notifications', await service(), {
    event_type: 'fallback.reply',
    title: 'New reply',
    channels: ['in_app', 'push'],
    ...body,
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
};

const pushesTo = (pushToken: string): ReceivedPush[] =>
  expo.received().filter((push) => push.token === pushToken);

/** The first push to a device, once it has come. */
const firstPush = (pushToken: string) =>
  eventually(
    () => pushesTo(pushToken),
    (pushes) => pushes.length === 1,
    60_000,
  );

const itemOf = async (token: string, notificationId: string): Promise<string> => {
  const feed = await api('GET', '/notifications', token);
  const item = feed.body.items.find(
    (entry: { notification_id: string }) => entry.notification_id === notificationId,
  );
  expect(item).toBeDefined();
  return item.id as string;
};

const idle = () =>
  eventually(async () => (await queueIdle('fanout')) && (await queueIdle('push')), Boolean, 60_000);

const openClient = async (token: string) => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
  await client.nextOfType('session');
  return client;
};

// Each test has users and devices of its own and waits out steps of its own, so they wait side by side; the one
// that sets the service defaults (replaced whole by `PUT /preferences/defaults`) does so for an event family no
// other test sends.
describe.concurrent('fallback steps', () => {
  it('a push step goes when the item is still unread, and not when it was read; read-all counts as read', async () => {
    const idleUser = await userWithDevice('idle');
    const reader = await userWithDevice('reader');
    const readAll = await userWithDevice('read-all');
    const id = await notify({
      recipient_ids: [idleUser.id, reader.id, readAll.id],
      fallback: [{ channel: 'push', after_secs: READ_RACE_SECS }],
    });
    // Withheld at delivery: no push yet, for anyone.
    expect(pushesTo(idleUser.pushToken)).toEqual([]);
    const readItem = await itemOf(reader.token, id);
    expect((await api('POST', `/notifications/${readItem}/read`, reader.token)).status).toBe(200);
    // Once its item is in the feed: a read-all covers what is there, not an item that arrives after it.
    await itemOf(readAll.token, id);
    expect((await api('POST', '/notifications/read-all', readAll.token)).status).toBe(200);
    await firstPush(idleUser.pushToken);
    await idle();
    expect(pushesTo(idleUser.pushToken)).toHaveLength(1);
    expect(pushesTo(reader.pushToken)).toEqual([]);
    expect(pushesTo(readAll.pushToken)).toEqual([]);
  });

  it('`unless: seen`: an item seen stops the step; a `read` step still goes for an item seen but not read', async () => {
    const seer = await userWithDevice('seer');
    const seerOfRead = await userWithDevice('seer-of-read');
    const seenStep = await notify({
      recipient_ids: [seer.id],
      fallback: [{ channel: 'push', after_secs: READ_RACE_SECS, unless: 'seen' }],
    });
    const readStep = await notify({
      recipient_ids: [seerOfRead.id],
      fallback: [{ channel: 'push', after_secs: READ_RACE_SECS, unless: 'read' }],
    });
    const seen = await api('POST', '/notifications/seen', seer.token, {
      ids: [await itemOf(seer.token, seenStep)],
    });
    expect(seen.status).toBe(200);
    const seenToo = await api('POST', '/notifications/seen', seerOfRead.token, {
      ids: [await itemOf(seerOfRead.token, readStep)],
    });
    expect(seenToo.status).toBe(200);
    await firstPush(seerOfRead.pushToken);
    await idle();
    expect(pushesTo(seer.pushToken)).toEqual([]);
  });

  it('a toast step reaches the connections open at its time (an app opened after the delivery), in step order', async () => {
    const late = await userWithDevice('late');
    const id = await notify({
      recipient_ids: [late.id],
      channels: ['in_app', 'toast', 'push'],
      fallback: [
        { channel: 'toast', after_secs: 200, unless: 'seen' },
        { channel: 'push', after_secs: 400 },
      ],
    });
    // The app opens after the delivery: the step's frame finds it.
    const client = await openClient(late.token);
    try {
      const frame = await client.next((received) => received.notification_id === id, 60_000);
      const item = await itemOf(late.token, id);
      expect(frame).toMatchObject({ type: 'notification', channel: 'toast', id: item });
      // The push step comes after the toast step (the toast was shown, not seen: the push still goes).
      expect(pushesTo(late.pushToken)).toEqual([]);
      await firstPush(late.pushToken);
      await idle();
      expect(client.frames.filter((received) => received.notification_id === id)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('a toast step after a push step: the push worker hands the next step on', async () => {
    const mo = await userWithDevice('mo');
    const client = await openClient(mo.token);
    try {
      const id = await notify({
        recipient_ids: [mo.id],
        channels: ['in_app', 'toast', 'push'],
        fallback: [
          { channel: 'push', after_secs: 100 },
          { channel: 'toast', after_secs: 300 },
        ],
      });
      await firstPush(mo.pushToken);
      expect(await client.next((frame) => frame.notification_id === id, 60_000)).toMatchObject({
        channel: 'toast',
      });
    } finally {
      await client.close();
    }
  });

  it('a seen item cancels every later step; an open connection gets no toast at delivery', async () => {
    const viewer = await userWithDevice('viewer');
    const client = await openClient(viewer.token);
    try {
      const id = await notify({
        recipient_ids: [viewer.id],
        channels: ['in_app', 'toast', 'realtime', 'push'],
        fallback: [
          { channel: 'toast', after_secs: 200, unless: 'seen' },
          { channel: 'push', after_secs: 300, unless: 'read' },
        ],
      });
      // With the toast withheld, the delivery sends the silent `realtime` frame.
      const frame = await client.next((received) => received.notification_id === id);
      expect(frame).toMatchObject({ channel: 'realtime' });
      const seen = await api('POST', '/notifications/seen', viewer.token, { ids: [frame.id] });
      expect(seen.status).toBe(200);
      // Long past both steps' times: neither went (the push step is stopped by the seen toast step before it).
      await new Promise((resolve) => setTimeout(resolve, 5000));
      await idle();
      expect(pushesTo(viewer.pushToken)).toEqual([]);
      expect(client.frames.filter((received) => received.notification_id === id)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a default rule's fallback applies; a notification's own fallback replaces it", async () => {
    const defaults = await service();
    const put = await api('PUT', '/preferences/defaults', defaults, {
      rules: [{ event_type: 'defaulted.*', fallback: [{ channel: 'push', after_secs: 300 }] }],
    });
    expect(put.status).toBe(200);
    expect(put.body.rules[0]).toMatchObject({
      event_type: 'defaulted.*',
      fallback: [{ channel: 'push', after_secs: 300, unless: 'read' }],
    });
    // Users see it among the defaults their preferences apply over.
    const shown = await api('GET', '/preferences', await runtime.mintUserToken(`viewer-${run}`));
    expect(shown.body.defaults.rules[0].fallback).toEqual([
      { channel: 'push', after_secs: 300, unless: 'read' },
    ]);
    try {
      const byDefault = await userWithDevice('by-default');
      const byDefaultReader = await userWithDevice('by-default-reader');
      const own = await userWithDevice('own');
      const defaulted = await notify({
        event_type: 'defaulted.reply',
        recipient_ids: [byDefault.id, byDefaultReader.id],
      });
      const readItem = await itemOf(byDefaultReader.token, defaulted);
      expect((await api('POST', `/notifications/${readItem}/read`, byDefaultReader.token)).status).toBe(200);
      // Its own fallback names only toast: push goes with the delivery, the default's push step does not apply.
      const client = await openClient(own.token);
      try {
        const overriding = await notify({
          event_type: 'defaulted.reply',
          recipient_ids: [own.id],
          channels: ['in_app', 'toast', 'push'],
          fallback: [{ channel: 'toast', after_secs: 100 }],
        });
        await firstPush(own.pushToken);
        expect(await client.next((frame) => frame.notification_id === overriding, 60_000)).toMatchObject({
          channel: 'toast',
        });
      } finally {
        await client.close();
      }
      await firstPush(byDefault.pushToken);
      await idle();
      expect(pushesTo(byDefaultReader.pushToken)).toEqual([]);
    } finally {
      await api('PUT', '/preferences/defaults', defaults, { rules: [] });
    }
  });

  it('a scheduled notification counts `after_secs` from its delivery at scheduled_at', async () => {
    const later = await userWithDevice('later');
    const scheduledAt = Date.now() + 3000;
    await notify({
      recipient_ids: [later.id],
      scheduled_at: new Date(scheduledAt).toISOString(),
      fallback: [{ channel: 'push', after_secs: 300 }],
    });
    const [push] = await firstPush(later.pushToken);
    // Not before its step: 300 s (3 s here) after the delivery, which is not before scheduled_at.
    expect(Date.parse(push?.at ?? '')).toBeGreaterThanOrEqual(scheduledAt + 3000);
  });

  it("a digest goes out with the opener's fallback: pushed if not read, not pushed if read", async () => {
    const idleUser = await userWithDevice('digest-idle');
    const reader = await userWithDevice('digest-reader');
    const send = (title: string) =>
      notify({
        title,
        recipient_ids: [idleUser.id, reader.id],
        digest: { key: `replies-${run}`, window_secs: 2 },
        // 900 s: 9 s here, time to read the digest first.
        fallback: [{ channel: 'push', after_secs: 900 }],
      });
    await send('first');
    await send('second');
    const digestItem = await eventually(
      async () => (await api('GET', '/notifications', reader.token)).body.items,
      (items: { id: string }[]) => items.length === 1,
      60_000,
    );
    const read = await api('POST', `/notifications/${digestItem[0]?.id}/read`, reader.token);
    expect(read.status).toBe(200);
    await firstPush(idleUser.pushToken);
    await idle();
    expect(pushesTo(idleUser.pushToken)).toHaveLength(1);
    expect(pushesTo(reader.pushToken)).toEqual([]);
  });

  it('refuses a bad fallback with a 400 naming the field', async () => {
    const answer = await api('POST', '/notifications', await service(), {
      event_type: 'fallback.reply',
      title: 'x',
      recipient_ids: ['someone'],
      channels: ['in_app', 'push', 'toast'],
      fallback: [
        { channel: 'push', after_secs: 60 },
        { channel: 'toast', after_secs: 60 },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.details).toContainEqual({
      field: 'fallback[1].after_secs',
      issue: 'must be greater than fallback[0].after_secs',
    });
  });
});
