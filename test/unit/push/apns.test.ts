import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { connect } from 'node:http2';
import { promisify } from 'node:util';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApnsCredentials,
  ApnsCredentialsError,
  type ApnsSenderOptions,
  createApnsSender,
  parseApnsCredentials,
} from '../../../lambdas/domain/push/apns';
import type { PushContent, PushTarget } from '../../../lambdas/domain/push/provider';
import { repoRoot } from '../../../lib/paths';
import { type ApnsStandIn, startApnsStandIn } from '../../../local/push/apns-stand-in';
import { pushContent } from '../../support/push-content';

/*
 * The APNs sender against the local APNs over real HTTP/2 and TLS (the stand-in's generated CA is the only one
 * trusted), and the stand-in's own checks with a bare HTTP/2 client.
 */

const TOKEN = 'a'.repeat(64);
const MINUTE = 60_000;

/** A short alert with a little data (the shared fixture gives each push its own id). */
const content = (overrides: Partial<PushContent> = {}): PushContent =>
  pushContent({ body: 'Alice replied', data: { post: 42 }, ...overrides });

const target = (overrides: Partial<PushTarget> = {}): PushTarget => ({
  provider: 'apns',
  token: TOKEN,
  app_id: null,
  apns_environment: 'production',
  registered_at: '2026-01-01T00:00:00.000Z',
  ...overrides,
});

/** A clock the test moves; starts at the real time so the stand-in's real clock agrees with it. */
const movableClock = () => {
  let now = Date.now();
  const clock = () => now;
  return Object.assign(clock, { advance: (ms: number) => (now += ms), set: (ms: number) => (now = ms) });
};

const standIns: ApnsStandIn[] = [];
const started = async (...args: Parameters<typeof startApnsStandIn>) => {
  const standIn = await startApnsStandIn(...args);
  standIns.push(standIn);
  return standIn;
};
afterAll(async () => {
  await Promise.all(standIns.map((standIn) => standIn.close()));
});

const senderFor = (
  standIn: ApnsStandIn,
  options: ApnsSenderOptions = {},
  credentials = standIn.credentials,
) => createApnsSender(credentials, { url: standIn.url, ca: standIn.ca, ...options });

const last = (standIn: ApnsStandIn) => {
  const push = standIn.received().at(-1);
  if (!push) throw new Error('the stand-in received nothing');
  return push;
};

describe('the APNs sender, mapping', () => {
  let standIn: ApnsStandIn;
  beforeAll(async () => {
    standIn = await started();
  });

  it('sends an alert with every header mapped and records the apns-id APNs answers', async () => {
    const push = content({
      priority: 'urgent',
      expires_at: '2099-01-01T00:00:00.500Z',
      collapse_key: 'thread-7',
      badge: 3,
      receiver_id: '0196a3b2-7c00-7abc-8def-0123456789ab',
      url: 'myapp://threads/7',
      actions: [
        { id: 'approve', label: 'Approve', url: null },
        { id: 'view', label: 'View', url: 'https://app.example/threads/7' },
      ],
    });
    const outcome = await senderFor(standIn).send(target(), push);
    expect(outcome).toEqual({ kind: 'delivered', provider_id: push.push_id });
    const received = last(standIn);
    expect(received.token).toBe(TOKEN);
    expect(received.push_id).toBe(push.push_id);
    expect(received.headers).toMatchObject({
      'apns-topic': standIn.credentials.bundle_id,
      'apns-push-type': 'alert',
      'apns-priority': '10',
      'apns-expiration': String(Date.parse('2099-01-01T00:00:00Z') / 1000),
      'apns-collapse-id': 'thread-7',
      'apns-id': push.push_id,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(JSON.stringify(received.payload))),
    });
    expect(received.payload).toEqual({
      aps: {
        alert: { title: 'New comment', body: 'Alice replied' },
        badge: 3,
        sound: 'default',
        // The UNNotificationCategory the app registers for these buttons.
        category: 'approve.view',
      },
      notification_id: 'n-1',
      push_id: push.push_id,
      event_type: 'comment.created',
      receiver_id: '0196a3b2-7c00-7abc-8def-0123456789ab',
      url: 'myapp://threads/7',
      actions: [
        { id: 'approve', label: 'Approve', url: null },
        { id: 'view', label: 'View', url: 'https://app.example/threads/7' },
      ],
      data: { post: 42 },
    });
  });

  it('maps normal and low priority to 5 and leaves out what the content does not set', async () => {
    const sender = senderFor(standIn);
    await sender.send(target(), content({ priority: 'normal', badge: 0 }));
    const normal = last(standIn);
    expect(normal.headers['apns-priority']).toBe('5');
    expect(normal.headers).not.toHaveProperty('apns-expiration');
    expect(normal.headers).not.toHaveProperty('apns-collapse-id');
    expect(normal.payload).toMatchObject({ aps: { badge: 0, sound: 'default' } });

    await sender.send(target(), content({ priority: 'low' }));
    const low = last(standIn);
    expect(low.headers['apns-priority']).toBe('5');
    expect(low.payload).toMatchObject({ aps: { alert: { title: 'New comment', body: 'Alice replied' } } });
    expect((low.payload as { aps: object }).aps).not.toHaveProperty('badge');
    expect((low.payload as { aps: object }).aps).not.toHaveProperty('sound');
  });

  it('sends a silent push as a background push of priority 5 carrying the data alone', async () => {
    const push = content({ silent: true, priority: 'urgent', badge: 9, data: { sync: 'inbox' } });
    expect(await senderFor(standIn).send(target(), push)).toEqual({
      kind: 'delivered',
      provider_id: push.push_id,
    });
    const received = last(standIn);
    expect(received.headers['apns-push-type']).toBe('background');
    expect(received.headers['apns-priority']).toBe('5');
    expect(received.payload).toEqual({
      aps: { 'content-available': 1 },
      notification_id: 'n-1',
      push_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      event_type: 'comment.created',
      receiver_id: null,
      data: { sync: 'inbox' },
    });
  });

  it('sends a collapse key longer than 64 bytes as its SHA-256, which APNs takes', async () => {
    const key = `thread-${'é'.repeat(40)}`;
    const outcome = await senderFor(standIn).send(target(), content({ collapse_key: key }));
    expect(outcome.kind).toBe('delivered');
    expect(last(standIn).headers['apns-collapse-id']).toBe(createHash('sha256').update(key).digest('hex'));
  });

  it('shrinks a payload over 4 KB: data first, then the body, never sending one APNs would refuse', async () => {
    const sender = senderFor(standIn);
    const bigData = content({ data: { blob: 'x'.repeat(5000) } });
    expect((await sender.send(target(), bigData)).kind).toBe('delivered');
    expect(last(standIn).payload).toMatchObject({
      aps: { alert: { title: 'New comment', body: 'Alice replied' } },
      data: {},
    });

    const longBody = content({ body: 'ü'.repeat(4000), data: { kept: false } });
    expect((await sender.send(target(), longBody)).kind).toBe('delivered');
    const body = (last(standIn).payload as { aps: { alert: { body: string } } }).aps.alert.body;
    expect(body.endsWith('…')).toBe(true);
    expect(body.length).toBeGreaterThan(1000);
    expect(Buffer.byteLength(JSON.stringify(last(standIn).payload))).toBeLessThanOrEqual(4096);
  });

  it('rejects, without sending, a push that cannot fit even cut, or whose expiry has passed', async () => {
    const before = standIn.received().length;
    const sender = senderFor(standIn);
    expect(await sender.send(target(), content({ event_type: 'e'.repeat(5000) }))).toEqual({
      kind: 'rejected',
      reason: 'PayloadTooLarge: even an empty title and body do not fit',
    });
    expect(await sender.send(target(), content({ expires_at: '2001-01-01T00:00:00Z' }))).toEqual({
      kind: 'rejected',
      reason: 'expired before it was sent',
    });
    expect((await sender.send(target(), content({ expires_at: 'soon' }))).kind).toBe('rejected');
    expect(standIn.received().length).toBe(before);
  });
});

describe('the APNs sender, connections and provider tokens', () => {
  it('reuses one HTTP/2 session for sequential and concurrent pushes, across senders of the same key', async () => {
    const standIn = await started();
    const first = senderFor(standIn);
    for (let index = 0; index < 3; index++) {
      expect((await first.send(target(), content())).kind).toBe('delivered');
    }
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => senderFor(standIn).send(target(), content())),
    );
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(Array(8).fill('delivered'));
    expect(standIn.received()).toHaveLength(11);
    expect(standIn.sessions()).toBe(1);
    // One provider token for all of them.
    expect(new Set(standIn.received().map((push) => push.headers.authorization)).size).toBe(1);
  });

  it('mints one provider token for pushes that start together on a new connection, and none is refused', async () => {
    // The stand-in, as APNs, takes one stream on a new connection until a valid provider token arrives, then
    // 100 at once: a burst larger than that waits for free streams.
    const standIn = await started();
    const sender = senderFor(standIn);
    const outcomes = await Promise.all(Array.from({ length: 150 }, () => sender.send(target(), content())));
    expect(outcomes.filter((outcome) => outcome.kind !== 'delivered')).toEqual([]);
    expect(standIn.received()).toHaveLength(150);
    expect(new Set(standIn.received().map((push) => push.headers.authorization)).size).toBe(1);
    expect(standIn.sessions()).toBe(1);
  });

  it('signs an ES256 provider token {alg, kid} / {iss, iat}, reused until 50 minutes, never refreshed before 20', async () => {
    const clock = movableClock();
    const standIn = await started({ now: clock });
    const sender = senderFor(standIn, { now: clock });
    const start = clock();
    const authorizationAt = async (minutes: number) => {
      clock.set(start + minutes * MINUTE);
      expect((await sender.send(target(), content())).kind).toBe('delivered');
      return last(standIn).headers.authorization ?? '';
    };
    const first = await authorizationAt(0);
    const jwt = first.replace(/^bearer /, '');
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', kid: standIn.credentials.key_id });
    expect(decodeJwt(jwt)).toEqual({ iss: standIn.credentials.team_id, iat: Math.floor(start / 1000) });
    expect(await authorizationAt(19)).toBe(first);
    expect(await authorizationAt(49)).toBe(first);
    const refreshed = await authorizationAt(51);
    expect(refreshed).not.toBe(first);
    expect(decodeJwt(refreshed.replace(/^bearer /, '')).iat).toBe(Math.floor((start + 51 * MINUTE) / 1000));
    expect(await authorizationAt(80)).toBe(refreshed);
  });

  it('leaves an idle session unreferenced: a process that sent a push ends by itself, the session still open', async () => {
    const standIn = await started();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/support/fixtures/apns-send-once.ts'],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          APNS_STAND_IN: JSON.stringify({
            url: standIn.url,
            ca: standIn.ca,
            credentials: standIn.credentials,
          }),
        },
        // A session that kept the event loop alive would hang the child: killed here, the test fails.
        timeout: 60_000,
      },
    );
    const { push_id, outcome } = JSON.parse(stdout);
    expect(outcome).toEqual({ kind: 'delivered', provider_id: push_id });
    expect(standIn.sessions()).toBe(1);
  });

  it('replaces a session idle for over 5 minutes (a frozen function’s connection is likely gone)', async () => {
    const clock = movableClock();
    const standIn = await started({ now: clock });
    const sender = senderFor(standIn, { now: clock });
    await sender.send(target(), content());
    clock.advance(4 * MINUTE);
    await sender.send(target(), content());
    expect(standIn.sessions()).toBe(1);
    clock.advance(6 * MINUTE);
    await sender.send(target(), content());
    expect(standIn.sessions()).toBe(2);
  });

  it('on ExpiredProviderToken refreshes a token older than 20 minutes once and sends again', async () => {
    const senderClock = movableClock();
    const apnsClock = movableClock();
    const standIn = await started({ now: apnsClock });
    const sender = senderFor(standIn, { now: senderClock });
    await sender.send(target(), content());
    const first = last(standIn).headers.authorization;
    // Our clock says 45 minutes (the token is reused); APNs's says the token is over an hour old.
    senderClock.advance(45 * MINUTE);
    apnsClock.advance(61 * MINUTE);
    const push = content();
    expect(await sender.send(target(), push)).toEqual({ kind: 'delivered', provider_id: push.push_id });
    const second = last(standIn).headers.authorization ?? '';
    expect(second).not.toBe(first);
    expect(decodeJwt(second.replace(/^bearer /, '')).iat).toBe(Math.floor(senderClock() / 1000));
    expect(standIn.received()).toHaveLength(2);
  });

  it('does not refresh a token younger than 20 minutes that APNs calls expired: credentials (our clock is off)', async () => {
    const senderClock = movableClock();
    senderClock.advance(-2 * 60 * MINUTE);
    const standIn = await started();
    const sender = senderFor(standIn, { now: senderClock });
    expect(await sender.send(target(), content())).toEqual({
      kind: 'credentials',
      reason: 'ExpiredProviderToken',
    });
    expect(standIn.received()).toHaveLength(0);
  });

  it('sends each device to its environment’s origin (production when the device says none)', async () => {
    const production = await started();
    const sandbox = await started({ credentials: production.credentials });
    const sender = createApnsSender(production.credentials, {
      url: production.url,
      sandboxUrl: sandbox.url,
      ca: production.ca,
    });
    // Each stand-in has its own CA: the sandbox one is trusted through its own sender below.
    const sandboxSender = createApnsSender(production.credentials, {
      url: production.url,
      sandboxUrl: sandbox.url,
      ca: sandbox.ca,
    });
    expect((await sender.send(target({ apns_environment: 'production' }), content())).kind).toBe('delivered');
    const { apns_environment: _, ...withoutEnvironment } = target();
    expect((await sender.send(withoutEnvironment, content())).kind).toBe('delivered');
    expect((await sandboxSender.send(target({ apns_environment: 'sandbox' }), content())).kind).toBe(
      'delivered',
    );
    expect(production.received()).toHaveLength(2);
    expect(sandbox.received()).toHaveLength(1);
  });

  it('trusts only the CA it is given: another CA’s certificate is no answer (retry), nothing delivered', async () => {
    const standIn = await started();
    const other = await started();
    const outcome = await senderFor(standIn, { ca: other.ca }).send(target(), content());
    expect(outcome.kind).toBe('retry');
    expect(standIn.received()).toHaveLength(0);
  });
});

describe('the APNs sender, answers', () => {
  let standIn: ApnsStandIn;
  beforeAll(async () => {
    standIn = await started();
  });

  it('410 Unregistered: gone, with the timestamp APNs gave as gone_at', async () => {
    const dead = 'b'.repeat(64);
    const markedBefore = Date.now();
    standIn.markDead(dead);
    const markedAfter = Date.now();
    const outcome = await senderFor(standIn).send(target({ token: dead }), content());
    expect(outcome.kind).toBe('gone');
    expect(outcome).toMatchObject({ reason: 'Unregistered' });
    const goneAt = Date.parse((outcome as { gone_at: string }).gone_at);
    expect(goneAt).toBeGreaterThanOrEqual(markedBefore);
    expect(goneAt).toBeLessThanOrEqual(markedAfter);
  });

  it('400 BadDeviceToken (a token of the other environment, or not one): rejected, the device kept', async () => {
    expect(await senderFor(standIn).send(target({ token: 'abc123' }), content())).toEqual({
      kind: 'rejected',
      reason: 'BadDeviceToken',
    });
  });

  it('a token that is no hex never goes into a request path: rejected as BadDeviceToken', async () => {
    const before = standIn.received().length;
    expect(await senderFor(standIn).send(target({ token: '../../x' }), content())).toEqual({
      kind: 'rejected',
      reason: 'BadDeviceToken',
    });
    expect(standIn.received().length).toBe(before);
  });

  it.each([
    [429, 'TooManyRequests', '7', { kind: 'retry', reason: 'TooManyRequests', retry_after_secs: 7 }],
    [429, 'TooManyProviderTokenUpdates', undefined, { kind: 'retry' }],
    [500, 'InternalServerError', undefined, { kind: 'retry' }],
    [503, 'ServiceUnavailable', '30', { kind: 'retry', reason: 'ServiceUnavailable', retry_after_secs: 30 }],
    [400, 'IdleTimeout', undefined, { kind: 'retry' }],
    [410, 'ExpiredToken', undefined, { kind: 'gone' }],
    [400, 'DeviceTokenNotForTopic', undefined, { kind: 'rejected' }],
    [400, 'BadExpirationDate', undefined, { kind: 'rejected' }],
    [413, 'PayloadTooLarge', undefined, { kind: 'rejected' }],
    [403, 'InvalidProviderToken', undefined, { kind: 'credentials' }],
    [403, 'Forbidden', undefined, { kind: 'credentials' }],
    [400, 'BadTopic', undefined, { kind: 'credentials' }],
  ] as const)('%i %s (Retry-After %s) → %o', async (status, reason, retry_after, expected) => {
    standIn.failNext({ status, reason, ...(retry_after ? { retry_after } : {}) });
    expect(await senderFor(standIn).send(target(), content())).toEqual({ reason, ...expected });
  });

  it('a refused provider token (the right key id, another key) is credentials; no push arrives', async () => {
    const before = standIn.received().length;
    const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const wrong = { ...standIn.credentials, private_key: otherKey };
    expect(await senderFor(standIn, {}, wrong).send(target(), content())).toEqual({
      kind: 'credentials',
      reason: 'InvalidProviderToken',
    });
    expect(standIn.received().length).toBe(before);
  });

  it('a bundle id the key may not push to is credentials (TopicDisallowed), not a dead device', async () => {
    const wrong = { ...standIn.credentials, bundle_id: 'com.example.other' };
    expect(await senderFor(standIn, {}, wrong).send(target(), content())).toEqual({
      kind: 'credentials',
      reason: 'TopicDisallowed',
    });
  });

  it('GOAWAY refusing a push: sent again at once over a new session; refused twice, retry', async () => {
    const own = await started();
    const sender = senderFor(own);
    expect((await sender.send(target(), content())).kind).toBe('delivered');
    own.failNext('goaway');
    const push = content();
    expect(await sender.send(target(), push)).toEqual({ kind: 'delivered', provider_id: push.push_id });
    expect(own.sessions()).toBe(2);
    own.failNext('goaway', 'goaway');
    expect(await sender.send(target(), content())).toMatchObject({
      kind: 'retry',
      reason: expect.stringMatching(/REFUSED_STREAM/),
    });
    expect(own.sessions()).toBe(3);
    expect((await sender.send(target(), content())).kind).toBe('delivered');
    expect(own.sessions()).toBe(4);
    expect(own.received()).toHaveLength(3);
  });

  it('no answer in time: retry, and the suspect session is not reused', async () => {
    const own = await started();
    own.failNext('silence');
    expect(await senderFor(own, { timeoutMs: 300 }).send(target(), content())).toMatchObject({
      kind: 'retry',
    });
    // The default deadline: a new TLS handshake on a loaded machine may take longer than 300 ms.
    expect((await senderFor(own).send(target(), content())).kind).toBe('delivered');
    expect(own.sessions()).toBe(2);
  });

  it('a connection refused is retry', async () => {
    const gone = await startApnsStandIn();
    await gone.close();
    const outcome = await senderFor(gone).send(target(), content());
    expect(outcome.kind).toBe('retry');
    expect((outcome as { reason: string }).reason).toMatch(/ECONNREFUSED/);
  });
});

describe('APNs credentials', () => {
  let valid: ApnsCredentials;
  beforeAll(async () => {
    valid = (await started()).credentials;
  });

  it('accepts the generated ones', () => {
    expect(parseApnsCredentials(valid)).toEqual(valid);
  });

  const pkcs8 = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
    key.export({ type: 'pkcs8', format: 'pem' }).toString();

  it.each([
    ['null', null, /must be a JSON object/],
    ['no key_id', { key_id: undefined }, /key_id is missing/],
    ['a short key_id', { key_id: 'abc' }, /key_id must be the 10-character Key ID/],
    ['a key_id with a space', { key_id: ' ABCDE12345' }, /key_id must be the 10-character Key ID/],
    ['an empty team_id', { team_id: '' }, /team_id is missing/],
    ['a short team_id', { team_id: 'TEAM' }, /team_id must be the 10-character Team ID/],
    ['a bundle_id without a dot', { bundle_id: 'app' }, /bundle_id must be the app’s bundle id/],
    [
      'a private_key that is no PEM',
      { private_key: 'not a key' },
      /private_key must be the \.p8 file’s PEM text/,
    ],
    [
      'an RSA private_key',
      { private_key: pkcs8(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) },
      /private_key must be a P-256 \(ES256\) key/,
    ],
    [
      'a P-384 private_key',
      { private_key: pkcs8(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey) },
      /private_key must be a P-256/,
    ],
  ])('refuses %s, naming the field', (_, change, message) => {
    const value = change === null ? null : { ...valid, ...change };
    expect(() => parseApnsCredentials(value)).toThrow(message);
    expect(() => parseApnsCredentials(value)).toThrow(ApnsCredentialsError);
    expect(() => createApnsSender(value)).toThrow(message);
  });
});

describe('the APNs stand-in checks requests as APNs does', () => {
  let standIn: ApnsStandIn;
  let jwt: string;
  beforeAll(async () => {
    standIn = await started();
    jwt = await providerToken(standIn.credentials, Math.floor(Date.now() / 1000));
  });

  const providerToken = async (credentials: ApnsCredentials, iat: number) => {
    const { createPrivateKey } = await import('node:crypto');
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: credentials.key_id })
      .setIssuer(credentials.team_id)
      .setIssuedAt(iat)
      .sign(createPrivateKey(credentials.private_key));
  };

  /** One raw request; the answer's status and body. */
  const raw = (headers: Record<string, string>, body: string | Buffer, path = `/3/device/${TOKEN}`) =>
    new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const session = connect(standIn.url, { ca: standIn.ca });
      session.on('error', reject);
      const stream = session.request({ ':method': 'POST', ':path': path, ...headers });
      let status = 0;
      const chunks: Buffer[] = [];
      stream.on('response', (answer) => {
        status = Number(answer[':status']);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        session.close();
        const text = Buffer.concat(chunks).toString();
        resolve({ status, body: text ? JSON.parse(text) : null });
      });
      stream.on('error', reject);
      stream.end(body);
    });

  const good = () => ({
    authorization: `bearer ${jwt}`,
    'apns-topic': standIn.credentials.bundle_id,
    'apns-push-type': 'alert',
    'apns-priority': '10',
    'apns-id': randomUUID(),
  });
  const payload = JSON.stringify({ aps: { alert: { title: 't', body: 'b' } } });

  it('accepts a well-formed push', async () => {
    expect(await raw(good(), payload)).toEqual({ status: 200, body: null });
  });

  it.each([
    ['no provider token', 403, 'MissingProviderToken', { authorization: undefined }],
    ['a token that is no JWT', 403, 'InvalidProviderToken', { authorization: 'bearer nonsense' }],
    ['another topic', 400, 'TopicDisallowed', { 'apns-topic': 'com.example.other' }],
    ['no topic', 400, 'MissingTopic', { 'apns-topic': undefined }],
    ['an unknown push type', 400, 'InvalidPushType', { 'apns-push-type': 'loud' }],
    ['priority 7', 400, 'BadPriority', { 'apns-priority': '7' }],
    ['a background push at priority 10', 400, 'BadPriority', { 'apns-push-type': 'background' }],
    ['an apns-id that is no UUID', 400, 'BadMessageId', { 'apns-id': 'push-1' }],
    ['a collapse id over 64 bytes', 400, 'BadCollapseId', { 'apns-collapse-id': 'c'.repeat(65) }],
    ['an expiration that is no epoch', 400, 'BadExpirationDate', { 'apns-expiration': 'tomorrow' }],
  ] as const)('%s: %i %s', async (_, status, reason, change) => {
    const headers: Record<string, string> = { ...good() };
    for (const [name, value] of Object.entries(change)) {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    expect(await raw(headers, payload)).toEqual({ status, body: { reason } });
  });

  it('refuses a provider token issued over an hour ago: 403 ExpiredProviderToken', async () => {
    const old = await providerToken(standIn.credentials, Math.floor(Date.now() / 1000) - 3700);
    expect(await raw({ ...good(), authorization: `bearer ${old}` }, payload)).toEqual({
      status: 403,
      body: { reason: 'ExpiredProviderToken' },
    });
  });

  it('refuses a token that is no hex of 64+ digits, and a payload over 4096 bytes', async () => {
    expect(await raw(good(), payload, '/3/device/abcd')).toEqual({
      status: 400,
      body: { reason: 'BadDeviceToken' },
    });
    const big = JSON.stringify({ aps: { alert: 'x'.repeat(4100) } });
    expect(await raw(good(), big)).toEqual({ status: 413, body: { reason: 'PayloadTooLarge' } });
    expect(await raw(good(), '')).toEqual({ status: 400, body: { reason: 'PayloadEmpty' } });
    expect(standIn.received()).toHaveLength(1);
  });

  it('takes a category identifier as a string only', async () => {
    const withCategory = (category: unknown) => JSON.stringify({ aps: { alert: 'x', category } });
    expect(await raw(good(), withCategory(['approve']))).toEqual({
      status: 400,
      body: { reason: 'BadPayload' },
    });
    expect(await raw(good(), withCategory('approve.view'))).toEqual({ status: 200, body: null });
  });
});
