import { createECDH, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushSettingName } from '../../common/env';
import { apiClient } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
let run = 0;

/** Two apps: com.example with every provider (APNs sandbox by default), web-only with Web Push alone. */
const APPS = {
  'com.example': {
    fcm: { credentials: { project_id: 'example' } },
    apns: { credentials: { key_id: 'K' }, environment: 'sandbox' },
    webpush: { credentials: { public_key: 'P' } },
    expo: {},
  },
  'com.example.beta': { apns: { credentials: { key_id: 'K' } } },
  'web-only': { webpush: { credentials: { public_key: 'P' } } },
};

beforeAll(async () => {
  runtime = await startTestRuntime({
    env: {
      [pushSettingName('APPS')]: JSON.stringify(APPS),
      [pushSettingName('DEFAULT_APP')]: 'com.example',
    },
  });
  run = Date.now();
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

let seq = 0;
const deviceToken = () => {
  seq += 1;
  return `device-${run}-${seq}`;
};
const tokenOf = (name: string) => runtime.mintUserToken(`${name}-${run}`);

/** A subscription as a browser's `PushSubscription.toJSON()` gives it (keys as unpadded base64url). */
const subscription = (endpoint = `http://127.0.0.1:9/push/${deviceToken()}`) => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    endpoint,
    expirationTime: null,
    keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') },
  };
};

/** The fields a 400 names. */
const fieldsOf = (body: { code: string; details?: { field: string }[] }) => {
  expect(body.code).toBe('validation');
  return (body.details ?? []).map((detail) => detail.field);
};

describe('devices', () => {
  it('registers (201), lists one’s own, and updates a token registered again', async () => {
    const alice = await tokenOf('alice');
    const token = deviceToken();
    const created = await api('POST', '/devices', alice, { token, platform: 'ios', app_id: 'com.example' });
    expect(created).toEqual({
      status: 201,
      body: {
        token,
        platform: 'ios',
        provider: 'apns',
        app_id: 'com.example',
        // The app's environment when the device names none.
        apns_environment: 'sandbox',
        web_keys: null,
        created_at: expect.any(String),
      },
    });
    const updated = await api('POST', '/devices', alice, {
      token,
      platform: 'ios',
      app_id: 'com.example.beta',
    });
    expect(updated).toEqual({
      status: 201,
      body: { ...created.body, app_id: 'com.example.beta', apns_environment: 'production' },
    });
    expect((await api('GET', '/devices', alice)).body).toEqual({ items: [updated.body], next_cursor: null });
  });

  it('moves a token registered by another user (one owner per token)', async () => {
    const [alice, bob] = [await tokenOf('alice2'), await tokenOf('bob2')];
    const token = deviceToken();
    await api('POST', '/devices', alice, { token, platform: 'android' });
    const moved = await api('POST', '/devices', bob, { token, platform: 'android' });
    expect(moved.status).toBe(201);
    expect((await api('GET', '/devices', bob)).body.items).toEqual([moved.body]);
    expect((await api('GET', '/devices', alice)).body.items).toEqual([]);
  });

  it('deletes only one’s own token (204); another’s or an unknown one is 404', async () => {
    const [carol, dave] = [await tokenOf('carol'), await tokenOf('dave')];
    const token = deviceToken();
    await api('POST', '/devices', carol, { token, platform: 'android' });
    expect((await api('DELETE', '/devices', dave, { token })).status).toBe(404);
    expect((await api('DELETE', '/devices', carol, { token: deviceToken() })).status).toBe(404);
    expect((await api('GET', '/devices', carol)).body.items).toHaveLength(1);
    expect(await api('DELETE', '/devices', carol, { token })).toEqual({ status: 204, body: undefined });
    expect((await api('GET', '/devices', carol)).body.items).toEqual([]);
  });

  it('validates the body (400) and needs a user token (401 without, 403 for a service)', async () => {
    const alice = await tokenOf('alice3');
    expect((await api('POST', '/devices', alice, { token: deviceToken(), platform: 'symbian' })).status).toBe(
      400,
    );
    expect((await api('POST', '/devices', alice, { platform: 'ios' })).status).toBe(400);
    expect((await api('DELETE', '/devices', alice, {})).status).toBe(400);
    expect((await api('GET', '/devices', undefined)).status).toBe(401);
    const service = await runtime.mintServiceToken('push', ['notifications:write']);
    expect((await api('POST', '/devices', service, { token: deviceToken(), platform: 'ios' })).status).toBe(
      403,
    );
  });
});

describe('devices: what each provider needs', () => {
  it('registers each provider’s shape: FCM, APNs with its environment, Expo, and a browser’s PushSubscription', async () => {
    const erin = await tokenOf('erin');
    const fcm = await api('POST', '/devices', erin, { token: deviceToken(), platform: 'android' });
    expect(fcm.body).toMatchObject({ provider: 'fcm', app_id: null, apns_environment: null, web_keys: null });
    const fcmOnIos = await api('POST', '/devices', erin, {
      token: deviceToken(),
      platform: 'ios',
      provider: 'fcm',
    });
    expect(fcmOnIos.body).toMatchObject({ provider: 'fcm', platform: 'ios' });
    const apns = await api('POST', '/devices', erin, {
      token: deviceToken(),
      platform: 'ios',
      apns_environment: 'production',
    });
    expect(apns.body).toMatchObject({ provider: 'apns', apns_environment: 'production' });
    const expo = await api('POST', '/devices', erin, {
      token: `ExponentPushToken[${deviceToken()}]`,
      platform: 'android',
      provider: 'expo',
    });
    expect(expo.body).toMatchObject({ provider: 'expo' });
    const browser = subscription();
    const web = await api('POST', '/devices', erin, {
      platform: 'web',
      app_id: 'web-only',
      subscription: browser,
    });
    expect(web).toEqual({
      status: 201,
      body: {
        token: browser.endpoint,
        platform: 'web',
        provider: 'webpush',
        app_id: 'web-only',
        apns_environment: null,
        // The auth secret is never answered.
        web_keys: { p256dh: browser.keys.p256dh },
        created_at: expect.any(String),
      },
    });
    // The same subscription with padded keys and the token spelled out is the same device.
    const padded = {
      ...browser,
      keys: { p256dh: `${browser.keys.p256dh}=`, auth: `${browser.keys.auth}==` },
    };
    const again = await api('POST', '/devices', erin, {
      token: browser.endpoint,
      platform: 'web',
      app_id: 'web-only',
      subscription: padded,
    });
    expect(again.body).toEqual(web.body);
    const listed = (await api('GET', '/devices', erin)).body.items;
    expect(listed).toHaveLength(5);
    expect(listed).toContainEqual(web.body);
  });

  it('moving a token to another provider drops the old provider’s fields', async () => {
    const frank = await tokenOf('frank');
    const token = deviceToken();
    await api('POST', '/devices', frank, { token, platform: 'ios', apns_environment: 'sandbox' });
    const moved = await api('POST', '/devices', frank, { token, platform: 'ios', provider: 'fcm' });
    expect(moved.body).toMatchObject({ provider: 'fcm', apns_environment: null });
  });

  const badBodies: [string, Record<string, unknown>, string][] = [
    ['an unknown provider', { token: 't', platform: 'ios', provider: 'pushy' }, 'provider'],
    [
      'a provider that does not reach the platform',
      { token: 't', platform: 'android', provider: 'apns' },
      'provider',
    ],
    [
      'Web Push for a phone',
      { platform: 'ios', provider: 'webpush', subscription: subscription() },
      'provider',
    ],
    ['an app without that provider', { token: 't', platform: 'android', app_id: 'web-only' }, 'provider'],
    ['an unknown app_id', { token: 't', platform: 'android', app_id: 'com.unknown' }, 'app_id'],
    [
      'an APNs environment on FCM',
      { token: 't', platform: 'android', apns_environment: 'sandbox' },
      'apns_environment',
    ],
    [
      'an unknown APNs environment',
      { token: 't', platform: 'ios', apns_environment: 'staging' },
      'apns_environment',
    ],
    ['no token for FCM', { platform: 'android' }, 'token'],
    [
      'Web Push without a subscription',
      { token: 'https://push.example.net/x', platform: 'web' },
      'subscription',
    ],
    [
      'a subscription on FCM',
      { token: 't', platform: 'android', subscription: subscription() },
      'subscription',
    ],
    [
      'a token other than the endpoint',
      { token: 'other', platform: 'web', subscription: subscription() },
      'token',
    ],
  ];
  it.each(badBodies)('400 naming the field for %s', async (_, body, field) => {
    const gina = await tokenOf('gina');
    const { status, body: answer } = await api('POST', '/devices', gina, body);
    expect(status).toBe(400);
    expect(fieldsOf(answer)).toContain(field);
    expect((await api('GET', '/devices', gina)).body.items).toEqual([]);
  });

  const withKeys = (keys: Partial<Record<'p256dh' | 'auth', string>>) => {
    const good = subscription();
    return { ...good, keys: { ...good.keys, ...keys } };
  };
  // A key whose standard base64 has a `+` or `/` (about 1 in 16 has neither, and is then valid base64url too).
  let valid = subscription().keys.p256dh;
  while (!/[+/]/.test(Buffer.from(valid, 'base64url').toString('base64'))) valid = subscription().keys.p256dh;
  const bytes = Buffer.from(valid, 'base64url');
  const offCurve = Buffer.from(bytes);
  offCurve[64] = (offCurve[64] as number) ^ 1;
  const compressed = Buffer.concat([Buffer.from([2 + ((bytes[64] as number) & 1)]), bytes.subarray(1, 33)]);
  const badSubscriptions: [string, unknown, string][] = [
    [
      'a p256dh off the curve',
      withKeys({ p256dh: offCurve.toString('base64url') }),
      'subscription.keys.p256dh',
    ],
    [
      'a compressed p256dh',
      withKeys({ p256dh: compressed.toString('base64url') }),
      'subscription.keys.p256dh',
    ],
    [
      'a p256dh in standard base64',
      withKeys({ p256dh: bytes.toString('base64') }),
      'subscription.keys.p256dh',
    ],
    [
      'a p256dh of 64 bytes',
      withKeys({ p256dh: bytes.subarray(1).toString('base64url') }),
      'subscription.keys.p256dh',
    ],
    [
      'an auth of 15 bytes',
      withKeys({ auth: randomBytes(15).toString('base64url') }),
      'subscription.keys.auth',
    ],
    [
      'an auth of 32 bytes',
      withKeys({ auth: randomBytes(32).toString('base64url') }),
      'subscription.keys.auth',
    ],
    ['no keys', { endpoint: 'http://127.0.0.1:9/x' }, 'subscription.keys'],
    ['a private endpoint', subscription('https://10.1.2.3/push/1'), 'subscription.endpoint'],
    ['the metadata endpoint', subscription('http://169.254.169.254/latest'), 'subscription.endpoint'],
    ['an endpoint with credentials', subscription('https://user:pw@127.0.0.1/push'), 'subscription.endpoint'],
    ['an endpoint that is no URL', subscription('push-service/1'), 'subscription.endpoint'],
  ];
  it.each(badSubscriptions)('400 naming the field for %s', async (_, browser, field) => {
    const hank = await tokenOf('hank');
    const { status, body } = await api('POST', '/devices', hank, { platform: 'web', subscription: browser });
    expect(status).toBe(400);
    expect(fieldsOf(body)).toContain(field);
    expect((await api('GET', '/devices', hank)).body.items).toEqual([]);
  });
});
