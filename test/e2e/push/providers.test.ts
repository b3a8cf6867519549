/**
 * The push channel through `npm start`'s own stand-ins, one device per provider the browser and phones use: an
 * Android device on FCM, an iPhone on APNs (HTTP/2 over TLS) and a browser on Web Push (a subscription made as a
 * browser makes it, decrypted by the stand-in with an implementation we did not write). Each device gets its push
 * once, with the content mapped, and the APNs badge is the recipient's unread count. A token a provider calls dead
 * is pruned; for APNs only when it was registered before the 410's timestamp. Each sender's wire details are tested
 * in test/unit/push; the Expo path, outcomes and exactly-once in push.test.ts and test/reliability.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApnsStandIn } from '../../../local/push/apns-stand-in';
import type { PushStandIn, ReceivedPush } from '../../../local/push/stand-in';
import type { WebPushStandIn } from '../../../local/push/webpush-stand-in';
import { apiClient, eventually } from '../../support/api';
import { type Runtime, startTestRuntime } from '../../support/runtime';

let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);
let seq = 0;
const run = Date.now();

beforeAll(async () => {
  runtime = await startTestRuntime();
});
afterAll(async () => {
  await runtime?.stop();
});

vi.setConfig({ testTimeout: 60_000 });

const standIn = <T extends PushStandIn>(provider: string): T => {
  const found = runtime.standIns.push.find((candidate) => candidate.provider === provider);
  if (!found) throw new Error(`npm start runs no ${provider} stand-in`);
  return found as T;
};

const hexToken = () => Array.from({ length: 64 }, () => Math.floor(Math.random() * 16).toString(16)).join('');

/** A user with an Android (FCM), an iOS (APNs) and a browser (Web Push) device. */
const userWithDevices = async () => {
  const id = `push-providers-${run}-${++seq}`;
  const token = await runtime.mintUserToken(id);
  const fcmToken = `fcm-${id}`;
  const apnsToken = hexToken();
  const vapid = await api('GET', '/push/vapid-public-key', token);
  expect(vapid.status).toBe(200);
  const subscription = standIn<WebPushStandIn>('webpush').subscribe(vapid.body.public_key);
  for (const body of [
    { token: fcmToken, platform: 'android' },
    { token: apnsToken, platform: 'ios', apns_environment: 'sandbox' },
    { platform: 'web', subscription },
  ]) {
    const registered = await api('POST', '/devices', token, body);
    expect(registered.status).toBe(201);
  }
  return { id, token, fcmToken, apnsToken, endpoint: subscription.endpoint };
};

const notify = async (recipient: string, title: string) => {
  const service = await runtime.mintServiceToken('builds', ['notifications:write']);
  const answer = await api('POST', '/notifications', service, {
    event_type: 'build.failed',
    title,
    body: 'main is red',
    data: { build: 9 },
    priority: 'high',
    recipient_ids: [recipient],
    channels: ['in_app', 'push'],
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
};

/** A push record as `GET /sent-notifications/{id}/pushes` lists it (the fields read here). */
interface PushRecordView {
  readonly provider: string;
  readonly status: string;
}

/** The parts of an FCM v1 message this test reads. */
interface FcmMessageView {
  readonly notification?: unknown;
  readonly data?: Record<string, string>;
  readonly android?: { readonly priority?: string };
}

const received = (provider: string, token: string): ReceivedPush[] =>
  standIn(provider)
    .received()
    .filter((push) => push.token === token);

const devicesOf = async (token: string): Promise<string[]> =>
  (await api('GET', '/devices', token)).body.items.map((device: { token: string }) => device.token);

describe('push through the providers npm start runs', () => {
  it('reaches an Android, an iPhone and a browser once each, with the content mapped', async () => {
    const user = await userWithDevices();
    const id = await notify(user.id, 'Build 9 failed');
    const [fcm, apns, web] = await eventually(
      async () => [
        received('fcm', user.fcmToken),
        received('apns', user.apnsToken),
        received('webpush', user.endpoint),
      ],
      (pushes) => pushes.every((list) => list.length === 1),
      30_000,
    );
    const pushIds = [fcm, apns, web].map((list) => list?.[0]?.push_id);
    expect(new Set(pushIds).size).toBe(3);

    const fcmMessage = fcm?.[0]?.payload as FcmMessageView | undefined;
    expect(fcmMessage?.notification).toEqual({ title: 'Build 9 failed', body: 'main is red' });
    expect(fcmMessage?.data).toMatchObject({ build: '9', notification_id: id });
    expect(fcmMessage?.android?.priority).toBe('HIGH');

    const apnsPush = apns?.[0];
    expect(apnsPush?.headers['apns-priority']).toBe('10');
    expect(apnsPush?.headers['apns-push-type']).toBe('alert');
    const aps = (apnsPush?.payload as { aps?: Record<string, unknown> } | undefined)?.aps;
    expect(aps?.alert).toEqual({ title: 'Build 9 failed', body: 'main is red' });
    expect(aps?.badge).toBe(1); // the feed item just written is the recipient's one unread item

    // Decrypted by http_ece: the same content, for the service worker of docs/push.md.
    expect(web?.[0]?.payload).toMatchObject({
      title: 'Build 9 failed',
      body: 'main is red',
      data: { build: 9 },
    });
    expect(web?.[0]?.headers.urgency).toBe('high');

    const records = await eventually(
      async (): Promise<PushRecordView[]> =>
        (await api('GET', `/sent-notifications/${id}/pushes`, user.token)).body.items,
      (items: PushRecordView[]) => items.length === 3 && items.every((item) => item.status === 'delivered'),
      30_000,
    );
    expect(records.map((record) => record.provider).sort()).toEqual(['apns', 'fcm', 'webpush']);
  });

  it('carries the feed item, the link and two buttons to each provider, its own way', async () => {
    const user = await userWithDevices();
    const expoToken = `ExponentPushToken[${user.id}]`;
    const expo = await api('POST', '/devices', user.token, {
      token: expoToken,
      platform: 'android',
      provider: 'expo',
    });
    expect(expo.status).toBe(201);
    const service = await runtime.mintServiceToken('approvals', ['notifications:write']);
    const url = 'https://app.example/requests/7';
    const actions = [
      { id: 'approve', label: 'Approve' },
      { id: 'view', label: 'View', url: 'https://app.example/requests/7/details' },
    ];
    const answer = await api('POST', '/notifications', service, {
      event_type: 'request.created',
      title: 'Bob asks for access',
      recipient_ids: [user.id],
      channels: ['in_app', 'push'],
      url,
      actions,
    });
    expect(answer.status).toBe(202);
    const feed = await api('GET', '/notifications', user.token);
    const receiverId: string = feed.body.items[0].id;
    expect(feed.body.items[0].notification_id).toBe(answer.body.id);
    const [fcm, apns, web, expoPushes] = await eventually(
      async () => [
        received('fcm', user.fcmToken),
        received('apns', user.apnsToken),
        received('webpush', user.endpoint),
        received('expo', expoToken),
      ],
      (pushes) => pushes.every((list) => list.length === 1),
      30_000,
    );
    const buttons = [
      { id: 'approve', label: 'Approve', url: null },
      { id: 'view', label: 'View', url: 'https://app.example/requests/7/details' },
    ];

    const fcmMessage = fcm?.[0]?.payload as FcmMessageView & Record<string, Record<string, unknown>>;
    expect(fcmMessage.data).toMatchObject({ receiver_id: receiverId, url, actions: JSON.stringify(buttons) });
    expect(fcmMessage.webpush).toMatchObject({
      fcm_options: { link: url },
      notification: {
        actions: [
          { action: 'approve', title: 'Approve' },
          { action: 'view', title: 'View' },
        ],
      },
    });
    expect(fcmMessage.apns).toMatchObject({ payload: { aps: { category: 'approve.view' } } });

    expect(apns?.[0]?.payload).toMatchObject({
      aps: { category: 'approve.view' },
      receiver_id: receiverId,
      url,
      actions: buttons,
    });

    expect(web?.[0]?.payload).toMatchObject({
      receiver_id: receiverId,
      url,
      actions: [
        { action: 'approve', title: 'Approve', url: null },
        { action: 'view', title: 'View', url: 'https://app.example/requests/7/details' },
      ],
    });

    expect(expoPushes?.[0]?.payload).toMatchObject({
      categoryId: 'approve.view',
      data: { _notify: { receiver_id: receiverId, url, actions: buttons } },
    });

    // The id the push carries is the one the app reports the press on.
    const pressed = await api('POST', `/notifications/${receiverId}/interact`, user.token, {
      action_id: 'approve',
    });
    expect(pressed.status).toBe(200);
    expect(pressed.body).toMatchObject({ id: receiverId, interacted_action: 'approve' });
  });

  it('prunes the tokens each provider calls dead, and keeps an APNs device registered after its 410', async () => {
    const user = await userWithDevices();
    const apns = standIn<ApnsStandIn>('apns');
    standIn('fcm').markDead(user.fcmToken);
    standIn('webpush').markDead(user.endpoint);
    apns.markDead(user.apnsToken);
    // Registered again after the 410's timestamp: the app got a fresh registration for the same token.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await api('POST', '/devices', user.token, {
      token: user.apnsToken,
      platform: 'ios',
      apns_environment: 'sandbox',
    });
    expect(again.status).toBe(201);
    const id = await notify(user.id, 'Build 10 failed');
    const records = await eventually(
      async (): Promise<PushRecordView[]> =>
        (await api('GET', `/sent-notifications/${id}/pushes`, user.token)).body.items,
      (items: PushRecordView[]) => items.length === 3 && items.every((item) => item.status !== 'sending'),
      30_000,
    );
    const statusOf = (provider: string) => records.find((record) => record.provider === provider)?.status;
    expect(statusOf('fcm')).toBe('pruned');
    expect(statusOf('webpush')).toBe('pruned');
    // APNs said 410 with a timestamp older than the registration: the device stays.
    expect(statusOf('apns')).not.toBe('delivered');
    expect(await devicesOf(user.token)).toEqual([user.apnsToken]);
  });
});
