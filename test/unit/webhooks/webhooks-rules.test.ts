import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { retryAfterSecs } from '../../../lambdas/core/retry-after';
import { queueDelaySecs } from '../../../lambdas/core/sqs-send';
import { addressRefusal } from '../../../lambdas/domain/webhooks/address-policy';
import { retryDelaySecs } from '../../../lambdas/domain/webhooks/deliver';
import { filterKeysFor, filterMatches } from '../../../lambdas/domain/webhooks/filters';
import { createWebhookSchema } from '../../../lambdas/domain/webhooks/schema';
import { parseWebhookSettings } from '../../../lambdas/domain/webhooks/settings';
import { signatureHeader } from '../../../lambdas/domain/webhooks/signature';
import { checkWebhookUrl } from '../../../lambdas/domain/webhooks/url-policy';

describe('event filters', () => {
  it('looks an event type up under itself, each prefix.* and *', () => {
    expect(filterKeysFor('orders.created.eu').sort()).toEqual(
      ['*', 'orders.*', 'orders.created.*', 'orders.created.eu'].sort(),
    );
    expect(filterKeysFor('orders').sort()).toEqual(['*', 'orders']);
  });

  it.each([
    ['*', 'anything.at.all', true],
    ['orders.created', 'orders.created', true],
    ['orders.created', 'orders.created.eu', false],
    ['orders.*', 'orders.created', true],
    ['orders.*', 'orders.created.eu', true],
    ['orders.*', 'orders', false],
    ['orders.*', 'ordersx.created', false],
    ['orders.created.*', 'orders.created', false],
  ])('%s against %s → %s, the same as the key lookups', (filter, type, expected) => {
    expect(filterMatches(filter, type)).toBe(expected);
    expect(filterKeysFor(type).includes(filter)).toBe(expected);
  });

  it.each(['orders.*.created', '*.created', 'orders*', 'orders.', '.orders', 'a b', '**'])(
    'refuses the filter %s',
    (filter) => {
      const parsed = createWebhookSchema.safeParse({
        url: 'https://example.com',
        secret: 'x'.repeat(16),
        event_filters: [filter],
        name: 'n',
      });
      expect(parsed.success).toBe(false);
    },
  );
});

describe('secret', () => {
  const bodyWith = (secret: string) => ({
    url: 'https://example.com',
    secret,
    event_filters: ['*'],
    name: 'n',
  });

  it.each([
    ['not base64', `whsec_${'!'.repeat(24)}`],
    ['base64url, not base64', `whsec_${'-_'.repeat(12)}`],
    ['bad padding', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaL==='],
    ['a length no base64 has', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwA'],
    ['whitespace inside', 'whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw'],
    ['too short a key (12 bytes)', 'whsec_MfKQ9r8GKYqrTwjU'],
  ])('refuses a whsec_ secret that is %s', (_, secret) => {
    const parsed = createWebhookSchema.safeParse(bodyWith(secret));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['secret']);
  });

  it.each([
    ['a 24-byte key', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['a 16-byte key, padded', `whsec_${Buffer.alloc(16, 7).toString('base64')}`],
    ['a plain secret with characters base64 lacks', 'plain secret! ünïcode'],
  ])('accepts %s', (_, secret) => {
    expect(createWebhookSchema.safeParse(bodyWith(secret)).success).toBe(true);
  });
});

describe('address policy', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '::1',
    '::ffff:127.0.0.1',
    '10.0.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.100.100.200',
    '0.0.0.0',
    'fd00:ec2::254',
    'fe80::1',
    'fc00::1',
    '::ffff:10.0.0.1',
    '::',
    '224.0.0.1',
    '::a00:1', // IPv4-compatible ::/96 (10.0.0.1)
    '::8.8.8.8',
    '::ffff:169.254.169.254', // IPv4-mapped: judged as the IPv4 address
    '::ffff:0:a9fe:a9fe', // IPv4-translated 169.254.169.254
    '64:ff9b:1::a00:1', // local-use NAT64
    '2001::1', // Teredo (embeds an IPv4)
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  ])('refuses %s', (address) => {
    expect(addressRefusal(address, false)).toBeDefined();
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '172.32.0.1'])('allows %s', (address) => {
    expect(addressRefusal(address, false)).toBeUndefined();
  });

  it('allows loopback only when configured, and nothing else private', () => {
    expect(addressRefusal('127.0.0.1', true)).toBeUndefined();
    expect(addressRefusal('::1', true)).toBeUndefined();
    expect(addressRefusal('10.0.0.1', true)).toBeDefined();
    expect(addressRefusal('169.254.169.254', true)).toBeDefined();
  });
});

describe('webhook URL', () => {
  it.each([
    [' https://example.com/hook', 'whitespace'],
    ['https://example.com/hook ', 'whitespace'],
    ['https://exa\tmple.com/hook', 'whitespace'],
    ['https://example.com/ho\nok', 'whitespace'],
    ['https://93.184.216.34:0/hook', 'port'],
  ])('refuses %j', async (url, reason) => {
    await expect(checkWebhookUrl(url, false)).rejects.toThrow(reason);
  });

  it('accepts an explicit port', async () => {
    await expect(checkWebhookUrl('https://93.184.216.34:8443/hook', false)).resolves.toMatchObject({
      resolved: { address: '93.184.216.34' },
    });
  });
});

describe('signature', () => {
  const body = JSON.stringify({ type: 't', timestamp: '2026-01-01T00:00:00.000Z', data: {} });
  const now = Math.floor(Date.now() / 1000);

  it('verifies with standardwebhooks for a plain secret (UTF-8 bytes as given)', () => {
    const secret = 'plain-secret-ünïcode-1234';
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(now),
      'webhook-signature': signatureHeader(secret, 'msg_1', now, body),
    };
    expect(new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).verify(body, headers)).toEqual(
      JSON.parse(body),
    );
  });

  it('verifies with standardwebhooks for a whsec_ secret (base64-decoded)', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const headers = {
      'webhook-id': 'msg_2',
      'webhook-timestamp': String(now),
      'webhook-signature': signatureHeader(secret, 'msg_2', now, body),
    };
    expect(() => new Webhook(secret).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });

  it('never signs with a whsec_ key that is not strict base64', () => {
    expect(() => signatureHeader(`whsec_${'!'.repeat(24)}`, 'msg_3', now, body)).toThrow(/base64/);
  });
});

describe('retry timing', () => {
  const schedule = [5, 300, 1800];

  it('jitters each step by ±20 %', () => {
    expect(retryDelaySecs(schedule, 1, undefined, () => 0)).toBeCloseTo(4);
    expect(retryDelaySecs(schedule, 1, undefined, () => 1)).toBeCloseTo(6);
    expect(retryDelaySecs(schedule, 2, undefined, () => 0.5)).toBeCloseTo(300);
  });

  it('never retries sooner than Retry-After', () => {
    expect(retryDelaySecs(schedule, 1, 120, () => 0.5)).toBe(120);
    expect(retryDelaySecs(schedule, 3, 10, () => 0.5)).toBeCloseTo(1800);
  });

  it('reads Retry-After as seconds or an HTTP date, capped at a day', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(retryAfterSecs('30', now)).toBe(30);
    expect(retryAfterSecs('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60);
    expect(retryAfterSecs('999999', now)).toBe(86400);
    expect(retryAfterSecs('soon', now)).toBeUndefined();
    expect(retryAfterSecs(undefined, now)).toBeUndefined();
  });

  it('puts a wait on the queue in whole seconds, never shorter than asked, within SQS’s 0–900 s', () => {
    expect(queueDelaySecs(899.3)).toBe(900);
    expect(queueDelaySecs(0.2)).toBe(1);
    expect(queueDelaySecs(3)).toBe(3);
    expect(queueDelaySecs(0)).toBe(0);
    expect(queueDelaySecs(-2)).toBe(0);
    expect(queueDelaySecs(5000)).toBe(900);
  });
});

describe('settings', () => {
  it('defaults to the Standard Webhooks schedule, a 15 s timeout and no loopback', () => {
    const settings = parseWebhookSettings({});
    expect(settings.retryScheduleSecs).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(settings.timeoutMs).toBe(15000);
    expect(settings.allowLoopback).toBe(false);
    expect(settings.maxQueueDelaySecs).toBe(900);
    expect(settings.disableAfterSecs).toBe(5 * 86400);
  });

  it('takes a shortened schedule and refuses a malformed one', () => {
    expect(
      parseWebhookSettings({ NOTIFY_WEBHOOK_RETRY_SCHEDULE: '1s,2s,500ms,1m' }).retryScheduleSecs,
    ).toEqual([1, 2, 0.5, 60]);
    expect(() => parseWebhookSettings({ NOTIFY_WEBHOOK_RETRY_SCHEDULE: '1s,soon' })).toThrow(
      /NOTIFY_WEBHOOK_RETRY_SCHEDULE/,
    );
    expect(parseWebhookSettings({ NOTIFY_WEBHOOK_MAX_QUEUE_DELAY_SECS: '5000' }).maxQueueDelaySecs).toBe(900);
  });

  it('reads every unit of a schedule (ms, s, m, h, d, any case, fractions, spaces; plain numbers are seconds)', () => {
    const schedule = (text: string) =>
      parseWebhookSettings({ NOTIFY_WEBHOOK_RETRY_SCHEDULE: text }).retryScheduleSecs;
    expect(schedule(' 250ms, 1.5s ,2M,1h , 1D,7 ')).toEqual([0.25, 1.5, 120, 3600, 86400, 7]);
    expect(schedule('1 s')).toEqual([1]);
    // Blank counts as unset; an empty, negative or unit-less word is refused, naming the variable.
    expect(schedule('  ')).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    for (const bad of ['1s,,2s', '-5s', '5 minutes', '1w', '.5s']) {
      expect(() => schedule(bad), bad).toThrow(/NOTIFY_WEBHOOK_RETRY_SCHEDULE/);
    }
  });

  it('reads the numbers: fractions allowed, counts rounded up, a queue delay capped at 900 s', () => {
    const settings = parseWebhookSettings({
      NOTIFY_WEBHOOK_TIMEOUT_MS: ' 2500 ',
      NOTIFY_WEBHOOK_MAX_QUEUE_DELAY_SECS: '0.5',
      NOTIFY_WEBHOOK_DISABLE_AFTER_SECS: '90',
      NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY: '2.5',
      NOTIFY_WEBHOOK_ALLOW_LOOPBACK: 'Yes',
    });
    expect(settings).toEqual({
      retryScheduleSecs: [5, 300, 1800, 7200, 18000, 36000, 36000],
      timeoutMs: 2500,
      allowLoopback: true,
      maxQueueDelaySecs: 0.5,
      disableAfterSecs: 90,
      endpointConcurrency: 3,
    });
    // Empty or blank: the default.
    expect(
      parseWebhookSettings({ NOTIFY_WEBHOOK_TIMEOUT_MS: '', NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY: ' ' }),
    ).toMatchObject({ timeoutMs: 15000, endpointConcurrency: 10 });
    for (const name of [
      'NOTIFY_WEBHOOK_TIMEOUT_MS',
      'NOTIFY_WEBHOOK_MAX_QUEUE_DELAY_SECS',
      'NOTIFY_WEBHOOK_DISABLE_AFTER_SECS',
      'NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY',
    ]) {
      for (const bad of ['0', '-1', 'soon', 'Infinity']) {
        expect(() => parseWebhookSettings({ [name]: bad }), `${name}=${bad}`).toThrow(name);
      }
    }
  });
});
