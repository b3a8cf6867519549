import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushContent, PushTarget } from '../../../lambdas/domain/push/provider';
import {
  createWebPushSender,
  DEFAULT_TTL_SECS,
  generateVapidCredentials,
  MAX_PLAINTEXT_BYTES,
  topicFor,
  type WebPushOptions,
} from '../../../lambdas/domain/push/webpush';
import { startWebPushStandIn, type WebPushStandIn } from '../../../local/push/webpush-stand-in';
import { listenOnLoopback, stopServer } from '../../support/loopback-server';
import { pushContent } from '../../support/push-content';

/**
 * The Web Push sender against the local push service over real HTTP: what arrives is decrypted by `http_ece` (code we
 * did not write), the service checks VAPID and the RFC 8030 headers as push services do, and every answer class ends
 * in the outcome the pipeline acts on.
 */
let standIn: WebPushStandIn;
const credentials = generateVapidCredentials('mailto:ops@example.com');
/** The stand-in is on loopback over http: allowed as in local mode, unless a test says otherwise. */
const sender = (options: WebPushOptions = {}, keys = credentials) =>
  createWebPushSender(keys, { allowLoopback: true, ...options });

const targetFor = (subscription: {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}): PushTarget => ({
  provider: 'webpush',
  token: subscription.endpoint,
  app_id: null,
  web_keys: subscription.keys,
  registered_at: new Date().toISOString(),
});

const subscribed = (key = credentials.public_key) => targetFor(standIn.subscribe(key));
const receivedFor = (target: PushTarget) => standIn.received().filter((push) => push.token === target.token);

beforeAll(async () => {
  standIn = await startWebPushStandIn();
});
afterAll(async () => {
  await standIn.close();
});

const RECEIVER_ID = '0196a3b2-7c00-7abc-8def-0123456789ab';

describe('a push', () => {
  it('is delivered, decrypted by http_ece to exactly what was sent, with the Location as provider id', async () => {
    const target = subscribed();
    const push = pushContent({
      collapse_key: 'post-42',
      badge: 3,
      receiver_id: RECEIVER_ID,
      url: 'https://app.example/posts/42',
      actions: [
        { id: 'open', label: 'Open', url: 'https://app.example/posts/42#reply' },
        { id: 'like', label: 'Like', url: null },
      ],
    });
    const outcome = await sender().send(target, push);
    expect(outcome).toEqual({ kind: 'delivered', provider_id: expect.stringMatching(`^${standIn.url}/m/`) });
    const [received, ...more] = receivedFor(target);
    expect(more).toEqual([]);
    expect(received).toMatchObject({ provider: 'webpush', token: target.token, push_id: push.push_id });
    expect(received?.payload).toEqual({
      notification_id: 'n-1',
      push_id: push.push_id,
      event_type: 'comment.created',
      title: 'New comment',
      body: 'Alice replied to your post',
      data: { post: 42, url: '/posts/42' },
      receiver_id: RECEIVER_ID,
      url: 'https://app.example/posts/42',
      // As the Notification API's showNotification takes them, with a link button's url.
      actions: [
        { action: 'open', title: 'Open', url: 'https://app.example/posts/42#reply' },
        { action: 'like', title: 'Like', url: null },
      ],
      priority: 'normal',
      silent: false,
      tag: 'post-42',
      badge: 3,
    });
    expect(received?.headers).toMatchObject({
      'content-encoding': 'aes128gcm',
      'content-type': 'application/octet-stream',
    });
  });

  it('carries a data-only (silent) push with neither tag nor badge', async () => {
    const target = subscribed();
    const push = pushContent({ title: '', body: '', silent: true, data: { sync: 'inbox' } });
    expect((await sender().send(target, push)).kind).toBe('delivered');
    expect(receivedFor(target)[0]?.payload).toEqual({
      notification_id: 'n-1',
      push_id: push.push_id,
      event_type: 'comment.created',
      title: '',
      body: '',
      data: { sync: 'inbox' },
      receiver_id: null,
      url: null,
      actions: [],
      priority: 'normal',
      silent: true,
    });
  });

  it('has TTL until expires_at, Urgency from the priority and Topic from the collapse key', async () => {
    const at = new Date();
    const clock = { now: () => at };
    const cases: [Partial<PushContent>, Record<string, string>][] = [
      [
        {
          priority: 'urgent',
          expires_at: new Date(at.getTime() + 3_600_500).toISOString(),
          collapse_key: 'order-42',
        },
        { ttl: '3600', urgency: 'high', topic: 'order-42' },
      ],
      [{ priority: 'high' }, { ttl: String(DEFAULT_TTL_SECS), urgency: 'high' }],
      [
        { priority: 'normal', collapse_key: 'Order #42 / shipping' },
        { urgency: 'normal', topic: topicFor('Order #42 / shipping') },
      ],
      [
        { priority: 'low', expires_at: new Date(at.getTime() + 90 * 24 * 3600 * 1000).toISOString() },
        { ttl: String(DEFAULT_TTL_SECS), urgency: 'low' },
      ],
    ];
    for (const [overrides, headers] of cases) {
      const target = subscribed();
      expect((await sender(clock).send(target, pushContent(overrides))).kind).toBe('delivered');
      const received = receivedFor(target)[0]?.headers ?? {};
      expect(received).toMatchObject(headers);
      if (!('topic' in headers)) expect(received).not.toHaveProperty('topic');
    }
    expect(DEFAULT_TTL_SECS).toBe(28 * 24 * 3600);
    expect(topicFor('Order #42 / shipping')).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it('is not sent once expires_at has passed', async () => {
    const target = subscribed();
    const outcome = await sender().send(
      target,
      pushContent({ expires_at: new Date(Date.now() - 1000).toISOString() }),
    );
    expect(outcome).toEqual({ kind: 'rejected', reason: 'expired before it was sent' });
    expect(receivedFor(target)).toEqual([]);
  });

  it('over the limit is shrunk the documented way (data dropped, body cut), never sent to earn a 413', async () => {
    const target = subscribed();
    const push = pushContent({ body: 'é'.repeat(5000), data: { blob: 'x'.repeat(10_000) } });
    expect((await sender().send(target, push)).kind).toBe('delivered');
    const payload = receivedFor(target)[0]?.payload as { body: string; data: unknown; title: string };
    expect(payload.data).toEqual({});
    expect(payload.title).toBe('New comment');
    expect(payload.body.endsWith('…')).toBe(true);
    expect(push.body.startsWith(payload.body.slice(0, -1))).toBe(true);
    // As long as fits: the decrypted JSON is within a few bytes (one cut character) of the plaintext limit.
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeLessThanOrEqual(MAX_PLAINTEXT_BYTES);
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeGreaterThan(MAX_PLAINTEXT_BYTES - 3);
  });

  it('keeps one VAPID token per push service until shortly before it expires', async () => {
    let now = new Date();
    const clock = { now: () => now };
    const keep = sender(clock);
    const target = subscribed();
    await keep.send(target, pushContent());
    now = new Date(now.getTime() + 10 * 3600 * 1000);
    await keep.send(target, pushContent());
    now = new Date(now.getTime() + 1.5 * 3600 * 1000);
    await keep.send(target, pushContent());
    const tokens = receivedFor(target).map((push) => push.headers.authorization);
    expect(tokens).toHaveLength(3);
    expect(tokens[1]).toBe(tokens[0]);
    expect(tokens[2]).not.toBe(tokens[0]);
    expect(tokens[0]).toMatch(
      new RegExp(`^vapid t=[\\w-]+\\.[\\w-]+\\.[\\w-]+, k=${credentials.public_key}$`),
    );
  });
  it('signs a token for each push service (aud is its origin), so each accepts its own', async () => {
    const second = await startWebPushStandIn();
    try {
      const both = sender();
      const targets = [subscribed(), targetFor(second.subscribe(credentials.public_key))];
      for (const target of targets) expect((await both.send(target, pushContent())).kind).toBe('delivered');
      const tokens = [receivedFor(targets[0] as PushTarget), second.received()].map(
        (pushes) => pushes[0]?.headers.authorization,
      );
      expect(tokens[0]).toMatch(/^vapid t=/);
      expect(tokens[1]).toMatch(/^vapid t=/);
      expect(tokens[1]).not.toBe(tokens[0]);
    } finally {
      await second.close();
    }
  });
});

describe('answers of the push service', () => {
  it('VAPID refused (a key the browser did not subscribe with) is credentials, and nothing is delivered', async () => {
    const target = subscribed();
    const other = sender({}, generateVapidCredentials('mailto:ops@example.com'));
    expect(await other.send(target, pushContent())).toEqual({
      kind: 'credentials',
      reason: 'push service refused the VAPID token (403)',
    });
    expect(receivedFor(target)).toEqual([]);
  });

  it('an expired VAPID token (a clock 13 hours behind) is credentials (401)', async () => {
    const target = subscribed();
    const behind = sender({ now: () => new Date(Date.now() - 13 * 3600 * 1000) });
    expect(await behind.send(target, pushContent())).toEqual({
      kind: 'credentials',
      reason: 'push service refused the VAPID token (401)',
    });
  });

  it('404 (unknown subscription) and 410 (unsubscribed) are gone', async () => {
    const unknown = { ...subscribed(), token: `${standIn.url}/wpush/never-subscribed` };
    expect(await sender().send(unknown, pushContent())).toEqual({
      kind: 'gone',
      reason: 'push service answered 404',
    });
    const target = subscribed();
    expect((await sender().send(target, pushContent())).kind).toBe('delivered');
    standIn.markDead(target.token);
    expect(await sender().send(target, pushContent())).toEqual({
      kind: 'gone',
      reason: 'push service answered 410',
    });
    expect(receivedFor(target)).toHaveLength(1);
  });

  it('429 and 5xx are retry, with Retry-After when given; the next try is delivered', async () => {
    const target = subscribed();
    standIn.failNext({ status: 429, retryAfter: '7' });
    standIn.failNext({ status: 503, retryAfter: new Date(Date.now() + 120_000).toUTCString() });
    standIn.failNext({ status: 500 });
    const send = () => sender().send(target, pushContent());
    expect(await send()).toEqual({ kind: 'retry', reason: 'push service answered 429', retry_after_secs: 7 });
    const dated = await send();
    expect(dated).toMatchObject({ kind: 'retry', reason: 'push service answered 503' });
    expect(dated.kind === 'retry' && dated.retry_after_secs).toBeGreaterThan(100);
    expect(await send()).toEqual({ kind: 'retry', reason: 'push service answered 500' });
    expect(await send()).toMatchObject({ kind: 'delivered' });
    expect(receivedFor(target)).toHaveLength(1);
  });

  it('413 and other 4xx are rejected; 401 is credentials', async () => {
    const target = subscribed();
    for (const [status, kind] of [
      [413, 'rejected'],
      [400, 'rejected'],
      [401, 'credentials'],
    ] as const) {
      standIn.failNext({ status });
      expect(await sender().send(target, pushContent())).toEqual({
        kind,
        reason:
          kind === 'credentials'
            ? `push service refused the VAPID token (${status})`
            : `push service answered ${status}`,
      });
    }
  });

  it('no answer (nothing listening) is retry', async () => {
    const server = createServer();
    const origin = await listenOnLoopback(server);
    await stopServer(server);
    const target = { ...subscribed(), token: `${origin}/wpush/abc` };
    expect(await sender({ timeoutMs: 5000 }).send(target, pushContent())).toMatchObject({
      kind: 'retry',
      reason: 'network: ECONNREFUSED',
    });
  });
});

describe('the stand-in', () => {
  it('answers 413 to a body over 4,096 bytes and 400 without TTL, as push services do', async () => {
    const target = subscribed();
    const post = (headers: Record<string, string>, size: number) =>
      fetch(target.token, { method: 'POST', headers, body: Buffer.alloc(size) });
    expect((await post({}, 10)).status).toBe(401);
    // The checks after VAPID: a real token from a send that the stand-in answered 201.
    expect((await sender().send(target, pushContent())).kind).toBe('delivered');
    const authorization = receivedFor(target)[0]?.headers.authorization ?? '';
    const base = { authorization, 'content-encoding': 'aes128gcm' };
    expect((await post({ ...base, ttl: '60' }, 4097)).status).toBe(413);
    expect((await post(base, 100)).status).toBe(400);
    expect((await post({ ...base, ttl: '60', urgency: 'asap' }, 100)).status).toBe(400);
    expect((await post({ ...base, ttl: '60', topic: 'a'.repeat(33) }, 100)).status).toBe(400);
    expect((await post({ ...base, ttl: '60', 'content-encoding': 'aesgcm' }, 100)).status).toBe(415);
    expect((await post({ ...base, ttl: '60' }, 100)).status).toBe(400); // does not decrypt
    expect(receivedFor(target)).toHaveLength(1);
  });
  it('hands out subscriptions over HTTP too (POST /subscriptions), for a page or another process', async () => {
    const answer = await fetch(`${standIn.url}/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:1' },
      body: JSON.stringify({ applicationServerKey: credentials.public_key }),
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    const subscription = (await answer.json()) as {
      endpoint: string;
      keys: { p256dh: string; auth: string };
    };
    expect(subscription.endpoint.startsWith(`${standIn.url}/wpush/`)).toBe(true);
    expect((await sender().send(targetFor(subscription), pushContent())).kind).toBe('delivered');
    const refused = await fetch(`${standIn.url}/subscriptions`, {
      method: 'POST',
      body: JSON.stringify({ applicationServerKey: 'not a key' }),
    });
    expect(refused.status).toBe(400);
  });
});

describe('the endpoint, a URL the user supplied', () => {
  it.each([
    [
      'https://169.254.169.254/latest/meta-data',
      /169\.254\.169\.254 is a private, link-local, metadata or reserved address/,
    ],
    ['https://10.0.0.7/wpush/x', /10\.0\.0\.7 is a private/],
    ['https://[fd00:ec2::254]/wpush/x', /fd00:ec2::254 is a private/],
    ['http://push.example.com/wpush/x', /must be an https:\/\/ URL/],
    ['https://user:pw@push.example.com/x', /must not carry credentials/],
  ])('%s is refused before any connection: rejected', async (endpoint, reason) => {
    const outcome = await sender({ allowLoopback: false }).send(
      { ...subscribed(), token: endpoint },
      pushContent(),
    );
    expect(outcome).toEqual({ kind: 'rejected', reason: expect.stringMatching(reason) });
  });

  it('on a private or metadata address is refused in local mode too', async () => {
    for (const endpoint of ['http://169.254.169.254/latest/meta-data', 'http://192.168.1.1/wpush/x']) {
      const outcome = await sender().send({ ...subscribed(), token: endpoint }, pushContent());
      expect(outcome).toEqual({
        kind: 'rejected',
        reason: expect.stringMatching(/is a private, link-local/),
      });
    }
  });

  it('on loopback is refused outside local mode, the default without the webhook setting: the stand-in gets nothing', async () => {
    expect(process.env.NOTIFY_WEBHOOK_ALLOW_LOOPBACK).toBeUndefined();
    const target = subscribed();
    for (const production of [sender({ allowLoopback: false }), createWebPushSender(credentials)]) {
      expect(await production.send(target, pushContent())).toEqual({
        kind: 'rejected',
        reason: expect.stringMatching(/^endpoint refused: (plain http|must be an https)/),
      });
    }
    expect(receivedFor(target)).toEqual([]);
  });

  it('whose host does not resolve is retry (DNS may be back), not a verdict', async () => {
    const outcome = await sender().send(
      { ...subscribed(), token: 'https://push.invalid/wpush/x' },
      pushContent(),
    );
    expect(outcome).toEqual({
      kind: 'retry',
      reason: 'endpoint refused: host push.invalid does not resolve',
    });
  });

  it('with keys that are not a subscription’s is rejected', async () => {
    const target = subscribed();
    const onCurve = target.web_keys?.p256dh as string;
    const notOnCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url');
    for (const [web_keys, reason] of [
      [undefined, /has no keys/],
      [{ p256dh: 'abc', auth: target.web_keys?.auth as string }, /p256dh is not a 65-byte/],
      [{ p256dh: notOnCurve, auth: target.web_keys?.auth as string }, /not a point on P-256/],
      [{ p256dh: onCurve, auth: 'AAAA' }, /auth secret is not 16 bytes/],
    ] as const) {
      const outcome = await sender().send({ ...target, web_keys }, pushContent());
      expect(outcome.kind === 'rejected' && outcome.reason).toMatch(reason);
    }
    expect(receivedFor(target)).toEqual([]);
  });
});

// Each test starts tsx in a child process: slow on a loaded machine.
describe('npm run vapid-keys', { timeout: 60_000 }, () => {
  it('prints credentials the sender takes and a push service accepts', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'bin/vapid-keys.ts', '--subject', 'mailto:ops@example.com'],
      { cwd: join(import.meta.dirname, '../../..') },
    );
    const printed = JSON.parse(stdout);
    expect(Object.keys(printed).sort()).toEqual(['private_key', 'public_key', 'subject']);
    expect(printed.subject).toBe('mailto:ops@example.com');
    const target = subscribed(printed.public_key);
    expect((await sender({}, printed).send(target, pushContent())).kind).toBe('delivered');
    expect(receivedFor(target)).toHaveLength(1);
  });

  it('refuses a subject that is no mailto: or https: URL', async () => {
    const failure = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'bin/vapid-keys.ts', '--subject', 'ops@example.com'],
      { cwd: join(import.meta.dirname, '../../..') },
    ).catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/subject must be a mailto: address/),
    });
  });
});
