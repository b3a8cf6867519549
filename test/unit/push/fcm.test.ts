import { generateKeyPairSync } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFcmSender, FcmCredentialsError, parseFcmCredentials } from '../../../lambdas/domain/push/fcm';
import type { PushContent, PushTarget } from '../../../lambdas/domain/push/provider';
import {
  type FcmServiceAccount,
  type FcmStandIn,
  type FcmStandInOptions,
  startFcmStandIn,
} from '../../../local/push/fcm-stand-in';
import { pushContent } from '../../support/push-content';

/** The FCM sender over real HTTP against the local FCM stand-in (OAuth token endpoint and messages:send). */

const T0 = Date.parse('2026-03-01T12:00:00Z');

const PUSH_ID = '0b0f9d4e-7d55-4b43-9d5f-0d5a3c1f6a10';

const content = (overrides: Partial<PushContent> = {}): PushContent =>
  pushContent({
    push_id: PUSH_ID,
    body: 'Alice replied',
    data: { post: 42, thread: 'general', flags: { pinned: true }, seen: false, nothing: null },
    ...overrides,
  });

const target = (token = 'fcm-token-1'): PushTarget => ({
  provider: 'fcm',
  token,
  app_id: null,
  registered_at: '2026-01-01T00:00:00Z',
});

const running: FcmStandIn[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((standIn) => standIn.close()));
});

/** One RSA key for every stand-in (each has its own key id and token endpoint, so its own cached token). */
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** A stand-in and a sender on one movable clock. */
const setUp = async (options: FcmStandInOptions = {}) => {
  const clock = { now: T0 };
  const now = () => clock.now;
  const fcm = await startFcmStandIn({ now, privateKey, ...options });
  running.push(fcm);
  const sender = createFcmSender(fcm.credentials, { url: fcm.url, now });
  return { fcm, sender, clock, now };
};

type Message = {
  notification?: { title: string; body: string };
  data: Record<string, string>;
  android: { priority: string; ttl?: string; collapse_key?: string };
  apns: { headers: Record<string, string>; payload: { aps: Record<string, unknown> } };
  webpush: { headers: Record<string, string> };
};
const lastMessage = (fcm: FcmStandIn): Message => fcm.received().at(-1)?.payload as Message;

const RECEIVER = '0196a3b2-7c00-7abc-8def-0123456789ab';

describe('FCM sender: mapping', () => {
  it('sends title, body and data (non-strings as JSON text), with Notify’s keys, and records the message name', async () => {
    const { fcm, sender } = await setUp();
    const outcome = await sender.send(target(), content());
    expect(outcome).toEqual({
      kind: 'delivered',
      provider_id: expect.stringMatching(/^projects\/notify-local\/messages\/.+/),
    });
    const [push] = fcm.received();
    expect(push?.token).toBe('fcm-token-1');
    expect(push?.push_id).toBe(PUSH_ID);
    expect(push?.headers.authorization).toMatch(/^Bearer ya29\./);
    const message = lastMessage(fcm);
    expect(message.notification).toEqual({ title: 'New comment', body: 'Alice replied' });
    expect(message.data).toEqual({
      post: '42',
      thread: 'general',
      flags: '{"pinned":true}',
      seen: 'false',
      nothing: 'null',
      notification_id: 'n-1',
      event_type: 'comment.created',
      push_id: PUSH_ID,
    });
    // No expiry: FCM's longest (no ttl), no collapse key, no badge.
    expect(message.android).toEqual({ priority: 'NORMAL' });
    expect(message.apns).toEqual({
      headers: { 'apns-push-type': 'alert', 'apns-priority': '5' },
      payload: { aps: {} },
    });
    expect(message.webpush).toEqual({ headers: { Urgency: 'normal' } });
  });

  it('carries the feed item, the link and the buttons: data keys, the web link, the web buttons, the iOS category', async () => {
    const { fcm, sender } = await setUp();
    const actions = [
      { id: 'approve', label: 'Approve', url: null },
      { id: 'view', label: 'View', url: 'https://app.example/threads/7' },
    ];
    await sender.send(
      target(),
      content({ receiver_id: RECEIVER, url: 'https://app.example/threads/7', actions, badge: 2 }),
    );
    const message = lastMessage(fcm);
    expect(message.data).toMatchObject({
      receiver_id: RECEIVER,
      url: 'https://app.example/threads/7',
      actions: JSON.stringify(actions),
    });
    expect(message.apns.payload).toEqual({ aps: { badge: 2, category: 'approve.view' } });
    expect(message.webpush).toEqual({
      headers: { Urgency: 'normal' },
      notification: {
        actions: [
          { action: 'approve', title: 'Approve' },
          { action: 'view', title: 'View' },
        ],
      },
      fcm_options: { link: 'https://app.example/threads/7' },
    });
    // FCM opens only an https link; a deep link stays in `data` for the app.
    await sender.send(target(), content({ receiver_id: RECEIVER, url: 'myapp://threads/7' }));
    const deepLink = lastMessage(fcm);
    expect(deepLink.data.url).toBe('myapp://threads/7');
    expect(deepLink.webpush).toEqual({ headers: { Urgency: 'normal' } });
    expect(deepLink.android).toEqual({ priority: 'NORMAL' });
  });

  it.each([
    ['low', 'NORMAL', '5', 'normal'],
    ['normal', 'NORMAL', '5', 'normal'],
    ['high', 'HIGH', '10', 'high'],
    ['urgent', 'HIGH', '10', 'high'],
  ] as const)(
    'maps priority %s to android %s, apns-priority %s, Urgency %s',
    async (priority, android, apns, web) => {
      const { fcm, sender } = await setUp();
      expect((await sender.send(target(), content({ priority }))).kind).toBe('delivered');
      const message = lastMessage(fcm);
      expect(message.android.priority).toBe(android);
      expect(message.apns.headers['apns-priority']).toBe(apns);
      expect(message.webpush.headers.Urgency).toBe(web);
    },
  );

  it('turns expires_at into the TTL and apns-expiration, and the collapse key into each platform’s', async () => {
    const { fcm, sender } = await setUp();
    const expiresAt = new Date(T0 + 3600_000 + 400).toISOString();
    await sender.send(target(), content({ expires_at: expiresAt, collapse_key: 'thread-7', badge: 3 }));
    const message = lastMessage(fcm);
    expect(message.android).toEqual({ priority: 'NORMAL', ttl: '3600s', collapse_key: 'thread-7' });
    expect(message.apns.headers).toMatchObject({
      'apns-expiration': String(Math.floor((T0 + 3600_000 + 400) / 1000)),
      'apns-collapse-id': 'thread-7',
    });
    expect(message.apns.payload).toEqual({ aps: { badge: 3 } });
    expect(message.webpush.headers).toEqual({ Urgency: 'normal', TTL: '3600', Topic: 'thread-7' });
  });

  it('caps the TTL at four weeks, and sends nothing once expires_at has passed or when it is no time', async () => {
    const { fcm, sender } = await setUp();
    await sender.send(target(), content({ expires_at: new Date(T0 + 90 * 86400_000).toISOString() }));
    expect(lastMessage(fcm).android.ttl).toBe('2419200s');
    const late = await sender.send(target(), content({ expires_at: new Date(T0 - 1000).toISOString() }));
    expect(late).toMatchObject({ kind: 'rejected', reason: expect.stringContaining('expired') });
    expect(await sender.send(target(), content({ expires_at: 'tomorrow' }))).toEqual({
      kind: 'rejected',
      reason: 'expires_at "tomorrow" is no time',
    });
    expect(fcm.received()).toHaveLength(1);
  });

  it('digests a collapse key that is no valid Web Push Topic or too long an apns-collapse-id', async () => {
    const { fcm, sender } = await setUp();
    const key = `conversation:${'x'.repeat(80)}`;
    await sender.send(target(), content({ collapse_key: key }));
    const message = lastMessage(fcm);
    expect(message.android.collapse_key).toBe(key);
    expect(message.webpush.headers.Topic).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(Buffer.byteLength(message.apns.headers['apns-collapse-id'] ?? '')).toBeLessThanOrEqual(64);
    // The same key gives the same digest: pushes still replace each other.
    await sender.send(target(), content({ collapse_key: key }));
    expect(lastMessage(fcm).webpush.headers.Topic).toBe(message.webpush.headers.Topic);
  });

  it('sends a silent push data-only, as an iOS background push', async () => {
    const { fcm, sender } = await setUp();
    await sender.send(target(), content({ silent: true, priority: 'high', badge: 5 }));
    const message = lastMessage(fcm);
    expect(message.notification).toBeUndefined();
    expect(message.data.post).toBe('42');
    expect(message.android.priority).toBe('HIGH');
    expect(message.apns).toEqual({
      headers: { 'apns-push-type': 'background', 'apns-priority': '5' },
      payload: { aps: { 'content-available': 1 } },
    });
  });

  it('refuses an empty data key, or one FCM reserves, without sending it (FCM would answer 400)', async () => {
    const { fcm, sender } = await setUp();
    for (const key of ['from', 'google.sent_time', 'gcm_x', 'message_type', '']) {
      expect(await sender.send(target(), content({ data: { [key]: 'x' } }))).toEqual({
        kind: 'rejected',
        reason: `data key "${key}" is refused by FCM`,
      });
    }
    expect(fcm.answers()).toEqual([]);
  });
});

describe('FCM sender: payload size', () => {
  it('drops data first, keeping Notify’s keys, when the message is over 4096 bytes', async () => {
    const { fcm, sender } = await setUp();
    const outcome = await sender.send(target(), content({ data: { blob: 'x'.repeat(5000) } }));
    expect(outcome.kind).toBe('delivered');
    const message = lastMessage(fcm);
    expect(message.data).toEqual({
      notification_id: 'n-1',
      event_type: 'comment.created',
      push_id: PUSH_ID,
    });
    expect(message.notification?.body).toBe('Alice replied');
  });

  it('then cuts the body, with an ellipsis, to the longest that fits', async () => {
    const { fcm, sender } = await setUp();
    const body = 'é'.repeat(5000);
    const outcome = await sender.send(target(), content({ body, data: { a: 'b' }, collapse_key: 'c' }));
    expect(outcome.kind).toBe('delivered');
    const sent = lastMessage(fcm).notification?.body ?? '';
    expect(sent.endsWith('…')).toBe(true);
    expect(body.startsWith(sent.slice(0, -1))).toBe(true);
    expect(sent.length).toBeGreaterThan(1000);
    expect(fcm.answers().map((answer) => answer.messageBytes)).toEqual([expect.any(Number)]);
    // Within a few bytes of the limit: one more character would not have fitted.
    expect(fcm.answers()[0]?.messageBytes).toBeGreaterThan(4096 - 4);
  });

  it('never sends a message over the limit, whatever the content (the stand-in counts as FCM does)', async () => {
    const { fcm, sender } = await setUp();
    const cases: Partial<PushContent>[] = [
      { data: { big: '€'.repeat(3000) } },
      { body: '😀'.repeat(2000), data: { k: 'v'.repeat(2000) } },
      { title: 't'.repeat(5000), body: 'b'.repeat(5000) },
      { title: '"\\'.repeat(1500), body: '\u0001'.repeat(1500), collapse_key: 'k'.repeat(300) },
    ];
    for (const overrides of cases)
      expect((await sender.send(target(), content(overrides))).kind).toBe('delivered');
    expect(fcm.answers()).toHaveLength(cases.length);
    for (const answer of fcm.answers()) {
      expect(answer.status).toBe(200);
      expect(answer.messageBytes).toBeLessThanOrEqual(4096);
    }
    // A silent push is its data: too big to send whole, it is refused, not sent empty.
    const silent = await sender.send(target(), content({ silent: true, data: { blob: 'y'.repeat(9000) } }));
    expect(silent.kind).toBe('rejected');
    expect(fcm.answers()).toHaveLength(cases.length);
  });
});

describe('FCM sender: access tokens', () => {
  it('asks for one access token for many sends, also across senders of the same account', async () => {
    const { fcm, sender, now } = await setUp();
    for (let index = 0; index < 5; index += 1) await sender.send(target(), content());
    const second = createFcmSender(fcm.credentials, { url: fcm.url, now });
    await second.send(target(), content());
    expect(fcm.tokensIssued()).toBe(1);
    expect(new Set(fcm.received().map((push) => push.headers.authorization)).size).toBe(1);
  });

  it('has concurrent first sends share one token request', async () => {
    const { fcm, sender } = await setUp();
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) => sender.send(target(`token-${index}`), content())),
    );
    expect(outcomes.every((outcome) => outcome.kind === 'delivered')).toBe(true);
    expect(fcm.tokensIssued()).toBe(1);
  });

  it('asks for a new token shortly before the old one expires, not after', async () => {
    const { fcm, sender, clock } = await setUp({ accessTokenLifetimeSecs: 3599 });
    await sender.send(target(), content());
    clock.now = T0 + (3599 - 301) * 1000;
    await sender.send(target(), content());
    expect(fcm.tokensIssued()).toBe(1);
    clock.now = T0 + (3599 - 299) * 1000;
    await sender.send(target(), content());
    expect(fcm.tokensIssued()).toBe(2);
    // Every send was accepted: the sender never used an expired token.
    expect(fcm.answers().map((answer) => answer.status)).toEqual([200, 200, 200]);
  });

  it('refreshes a short-lived token at half its life', async () => {
    const { fcm, sender, clock } = await setUp({ accessTokenLifetimeSecs: 60 });
    await sender.send(target(), content());
    clock.now = T0 + 29_000;
    await sender.send(target(), content());
    expect(fcm.tokensIssued()).toBe(1);
    clock.now = T0 + 31_000;
    await sender.send(target(), content());
    expect(fcm.tokensIssued()).toBe(2);
  });

  it('on a 401 drops the cached token and sends again with a new one', async () => {
    const { fcm, sender } = await setUp();
    await sender.send(target(), content());
    fcm.expireAccessTokens();
    expect((await sender.send(target(), content())).kind).toBe('delivered');
    expect(fcm.tokensIssued()).toBe(2);
    expect(fcm.answers().map((answer) => answer.status)).toEqual([200, 401, 200]);
  });

  it('classifies a second 401 in a row as credentials, after one new token', async () => {
    const { fcm, sender } = await setUp();
    fcm.failNext(2, { status: 401, message: 'Request had invalid authentication credentials.' });
    expect(await sender.send(target(), content())).toMatchObject({ kind: 'credentials' });
    expect(fcm.tokensIssued()).toBe(2);
    expect(fcm.received()).toEqual([]);
  });

  it('classifies THIRD_PARTY_AUTH_ERROR as credentials at once (a new access token cannot help)', async () => {
    const { fcm, sender } = await setUp();
    fcm.failNext(1, { status: 401, errorCode: 'THIRD_PARTY_AUTH_ERROR', message: 'Auth error from APNS' });
    expect(await sender.send(target(), content())).toEqual({
      kind: 'credentials',
      reason: '401 THIRD_PARTY_AUTH_ERROR Auth error from APNS',
    });
    expect(fcm.tokensIssued()).toBe(1);
  });

  it('classifies a refused grant as credentials: the assertion signed by another key', async () => {
    const { fcm } = await setUp();
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = {
      ...fcm.credentials,
      private_key: other.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const outcome = await createFcmSender(forged, { url: fcm.url }).send(target(), content());
    expect(outcome).toEqual({
      kind: 'credentials',
      reason: 'token endpoint: 400 invalid_grant: Invalid JWT Signature.',
    });
    expect(fcm.tokensIssued()).toBe(0);
  });

  it('classifies a grant from another account as credentials', async () => {
    const { fcm } = await setUp();
    const outcome = await createFcmSender(
      { ...fcm.credentials, client_email: 'someone@else.iam.gserviceaccount.com' },
      { url: fcm.url },
    ).send(target(), content());
    expect(outcome).toMatchObject({ kind: 'credentials', reason: expect.stringContaining('invalid_grant') });
  });

  it('classifies a token endpoint’s 503 as retry with its Retry-After, and caches no failure', async () => {
    const { fcm, sender } = await setUp();
    fcm.failNext(1, { status: 503, retryAfter: 9 }, 'token');
    expect(await sender.send(target(), content())).toEqual({
      kind: 'retry',
      reason: 'token endpoint: 503 temporarily_unavailable',
      retry_after_secs: 9,
    });
    expect(fcm.answers()).toEqual([]);
    expect((await sender.send(target(), content())).kind).toBe('delivered');
    expect(fcm.tokensIssued()).toBe(1);
  });

  it('has concurrent sends share a refused grant, then try again on the next send', async () => {
    const { fcm, sender } = await setUp();
    fcm.failNext(1, { status: 400, errorCode: 'invalid_grant', message: 'Invalid JWT Signature.' }, 'token');
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => sender.send(target(), content())));
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(Array(5).fill('credentials'));
    expect((await sender.send(target(), content())).kind).toBe('delivered');
  });

  it('classifies an unreachable token endpoint as retry', async () => {
    const { fcm } = await setUp();
    const { credentials, url } = fcm;
    await fcm.close();
    const outcome = await createFcmSender(credentials, { url }).send(target(), content());
    expect(outcome).toMatchObject({
      kind: 'retry',
      reason: expect.stringContaining('token endpoint: network'),
    });
  });
});

describe('FCM sender: answer classes', () => {
  it('gone on UNREGISTERED for a token marked dead', async () => {
    const { fcm, sender } = await setUp();
    fcm.markDead('fcm-dead');
    expect(await sender.send(target('fcm-dead'), content())).toEqual({
      kind: 'gone',
      reason: '404 UNREGISTERED Requested entity was not found.',
    });
    expect(fcm.received()).toEqual([]);
  });

  it('gone on INVALID_ARGUMENT about the registration token', async () => {
    const { sender } = await setUp();
    expect(await sender.send(target('not a token!'), content())).toEqual({
      kind: 'gone',
      reason: '400 INVALID_ARGUMENT The registration token is not a valid FCM registration token',
    });
  });

  it('gone on INVALID_ARGUMENT naming message.token, and on a 400 UNREGISTERED', async () => {
    const { fcm, sender } = await setUp();
    fcm.failNext(1, { status: 400, field: 'message.token', message: 'Invalid registration' });
    expect((await sender.send(target(), content())).kind).toBe('gone');
    fcm.failNext(1, { status: 400, errorCode: 'UNREGISTERED', message: 'Unregistered' });
    expect((await sender.send(target(), content())).kind).toBe('gone');
  });

  it('rejected on any other INVALID_ARGUMENT', async () => {
    const { fcm, sender } = await setUp();
    fcm.failNext(1, {
      status: 400,
      errorCode: 'INVALID_ARGUMENT',
      field: 'message.android.ttl',
      message: 'Invalid ttl',
    });
    expect(await sender.send(target(), content())).toEqual({
      kind: 'rejected',
      reason: '400 INVALID_ARGUMENT Invalid ttl',
    });
  });

  it.each([
    [429, 'QUOTA_EXCEEDED', 17],
    [503, 'UNAVAILABLE', 30],
    [500, 'INTERNAL', undefined],
    [503, undefined, undefined],
  ])('retry on %s %s, with Retry-After %s surfaced', async (status, errorCode, retryAfter) => {
    const { fcm, sender } = await setUp();
    fcm.failNext(1, {
      status,
      ...(errorCode ? { errorCode } : {}),
      ...(retryAfter === undefined ? {} : { retryAfter }),
    });
    const outcome = await sender.send(target(), content());
    expect(outcome.kind).toBe('retry');
    expect(outcome).toEqual(
      retryAfter === undefined
        ? { kind: 'retry', reason: expect.stringContaining(String(status)) }
        : { kind: 'retry', reason: expect.stringContaining(String(status)), retry_after_secs: retryAfter },
    );
    // The next send, after the fault, is delivered.
    expect((await sender.send(target(), content())).kind).toBe('delivered');
  });

  it('retry when FCM cannot be reached', async () => {
    const { fcm, now } = await setUp();
    const sender = createFcmSender(fcm.credentials, { url: 'http://127.0.0.1:9', now });
    expect(await sender.send(target(), content())).toMatchObject({
      kind: 'retry',
      reason: expect.stringContaining('messages:send: network'),
    });
  });

  it('credentials on 403 SENDER_ID_MISMATCH and PERMISSION_DENIED (no device is pruned for them)', async () => {
    const { fcm, sender, now } = await setUp();
    fcm.failNext(1, { status: 403, errorCode: 'SENDER_ID_MISMATCH', message: 'SenderId mismatch' });
    expect(await sender.send(target(), content())).toEqual({
      kind: 'credentials',
      reason: '403 SENDER_ID_MISMATCH SenderId mismatch',
    });
    const otherProject = createFcmSender(
      { ...fcm.credentials, project_id: 'someone-else' },
      { url: fcm.url, now },
    );
    expect(await otherProject.send(target(), content())).toMatchObject({
      kind: 'credentials',
      reason: expect.stringContaining('403 PERMISSION_DENIED'),
    });
  });

  it('credentials on a 404 that is not UNREGISTERED (a wrong FCM URL must not prune devices)', async () => {
    const { fcm, now } = await setUp();
    const sender = createFcmSender(fcm.credentials, { url: `${fcm.url}/elsewhere`, now });
    expect(await sender.send(target(), content())).toMatchObject({ kind: 'credentials' });
  });
});

describe('FCM credentials', () => {
  let credentials: FcmServiceAccount;
  beforeAll(async () => {
    credentials = (await setUp()).fcm.credentials;
  });
  const pem = (type: 'rsa' | 'ec', format: 'pkcs1' | 'pkcs8') =>
    (type === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' })
    ).privateKey
      .export({ type: format, format: 'pem' })
      .toString();

  it('accepts the service-account JSON as text or object, ignoring fields it does not use', () => {
    const { client_id: _, auth_uri: __, ...used } = credentials;
    expect(parseFcmCredentials(JSON.stringify(credentials))).toEqual(used);
    expect(parseFcmCredentials(credentials)).toEqual(used);
  });

  it.each([
    ['text that is not JSON', '{"type": "service_account",', 'not JSON'],
    ['an array', [], 'expected the service-account JSON object'],
  ])('refuses %s', (_, bad, message) => {
    expect(() => parseFcmCredentials(bad)).toThrow(message);
  });

  it.each([
    ['another type', { type: 'authorized_user' }, '"type" must be "service_account"'],
    ['no project_id', { project_id: undefined }, '"project_id" must be a non-empty string'],
    ['a bad project_id', { project_id: 'a/b' }, '"project_id" is not a Firebase project id'],
    ['no client_email', { client_email: '' }, '"client_email" must be a non-empty string'],
    ['a bad client_email', { client_email: 'me' }, '"client_email" is not an email address'],
    ['no private_key_id', { private_key_id: 7 }, '"private_key_id" must be a non-empty string'],
    ['no private_key', { private_key: undefined }, '"private_key" must be a non-empty string'],
    ['a PKCS#1 key', { private_key: () => pem('rsa', 'pkcs1') }, '"private_key" must be a PKCS#8 PEM'],
    [
      'a broken PEM',
      { private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' },
      '"private_key" is not a readable PEM private key',
    ],
    ['an EC key', { private_key: () => pem('ec', 'pkcs8') }, '"private_key" must be an RSA key'],
    ['no token_uri', { token_uri: undefined }, '"token_uri" must be a non-empty string'],
    ['a token_uri that is no URL', { token_uri: 'oauth2' }, '"token_uri" is not a URL'],
    [
      'a plain-http token_uri off loopback',
      { token_uri: 'http://oauth2.googleapis.com/token' },
      '"token_uri" must be an https URL',
    ],
  ] as const)('refuses %s, naming the field', (_, change, message) => {
    const bad = Object.fromEntries(
      Object.entries({ ...credentials, ...change }).map(([key, value]) => [
        key,
        typeof value === 'function' ? value() : value,
      ]),
    );
    expect(() => parseFcmCredentials(bad)).toThrow(FcmCredentialsError);
    expect(() => parseFcmCredentials(bad)).toThrow(message);
    expect(() => createFcmSender(bad)).toThrow(message);
  });
});
