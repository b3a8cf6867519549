import { randomBytes } from 'node:crypto';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pushSettingName } from '../../../common/env';
import { envNames } from '../../../lib/wiring';
import { type ExpoStandIn, startExpoStandIn } from '../../../local/push/expo-stand-in';
import type { ReceivedPush } from '../../../local/push/stand-in';
import { TIME_SCALE_ENV } from '../../../local/sqs/time-scale';
import { apiClient, eventually } from '../../support/api';
import { queueIdle } from '../../support/queues';
import { type Runtime, startTestRuntime } from '../../support/runtime';
import { TestClient } from '../../support/ws-client';
import { WebhookReceiver } from '../webhook-receiver';

/**
 * The `push` channel end to end over real HTTP: POST /notifications → delivery → the push queue → the push worker
 * → Expo's push service (the stand-in, over HTTP) → what the device would receive; then the records. SQS time runs
 * 100× faster here (delays and visibility timeouts), so retries and `unread` checks come in seconds.
 */
let runtime: Runtime;
let expo: ExpoStandIn;
const receiver = new WebhookReceiver();
let run = 0;
const savedScale = process.env[TIME_SCALE_ENV];

beforeAll(async () => {
  process.env[TIME_SCALE_ENV] = '0.01';
  expo = await startExpoStandIn();
  await receiver.start();
  runtime = await startTestRuntime({ env: { [pushSettingName('EXPO_URL')]: expo.url } });
  run = Date.now();
});
afterAll(async () => {
  await runtime?.stop();
  await expo?.close();
  await receiver.stop();
  if (savedScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = savedScale;
});

const api = apiClient(() => runtime.httpUrl);
const service = () => runtime.mintServiceToken('billing', ['notifications:write']);
let seq = 0;
const userId = (name: string) => `${name}-${run}-${++seq}`;

/** A user with one registered Expo device: its id, user token and push token. */
const userWithDevice = async (name: string) => {
  const id = userId(name);
  const token = await runtime.mintUserToken(id);
  const pushToken = `ExponentPushToken[${id}]`;
  const registered = await api('POST', '/devices', token, { token: pushToken, platform: 'ios' });
  expect(registered.status).toBe(201);
  return { id, token, pushToken };
};

const notify = async (body: Record<string, unknown>) => {
  const answer = await api('POST', '/notifications', await service(), {
    event_type: 'billing.invoice_ready',
    title: 'Invoice ready',
    body: 'Your invoice for November is ready',
    data: { invoice: 'inv-1' },
    ...body,
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
};

const pushesTo = (pushToken: string): ReceivedPush[] =>
  expo.received().filter((push) => push.token === pushToken);

const pushQueueIdle = () => eventually(() => queueIdle('push'), Boolean, 30_000);

// Retries, DLQ moves and `unread` checks cross several queue hops: up to a minute on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

interface PushRecordView {
  push_id: string;
  user_id: string;
  provider: string;
  status: string;
  attempts: number;
  provider_id: string | null;
  reason: string | null;
  next_attempt_at: string | null;
  updated_at: string;
}

const recordsOf = async (notificationId: string, token?: string): Promise<PushRecordView[]> => {
  const answer = await api('GET', `/sent-notifications/${notificationId}/pushes`, token ?? (await service()));
  expect(answer.status).toBe(200);
  return answer.body.items;
};

/** The records once every push of the notification is settled in a status `done` accepts. */
const settledRecords = (
  notificationId: string,
  count: number,
  done = (status: string) => status !== 'sending',
) =>
  eventually(
    () => recordsOf(notificationId),
    (records) => records.length === count && records.every((record) => done(record.status)),
    60_000,
  );

const devicesOf = async (token: string): Promise<string[]> =>
  (await api('GET', '/devices', token)).body.items.map((device: { token: string }) => device.token);

const dlqDepth = async (): Promise<number> => {
  const sqs = new SQSClient({});
  try {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'push-dlq' }));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(Attributes?.ApproximateNumberOfMessages);
  } finally {
    sqs.destroy();
  }
};

describe('push to an Expo device', () => {
  it('pushes once per notification × device, with content, ids and the unread count as badge', async () => {
    const alice = await userWithDevice('alice');
    // A second device of hers: one push each.
    const second = `ExponentPushToken[${alice.id}-tablet]`;
    expect((await api('POST', '/devices', alice.token, { token: second, platform: 'ios' })).status).toBe(201);
    const id = await notify({
      recipient_ids: [alice.id],
      channels: ['in_app', 'push'],
      priority: 'high',
      push: { collapse_key: 'invoices' },
    });
    const received = await eventually(
      () => [...pushesTo(alice.pushToken), ...pushesTo(second)],
      (pushes) => pushes.length >= 2,
    );
    await pushQueueIdle();
    expect([...pushesTo(alice.pushToken), ...pushesTo(second)]).toHaveLength(2);
    expect(new Set(received.map((push) => push.push_id)).size).toBe(2);
    const [push] = pushesTo(alice.pushToken);
    expect(push?.payload).toMatchObject({
      to: alice.pushToken,
      title: 'Invoice ready',
      body: 'Your invoice for November is ready',
      priority: 'high',
      badge: 1,
      data: { invoice: 'inv-1', _notify: { notification_id: id, push_id: push?.push_id } },
    });
  });

  it('pushes nothing on a notification without the push channel, nor to a user who turned push off', async () => {
    const bob = await userWithDevice('bob');
    const carol = await userWithDevice('carol');
    const carolPrefs = await api('PUT', '/preferences', carol.token, {
      rules: [{ event_type: 'billing.*', channels: { push: false } }],
    });
    expect(carolPrefs.status).toBe(200);
    await notify({ recipient_ids: [bob.id], channels: ['in_app'] });
    await notify({ recipient_ids: [carol.id], channels: ['in_app', 'push'] });
    // A third notification that does push, to know the queue has moved past the others.
    await notify({ recipient_ids: [bob.id], channels: ['push'] });
    await eventually(
      () => pushesTo(bob.pushToken),
      (pushes) => pushes.length >= 1,
    );
    await pushQueueIdle();
    expect(pushesTo(bob.pushToken)).toHaveLength(1);
    expect(pushesTo(carol.pushToken)).toHaveLength(0);
  });

  it('refuses push options without the push channel, and `unread` without in_app (400 naming the field)', async () => {
    const token = await service();
    const base = { event_type: 'billing.x', title: 't', recipient_ids: ['someone'] };
    const withoutChannel = await api('POST', '/notifications', token, { ...base, push: { when: 'always' } });
    expect(withoutChannel.status).toBe(400);
    expect(withoutChannel.body.details).toContainEqual({ field: 'push', issue: 'needs `push` in channels' });
    const unreadWithoutFeed = await api('POST', '/notifications', token, {
      ...base,
      channels: ['push'],
      push: { when: 'unread', after_secs: 60 },
    });
    expect(unreadWithoutFeed.status).toBe(400);
    expect(unreadWithoutFeed.body.details).toContainEqual({
      field: 'push.when',
      issue: '`unread` needs `in_app` in channels',
    });
    const afterWithoutUnread = await api('POST', '/notifications', token, {
      ...base,
      channels: ['push'],
      push: { when: 'always', after_secs: 60, collapse_key: 'has spaces' },
    });
    expect(afterWithoutUnread.status).toBe(400);
    expect(afterWithoutUnread.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual([
      'push.after_secs',
      'push.collapse_key',
    ]);
  });
});

describe('what the providers answer', () => {
  it('records a delivered push with the provider’s id, and shows the summary to its creator only', async () => {
    const dana = await userWithDevice('dana');
    const id = await notify({ recipient_ids: [dana.id], channels: ['in_app', 'push'] });
    const [record] = await settledRecords(id, 1);
    expect(record).toMatchObject({ user_id: dana.id, provider: 'expo', status: 'delivered', attempts: 1 });
    expect(record?.provider_id).toEqual(expect.any(String));
    expect(pushesTo(dana.pushToken).map((push) => push.push_id)).toEqual([record?.push_id]);
    const summary = await api('GET', `/sent-notifications/${id}`, await service());
    expect(summary).toEqual({
      status: 200,
      body: {
        notification_id: id,
        status: 'accepted',
        recipients: 1,
        feed_items: 1,
        frames: 0,
        pushes: { sending: 0, delivered: 1, retrying: 0, failed: 0, pruned: 0 },
      },
    });
    // Another service, or the recipient, does not see the summary; the recipient reads its own records.
    const other = await runtime.mintServiceToken('shop', ['notifications:write']);
    expect((await api('GET', `/sent-notifications/${id}`, other)).status).toBe(404);
    expect((await api('GET', `/sent-notifications/${id}`, dana.token)).status).toBe(404);
    expect(await recordsOf(id, dana.token)).toEqual([record]);
    const stranger = await runtime.mintUserToken(userId('stranger'));
    expect(await recordsOf(id, stranger)).toEqual([]);
  });

  it('honours Retry-After: the push waits as long as the provider asked, then goes out once', async () => {
    const erin = await userWithDevice('erin');
    expo.failNext({ status: 429, retryAfter: '600' });
    const id = await notify({ recipient_ids: [erin.id], channels: ['push'] });
    const [retrying] = await settledRecords(id, 1, (status) => status === 'retrying');
    expect(retrying).toMatchObject({ status: 'retrying', attempts: 1 });
    expect(retrying?.reason).toContain('429');
    // Ten minutes asked (SQS time runs 100× faster here): not the 5-second backoff of a bare 429.
    const waitSecs =
      (Date.parse(retrying?.next_attempt_at ?? '') - Date.parse(retrying?.updated_at ?? '')) / 1000;
    expect(waitSecs).toBeGreaterThanOrEqual(599);
    expect(pushesTo(erin.pushToken)).toEqual([]);
    const [delivered] = await settledRecords(id, 1, (status) => status === 'delivered');
    expect(delivered).toMatchObject({ status: 'delivered', attempts: 2, next_attempt_at: null });
    await pushQueueIdle();
    expect(pushesTo(erin.pushToken)).toHaveLength(1);
  });

  it('makes no further attempt once the recipient turned push off while it was retrying', async () => {
    const hana = await userWithDevice('hana');
    expo.failNext({ status: 429, retryAfter: '600' });
    const id = await notify({ recipient_ids: [hana.id], channels: ['push'] });
    await settledRecords(id, 1, (status) => status === 'retrying');
    const turnedOff = await api('PUT', '/preferences', hana.token, {
      rules: [{ event_type: 'billing.*', channels: { push: false } }],
    });
    expect(turnedOff.status).toBe(200);
    const [record] = await settledRecords(id, 1, (status) => status === 'failed');
    expect(record).toMatchObject({ status: 'failed', attempts: 2 });
    expect(record?.reason).toBe('push turned off by the recipient before this attempt');
    await pushQueueIdle();
    expect(pushesTo(hana.pushToken)).toEqual([]);
  });

  it('gives up after the last attempt: recorded failed, its dead letter in the DLQ, the device kept', async () => {
    const finn = await userWithDevice('finn');
    const before = await dlqDepth();
    expo.failNext({ status: 503 }, 5);
    const id = await notify({ recipient_ids: [finn.id], channels: ['push'] });
    const [record] = await settledRecords(id, 1, (status) => status === 'failed');
    expect(record).toMatchObject({ status: 'failed', attempts: 5 });
    expect(record?.reason).toMatch(/^gave up after 5 attempts: expo HTTP 503/);
    expect(await eventually(dlqDepth, (depth) => depth > before, 60_000)).toBe(before + 1);
    expect(pushesTo(finn.pushToken)).toEqual([]);
    expect(await devicesOf(finn.token)).toEqual([finn.pushToken]);
  });

  it('on refused credentials: failed, dead-lettered, no device deleted', async () => {
    const gina = await userWithDevice('gina');
    const before = await dlqDepth();
    expo.failNext({ status: 401 });
    const id = await notify({ recipient_ids: [gina.id], channels: ['push'] });
    const [record] = await settledRecords(id, 1, (status) => status === 'failed');
    expect(record).toMatchObject({ status: 'failed', attempts: 1 });
    expect(record?.reason).toMatch(/^credentials refused: expo HTTP 401/);
    expect(await eventually(dlqDepth, (depth) => depth > before, 60_000)).toBe(before + 1);
    expect(await devicesOf(gina.token)).toEqual([gina.pushToken]);
  });

  it('records a rejected push as failed without retrying it', async () => {
    const hugo = await userWithDevice('hugo');
    expo.failNext({ ticketError: 'MessageTooBig' });
    const id = await notify({ recipient_ids: [hugo.id], channels: ['push'] });
    const [record] = await settledRecords(id, 1);
    expect(record).toMatchObject({ status: 'failed', attempts: 1 });
    expect(record?.reason).toContain('MessageTooBig');
    await pushQueueIdle();
    expect(pushesTo(hugo.pushToken)).toEqual([]);
    expect(await devicesOf(hugo.token)).toEqual([hugo.pushToken]);
  });

  it('prunes a dead token: the device deleted, the push recorded pruned, a webhook told', async () => {
    const secret = `s3cret-${randomBytes(8).toString('hex')}`;
    const url = receiver.endpoint('/pruned', secret);
    const admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
    const hook = await api('POST', '/webhooks', admin, {
      url,
      secret,
      event_filters: ['notify.device.pruned'],
      name: 'pruned devices',
    });
    expect(hook.status).toBe(201);
    const ivan = await userWithDevice('ivan');
    const alive = `ExponentPushToken[${ivan.id}-alive]`;
    expect((await api('POST', '/devices', ivan.token, { token: alive, platform: 'android' })).status).toBe(
      201,
    );
    expo.markDead(ivan.pushToken);
    const id = await notify({ recipient_ids: [ivan.id], channels: ['push'] });
    const records = await settledRecords(id, 2);
    expect(records.map((record) => record.status).sort()).toEqual(['delivered', 'pruned']);
    const pruned = records.find((record) => record.status === 'pruned');
    expect(pruned?.reason).toContain('DeviceNotRegistered');
    expect(await devicesOf(ivan.token)).toEqual([alive]);
    const [event] = await eventually(
      () => receiver.at('/pruned'),
      (received) => received.length >= 1,
      60_000,
    );
    expect(event?.verified).toMatchObject({
      type: 'notify.device.pruned',
      data: {
        id: pruned?.push_id,
        event_type: 'notify.device.pruned',
        source: 'notify',
        data: { user_id: ivan.id, token: ivan.pushToken, provider: 'expo', notification_id: id },
      },
    });
    const summary = await api('GET', `/sent-notifications/${id}`, await service());
    expect(summary.body.pushes).toMatchObject({ delivered: 1, pruned: 1 });
  });
});

// Side by side: each waits on its own delays (after_secs, scheduled_at) for users of its own; no provider failure
// is armed here (`failNext` would hit whichever push comes next).
describe.concurrent('routing', () => {
  it('`offline`: only recipients none of whose connections received the frame', async () => {
    const online = await userWithDevice('online');
    const offline = await userWithDevice('offline');
    const socket = await TestClient.open(`${runtime.wsUrl}?token=${online.token}`);
    try {
      await socket.nextOfType('session', 30_000);
      const id = await notify({
        recipient_ids: [online.id, offline.id],
        channels: ['in_app', 'realtime', 'push'],
        push: { when: 'offline' },
      });
      await socket.next((frame) => frame.notification_id === id);
      const records = await settledRecords(id, 1);
      expect(records.map((record) => record.user_id)).toEqual([offline.id]);
      await pushQueueIdle();
      expect(pushesTo(online.pushToken)).toEqual([]);
      expect(pushesTo(offline.pushToken)).toHaveLength(1);
      const summary = await api('GET', `/sent-notifications/${id}`, await service());
      expect(summary.body).toMatchObject({ recipients: 2, feed_items: 2, frames: 1 });
    } finally {
      socket.socket.close();
    }
  });

  it('`unread`: only if the feed item is still unread after `after_secs`', async () => {
    const reader = await userWithDevice('reader');
    const idle = await userWithDevice('idle');
    // In-app off: no feed item to read, so nothing shows it was seen; the fallback push goes.
    const noFeed = await userWithDevice('no-feed');
    const idleAfterAll = await userWithDevice('idle-after-all');
    const prefs = await api('PUT', '/preferences', noFeed.token, {
      rules: [{ event_type: 'billing.*', channels: { in_app: false } }],
    });
    expect(prefs.status).toBe(200);
    // 900 s: SQS's longest delay, 9 s here; the read below comes long before.
    const id = await notify({
      recipient_ids: [reader.id, idle.id, noFeed.id, idleAfterAll.id],
      channels: ['in_app', 'push'],
      push: { when: 'unread', after_secs: 900 },
    });
    const feed = await api('GET', '/notifications', reader.token);
    const item = feed.body.items.find((entry: { notification_id: string }) => entry.notification_id === id);
    expect((await api('POST', `/notifications/${item.id}/read`, reader.token)).status).toBe(200);
    // Push turned off during the wait: the preferences at sending time decide.
    const changedMind = await api('PUT', '/preferences', idleAfterAll.token, {
      rules: [{ event_type: 'billing.*', channels: { push: false } }],
    });
    expect(changedMind.status).toBe(200);
    expect(await recordsOf(id)).toEqual([]);
    const records = await settledRecords(id, 2);
    expect(records.map((record) => record.user_id).sort()).toEqual([idle.id, noFeed.id].sort());
    await pushQueueIdle();
    expect(pushesTo(reader.pushToken)).toEqual([]);
    expect(pushesTo(idle.pushToken)).toHaveLength(1);
    expect(pushesTo(noFeed.pushToken)).toHaveLength(1);
    expect(pushesTo(idleAfterAll.pushToken)).toEqual([]);
  });

  it('scheduled: pushed at scheduled_at, not before; expired: never pushed', async () => {
    const jan = await userWithDevice('jan');
    const scheduledAt = new Date(Date.now() + 3000).toISOString();
    const id = await notify({ recipient_ids: [jan.id], channels: ['push'], scheduled_at: scheduledAt });
    const [push] = await eventually(
      () => pushesTo(jan.pushToken),
      (pushes) => pushes.length >= 1,
      60_000,
    );
    expect(Date.parse(push?.at ?? '')).toBeGreaterThanOrEqual(Date.parse(scheduledAt));
    expect((await recordsOf(id)).map((record) => record.status)).toEqual(['delivered']);
    // Expired before its `unread` check is due (after_secs 600: 6 s here): nothing goes out.
    const kim = await userWithDevice('kim');
    const expiring = await notify({
      recipient_ids: [kim.id],
      channels: ['in_app', 'push'],
      expires_at: new Date(Date.now() + 2000).toISOString(),
      push: { when: 'unread', after_secs: 600 },
    });
    await new Promise((resolve) => setTimeout(resolve, 7000));
    await pushQueueIdle();
    expect(pushesTo(kim.pushToken)).toEqual([]);
    expect(await recordsOf(expiring)).toEqual([]);
  });
});

describe('exactly once', () => {
  it('one push per device when the same push message arrives several times, also at once', async () => {
    const lea = await userWithDevice('lea');
    // Its own push waits 900 s (9 s here) for the `unread` check; the copies below, sent by hand together, come
    // first: of the six and the notification's own, one push goes out.
    const id = await notify({
      recipient_ids: [lea.id],
      channels: ['in_app', 'push'],
      push: { when: 'unread', after_secs: 900 },
    });
    const sqs = new SQSClient({});
    try {
      const body = JSON.stringify({ kind: 'recipients', notification_id: id, recipients: [lea.id] });
      const queueUrl = runtime.env[envNames.queueUrl('push')];
      await Promise.all(
        Array.from({ length: 6 }, () =>
          sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body })),
        ),
      );
    } finally {
      sqs.destroy();
    }
    const records = await settledRecords(id, 1);
    expect(records).toMatchObject([{ status: 'delivered', attempts: 1 }]);
    await pushQueueIdle();
    expect(pushesTo(lea.pushToken)).toHaveLength(1);
  });

  it('an `unread` push queued without a step (by a version before fallback steps) still checks the item first', async () => {
    const mo = await userWithDevice('mo');
    const id = await notify({
      recipient_ids: [mo.id],
      channels: ['in_app', 'push'],
      push: { when: 'unread', after_secs: 900 },
    });
    const feed = await api('GET', '/notifications', mo.token);
    const item = feed.body.items.find((entry: { notification_id: string }) => entry.notification_id === id);
    expect((await api('POST', `/notifications/${item.id}/read`, mo.token)).status).toBe(200);
    const sqs = new SQSClient({});
    try {
      // The message as it was queued then: no `step`, due at once.
      const body = JSON.stringify({ kind: 'recipients', notification_id: id, recipients: [mo.id] });
      await sqs.send(
        new SendMessageCommand({ QueueUrl: runtime.env[envNames.queueUrl('push')], MessageBody: body }),
      );
    } finally {
      sqs.destroy();
    }
    // Handled once the queue is idle (its own step waits 9 s here, delayed, which idle does not count).
    await pushQueueIdle();
    expect(await recordsOf(id)).toEqual([]);
    expect(pushesTo(mo.pushToken)).toEqual([]);
  });
});
