import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpoSender } from '../../../lambdas/domain/push/expo';
import type { PushContent, PushTarget } from '../../../lambdas/domain/push/provider';
import { type ExpoStandIn, startExpoStandIn } from '../../../local/push/expo-stand-in';

/** The Expo sender against the Expo stand-in over real HTTP: the message it sends, and each answer classified. */
let expo: ExpoStandIn;
let secured: ExpoStandIn;

beforeAll(async () => {
  expo = await startExpoStandIn();
  secured = await startExpoStandIn({ accessToken: 'expo-access-token' });
});
afterAll(async () => {
  await expo?.close();
  await secured?.close();
});

let seq = 0;
const target = (): PushTarget => ({
  provider: 'expo',
  token: `ExponentPushToken[unit-${Date.now()}-${++seq}]`,
  app_id: null,
  registered_at: '2026-01-01T00:00:00.000Z',
});

const content = (overrides: Partial<PushContent> = {}): PushContent => ({
  push_id: '6f1c1c43-2a51-8e4b-9b35-0c6f4c1a2b3d',
  notification_id: 'n-1',
  event_type: 'billing.invoice_ready',
  title: 'Invoice ready',
  body: 'Your invoice is ready',
  data: { invoice: 'inv-1' },
  receiver_id: null,
  url: null,
  actions: [],
  priority: 'urgent',
  expires_at: '2030-01-01T00:00:00.000Z',
  collapse_key: null,
  badge: 3,
  silent: false,
  ...overrides,
});

const lastTo = (standIn: ExpoStandIn, token: string) =>
  standIn
    .received()
    .filter((push) => push.token === token)
    .at(-1);

describe('the Expo sender', () => {
  it('sends Expo’s message (priority, expiration, badge, ids in data) and records the ticket id', async () => {
    const device = target();
    const links = {
      receiver_id: '0196a3b2-7c00-7abc-8def-0123456789ab',
      url: 'myapp://invoices/inv-1',
      actions: [
        { id: 'pay', label: 'Pay now', url: 'https://pay.example/inv-1' },
        { id: 'dispute', label: 'Dispute', url: null },
      ],
    };
    const outcome = await createExpoSender({}, { url: expo.url }).send(device, content(links));
    expect(outcome).toEqual({ kind: 'delivered', provider_id: expect.any(String) });
    const push = lastTo(expo, device.token);
    expect(push?.push_id).toBe('6f1c1c43-2a51-8e4b-9b35-0c6f4c1a2b3d');
    expect(push?.headers['content-type']).toBe('application/json');
    expect(push?.payload).toEqual({
      to: device.token,
      title: 'Invoice ready',
      body: 'Your invoice is ready',
      sound: 'default',
      data: {
        invoice: 'inv-1',
        _notify: {
          push_id: '6f1c1c43-2a51-8e4b-9b35-0c6f4c1a2b3d',
          notification_id: 'n-1',
          event_type: 'billing.invoice_ready',
          ...links,
        },
      },
      // The category the app set with setNotificationCategoryAsync for these buttons.
      categoryId: 'pay.dispute',
      priority: 'high',
      expiration: Date.parse('2030-01-01T00:00:00.000Z') / 1000,
      badge: 3,
    });
  });

  it('sends a silent push as data only, and a low priority one as Expo’s default', async () => {
    const device = target();
    await createExpoSender({}, { url: expo.url }).send(
      device,
      content({ silent: true, priority: 'low', badge: null, expires_at: null }),
    );
    const payload = lastTo(expo, device.token)?.payload as Record<string, unknown>;
    expect(payload).toMatchObject({ _contentAvailable: true, priority: 'default' });
    expect(payload).not.toHaveProperty('title');
    expect(payload).not.toHaveProperty('badge');
    expect(payload).not.toHaveProperty('expiration');
  });

  it('shrinks a payload over Expo’s 4,096 bytes (data dropped first) instead of earning MessageTooBig', async () => {
    const device = target();
    const outcome = await createExpoSender({}, { url: expo.url }).send(
      device,
      content({ data: { blob: 'x'.repeat(5000) } }),
    );
    expect(outcome.kind).toBe('delivered');
    const payload = lastTo(expo, device.token)?.payload as { data: Record<string, unknown>; body: string };
    expect(payload.data).not.toHaveProperty('blob');
    expect(payload.body).toBe('Your invoice is ready');
  });

  it('has its stand-in refuse a category id that is not a string, as Expo does', async () => {
    const answer = await fetch(`${expo.url}/--/api/v2/push/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: target().token, title: 't', categoryId: ['pay'] }),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ errors: [{ message: '"categoryId" must be a string' }] });
  });

  it('classifies every answer', async () => {
    const sender = createExpoSender({}, { url: expo.url });
    const dead = target();
    expo.markDead(dead.token);
    expect(await sender.send(dead, content())).toMatchObject({ kind: 'gone', reason: /DeviceNotRegistered/ });
    expo.failNext({ status: 429, retryAfter: '120' });
    expect(await sender.send(target(), content())).toMatchObject({ kind: 'retry', retry_after_secs: 120 });
    expo.failNext({ status: 503 });
    const unavailable = await sender.send(target(), content());
    expect(unavailable).toMatchObject({ kind: 'retry', reason: /HTTP 503/ });
    expect(unavailable).not.toHaveProperty('retry_after_secs');
    expo.failNext({ ticketError: 'MessageRateExceeded' });
    expect(await sender.send(target(), content())).toMatchObject({ kind: 'retry' });
    expo.failNext({ ticketError: 'InvalidCredentials' });
    expect(await sender.send(target(), content())).toMatchObject({ kind: 'credentials' });
    expo.failNext({ ticketError: 'MessageTooBig' });
    expect(await sender.send(target(), content())).toMatchObject({ kind: 'rejected' });
    expo.failNext({ status: 400 });
    expect(await sender.send(target(), content())).toMatchObject({ kind: 'rejected', reason: /HTTP 400/ });
  });

  it('sends the access token where the project enforces push security; a wrong one is a credentials failure', async () => {
    const device = target();
    expect(
      await createExpoSender({ access_token: 'wrong' }, { url: secured.url }).send(device, content()),
    ).toMatchObject({ kind: 'credentials', reason: /HTTP 401/ });
    expect(
      await createExpoSender({ access_token: 'expo-access-token' }, { url: secured.url }).send(
        device,
        content(),
      ),
    ).toMatchObject({ kind: 'delivered' });
    expect(lastTo(secured, device.token)?.headers.authorization).toBe('Bearer expo-access-token');
  });

  it('retries when the service cannot be reached', async () => {
    const gone = await startExpoStandIn();
    await gone.close();
    expect(await createExpoSender({}, { url: gone.url }).send(target(), content())).toMatchObject({
      kind: 'retry',
      reason: /unreachable/,
    });
  });
});
