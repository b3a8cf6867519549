import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envNames } from '../../../lib/wiring';
import { type ExpoStandIn, startExpoStandIn } from '../../../local/push/expo-stand-in';
import type { ReceivedPush } from '../../../local/push/stand-in';
import { TIME_SCALE_ENV } from '../../../local/sqs/time-scale';
import { apiClient, eventually } from '../../support/api';
import { queueIdle } from '../../support/queues';
import { type Runtime, startTestRuntime } from '../../support/runtime';

/**
 * The `push` channel end to end over real HTTP: POST /notifications → delivery → the push queue → the push worker
 * → Expo's push service (the stand-in, over HTTP) → what the device would receive; then the records. SQS time runs
 * 100× faster here (delays and visibility timeouts), so retries and `unread` checks come in seconds.
 */
let runtime: Runtime;
let expo: ExpoStandIn;
let run = 0;
const savedScale = process.env[TIME_SCALE_ENV];

beforeAll(async () => {
  process.env[TIME_SCALE_ENV] = '0.01';
  expo = await startExpoStandIn();
  runtime = await startTestRuntime({ env: { [envNames.pushExpoUrl]: expo.url } });
  run = Date.now();
});
afterAll(async () => {
  await runtime?.stop();
  await expo?.close();
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
