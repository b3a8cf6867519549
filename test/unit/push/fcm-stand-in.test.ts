import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FcmStandIn, startFcmStandIn } from '../../../local/push/fcm-stand-in';

/** The local FCM speaks Google's wire protocol: its token endpoint and messages:send, over real HTTP. */

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const clock = { now: Date.parse('2026-03-01T12:00:00Z') };
let fcm: FcmStandIn;

beforeAll(async () => {
  fcm = await startFcmStandIn({ now: () => clock.now, accessTokenLifetimeSecs: 600 });
});
afterAll(() => fcm.close());

const nowSecs = () => Math.floor(clock.now / 1000);

/** A JWT bearer assertion as Google asks for it, with `claims` and `header` overriding the right ones. */
const assertion = (
  claims: JWTPayload = {},
  header: Record<string, unknown> = {},
  key: KeyObject = fcm.keys.privateKey,
) =>
  new SignJWT({
    iss: fcm.credentials.client_email,
    aud: fcm.credentials.token_uri,
    scope: SCOPE,
    iat: nowSecs(),
    exp: nowSecs() + 3600,
    ...claims,
  })
    .setProtectedHeader({ alg: 'RS256', kid: fcm.credentials.private_key_id, ...header })
    .sign(key);

const grant = async (form: Record<string, string>) => {
  const response = await fetch(fcm.credentials.token_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const jwtGrant = async (jwt: string) =>
  grant({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwt });

describe('FCM stand-in: OAuth token endpoint', () => {
  it('issues an expiring Bearer access token for a good assertion', async () => {
    const before = fcm.tokensIssued();
    const { status, body } = await jwtGrant(await assertion());
    expect(status).toBe(200);
    expect(body).toEqual({ access_token: expect.any(String), expires_in: 600, token_type: 'Bearer' });
    expect(fcm.tokensIssued()).toBe(before + 1);
  });

  it('refuses another grant type', async () => {
    expect(await grant({ grant_type: 'client_credentials' })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
  });

  it.each([
    ['no JWT at all', async () => 'not-a-jwt', 'invalid_request'],
    ['another kid', () => assertion({}, { kid: 'other' }), 'invalid_grant'],
    [
      'a signature by another key',
      () => assertion({}, {}, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey),
      'invalid_grant',
    ],
    ['another issuer', () => assertion({ iss: 'me@example.com' }), 'invalid_grant'],
    ['another audience', () => assertion({ aud: 'https://oauth2.googleapis.com/token' }), 'invalid_grant'],
    [
      'no messaging scope',
      () => assertion({ scope: 'https://www.googleapis.com/auth/cloud-platform' }),
      'invalid_scope',
    ],
    ['a lifetime over an hour', () => assertion({ exp: nowSecs() + 3601 }), 'invalid_grant'],
    [
      'an expired assertion',
      () => assertion({ iat: nowSecs() - 4000, exp: nowSecs() - 400 }),
      'invalid_grant',
    ],
    [
      'an assertion issued in the future',
      () => assertion({ iat: nowSecs() + 600, exp: nowSecs() + 1200 }),
      'invalid_grant',
    ],
  ])('refuses %s', async (_, make, error) => {
    const before = fcm.tokensIssued();
    const { status, body } = await jwtGrant(await make());
    expect(status).toBe(400);
    expect(body).toEqual({ error, error_description: expect.any(String) });
    expect(fcm.tokensIssued()).toBe(before);
  });
});

describe('FCM stand-in: messages:send', () => {
  let accessToken: string;
  beforeAll(async () => {
    accessToken = (await jwtGrant(await assertion())).body.access_token as string;
  });

  const send = async (
    message: unknown,
    {
      token = accessToken,
      project = fcm.credentials.project_id,
      raw,
    }: { token?: string; project?: string; raw?: string } = {},
  ) => {
    const response = await fetch(`${fcm.url}/v1/projects/${project}/messages:send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: raw ?? JSON.stringify({ message }),
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as {
        name?: string;
        error?: { code: number; status: string; message: string; details?: Record<string, unknown>[] };
      },
    };
  };

  it('accepts a v1 message (snake_case or lowerCamelCase), answers its name and records it', async () => {
    const message = {
      token: 'device-1',
      notification: { title: 'Hi', body: 'There' },
      data: { push_id: 'p-1', n: '1' },
      android: { priority: 'HIGH', ttl: '60s', collapseKey: 'c', notification: { channel_id: 'x' } },
      apns: { headers: { 'apns-priority': '10' }, payload: { aps: { badge: 1 } } },
      webpush: { headers: { TTL: '60' }, fcm_options: { link: 'https://example.com' } },
      fcmOptions: { analyticsLabel: 'l' },
    };
    const { status, body } = await send(message);
    expect(status).toBe(200);
    expect(body.name).toMatch(/^projects\/notify-local\/messages\/.+/);
    expect(fcm.received().at(-1)).toMatchObject({
      provider: 'fcm',
      token: 'device-1',
      push_id: 'p-1',
      payload: message,
      at: new Date(clock.now).toISOString(),
    });
  });

  it('answers 401 UNAUTHENTICATED without a valid access token, and for one past its expiry', async () => {
    expect((await send({ token: 'd' }, { token: 'ya29.made-up' })).body.error).toMatchObject({
      code: 401,
      status: 'UNAUTHENTICATED',
    });
    const fresh = (await jwtGrant(await assertion())).body.access_token as string;
    expect((await send({ token: 'd' }, { token: fresh })).status).toBe(200);
    clock.now += 601_000;
    try {
      expect((await send({ token: 'd' }, { token: fresh })).status).toBe(401);
    } finally {
      clock.now -= 601_000;
    }
  });

  it('answers 403 PERMISSION_DENIED for another project', async () => {
    expect((await send({ token: 'd' }, { project: 'other-project' })).body.error).toMatchObject({
      code: 403,
      status: 'PERMISSION_DENIED',
    });
  });

  it.each([
    ['an unknown field', { token: 'd', priority: 'high' }, 'message', /Unknown name "priority" at 'message'/],
    [
      'an unknown nested field',
      { token: 'd', android: { time_to_live: 3 } },
      'message.android',
      /Unknown name "time_to_live"/,
    ],
    [
      'a non-string data value',
      { token: 'd', data: { a: 'x', n: 1 } },
      'message.data[1].value',
      /TYPE_STRING/,
    ],
    [
      'a bad Android priority',
      { token: 'd', android: { priority: 'URGENT' } },
      'message.android.priority',
      /Invalid value/,
    ],
    ['a TTL that is no duration', { token: 'd', android: { ttl: 60 } }, 'message.android.ttl', /Duration/],
    ['a TTL over four weeks', { token: 'd', android: { ttl: '2419201s' } }, 'message.android.ttl', /ttl/],
    [
      'a non-string APNs header',
      { token: 'd', apns: { headers: { 'apns-priority': 10 } } },
      'message.apns.headers[0].value',
      /TYPE_STRING/,
    ],
    ['no recipient', { data: { a: 'b' } }, 'message', /Recipient of the message is not set/],
    ['two recipients', { token: 'd', topic: 'news' }, 'message', /Recipient/],
    ['a reserved data key', { token: 'd', data: { from: 'me' } }, 'message.data', /Invalid data payload key/],
    ['a message over 4096 bytes', { token: 'd', data: { a: 'x'.repeat(4096) } }, 'message', /too big/],
    [
      'a web link that is not https',
      { token: 'd', webpush: { fcm_options: { link: 'myapp://threads/7' } } },
      'message.webpush.fcm_options.link',
      /HTTPS is required/,
    ],
    [
      'an APNs category that is not a string',
      { token: 'd', apns: { payload: { aps: { category: 7 } } } },
      'message.apns.payload',
      /category/,
    ],
    [
      'web buttons that are not the Notification API’s',
      { token: 'd', webpush: { notification: { actions: [{ action: 'a' }] } } },
      'message.webpush.notification',
      /actions/,
    ],
  ])('answers 400 INVALID_ARGUMENT for %s, naming the field', async (_, message, field, text) => {
    const { status, body } = await send(message);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      message: expect.stringMatching(text),
    });
    expect(body.error?.details).toContainEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field, description: body.error?.message }],
    });
  });

  it('counts the size without the token: 4096 bytes of message pass', async () => {
    const fill = (length: number) => ({ token: 'd'.repeat(200), data: { a: 'x'.repeat(length) } });
    const overhead = JSON.stringify({ data: { a: '' } }).length;
    expect((await send(fill(4096 - overhead))).status).toBe(200);
    expect((await send(fill(4097 - overhead))).status).toBe(400);
  });

  it('answers a registration token that is not one with INVALID_ARGUMENT, and a dead one with 404 UNREGISTERED', async () => {
    const invalid = await send({ token: 'has spaces' });
    expect(invalid.body.error).toMatchObject({
      code: 400,
      message: 'The registration token is not a valid FCM registration token',
      details: [
        { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' },
      ],
    });
    fcm.markDead('device-dead');
    const dead = await send({ token: 'device-dead' });
    expect(dead.status).toBe(404);
    expect(dead.body.error).toMatchObject({
      status: 'NOT_FOUND',
      details: [
        { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' },
      ],
    });
    expect(fcm.received().some((push) => push.token === 'device-dead')).toBe(false);
  });

  it('answers the programmed faults in order, with Retry-After, then as usual', async () => {
    fcm.failNext(2, { status: 429, errorCode: 'QUOTA_EXCEEDED', retryAfter: 12 });
    fcm.failNext(1, { status: 503 });
    const answers = [];
    for (let index = 0; index < 4; index += 1) answers.push(await send({ token: 'd' }));
    expect(answers.map((answer) => [answer.status, answer.retryAfter])).toEqual([
      [429, '12'],
      [429, '12'],
      [503, null],
      [200, null],
    ]);
    expect(answers[0]?.body.error).toMatchObject({
      status: 'RESOURCE_EXHAUSTED',
      details: [
        { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'QUOTA_EXCEEDED' },
      ],
    });
  });

  it('checks a dry run (validate_only) in full and delivers nothing', async () => {
    const before = fcm.received().length;
    const dry = await send(undefined, {
      raw: JSON.stringify({ message: { token: 'd' }, validate_only: true }),
    });
    expect(dry).toMatchObject({
      status: 200,
      body: { name: 'projects/notify-local/messages/fake_message_id' },
    });
    const invalid = await send(undefined, {
      raw: JSON.stringify({ message: { token: 'd', x: 1 }, validateOnly: true }),
    });
    expect(invalid.status).toBe(400);
    expect(fcm.received()).toHaveLength(before);
  });

  it('answers a body that is no JSON with 400', async () => {
    expect((await send(undefined, { raw: '{"message":' })).status).toBe(400);
  });
});
