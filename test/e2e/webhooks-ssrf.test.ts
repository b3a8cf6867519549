import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiClient } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { storeWebhook } from '../support/webhooks';

/**
 * SSRF refusals as on AWS: loopback is not allowed here (NOTIFY_WEBHOOK_ALLOW_LOOPBACK=false), so every
 * loopback, private, link-local and metadata target is refused at create time, names included after DNS
 * resolution, and again at delivery time for a webhook that got into the table anyway.
 */
let runtime: Runtime;
let admin: string;
let publisher: string;
let target: Server;
let hits = 0;

beforeAll(async () => {
  target = createServer((_req, res) => {
    hits += 1;
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  runtime = await startTestRuntime({
    env: { NOTIFY_WEBHOOK_ALLOW_LOOPBACK: 'false', NOTIFY_WEBHOOK_RETRY_SCHEDULE: '1s' },
  });
  admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
  publisher = await runtime.mintServiceToken('shop', ['events:publish']);
});
afterAll(async () => {
  await runtime?.stop();
  target?.closeAllConnections();
  await new Promise<void>((resolve) => (target ? target.close(() => resolve()) : resolve()));
});

const api = apiClient(() => runtime.httpUrl);

const BLOCKED = 'is a private, link-local, metadata or reserved address';

it.each([
  [
    'loopback over http',
    () => `http://127.0.0.1:${(target.address() as AddressInfo).port}/hook`,
    'must be an https:// URL',
  ],
  ['loopback', () => 'https://127.0.0.1/hook', '127.0.0.1 is a loopback address'],
  ['another loopback address', () => 'https://127.8.9.10/hook', '127.8.9.10 is a loopback address'],
  [
    'a name that resolves to loopback',
    () => 'https://localhost/hook',
    /^host localhost resolves to (127\.0\.0\.1|::1), which is a loopback address$/,
  ],
  ['IPv6 loopback', () => 'https://[::1]/hook', '::1 is a loopback address'],
  // The URL parser writes the mapped address in hex.
  [
    'IPv4-mapped IPv6 loopback',
    () => 'https://[::ffff:127.0.0.1]/hook',
    '::ffff:7f00:1 is a loopback address',
  ],
  ['the unspecified address', () => 'https://0.0.0.0/hook', `0.0.0.0 ${BLOCKED}`],
  ['a private address', () => 'https://10.0.0.8/hook', `10.0.0.8 ${BLOCKED}`],
  ['a private address', () => 'https://172.20.1.1/hook', `172.20.1.1 ${BLOCKED}`],
  ['carrier-grade NAT', () => 'https://100.64.1.1/hook', `100.64.1.1 ${BLOCKED}`],
  ['instance metadata', () => 'https://169.254.169.254/latest/meta-data/', `169.254.169.254 ${BLOCKED}`],
  ['IPv6 instance metadata', () => 'https://[fd00:ec2::254]/hook', `fd00:ec2::254 ${BLOCKED}`],
  ['IPv6 link-local', () => 'https://[fe80::1]/hook', `fe80::1 ${BLOCKED}`],
  ['IPv6 unique-local', () => 'https://[fd12:3456::1]/hook', `fd12:3456::1 ${BLOCKED}`],
  ['a decimal-encoded loopback', () => 'https://2130706433/hook', '127.0.0.1 is a loopback address'],
  ['a documentation address', () => 'https://203.0.113.9/hook', `203.0.113.9 ${BLOCKED}`],
])('refuses %s at create time, saying why', async (_what, url, reason) => {
  const refused = await api('POST', '/webhooks', admin, {
    url: url(),
    secret: 'x'.repeat(16),
    event_filters: ['*'],
    name: 'ssrf',
  });
  expect(refused.status).toBe(400);
  expect(refused.body.code).toBe('validation');
  expect(refused.body.details).toEqual([
    { field: 'url', issue: typeof reason === 'string' ? reason : expect.stringMatching(reason) },
  ]);
});

it('checks the address again at delivery time and records the refusal', async () => {
  // A webhook stored while loopback was allowed (or before a DNS change): the delivery must not connect.
  const id = await storeWebhook({
    url: `https://localhost:${(target.address() as AddressInfo).port}/hook`,
    filter: 'ssrf.check',
    secret: 'x'.repeat(16),
  });
  const published = await api('POST', '/events', publisher, {
    event_type: 'ssrf.check',
    source: 'shop',
    version: 1,
    data: {},
  });
  expect(published.status).toBe(202);
  const deadline = Date.now() + 25_000;
  let items: { status: string; attempts: { status_code: number | null; error: string }[] }[] = [];
  while (Date.now() < deadline) {
    items = (await api('GET', `/webhooks/${id}/deliveries`, admin)).body.items;
    if (items[0]?.status === 'dead_letter') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(items[0]?.status).toBe('dead_letter');
  expect(items[0]?.attempts).toHaveLength(2);
  for (const attempt of items[0]?.attempts ?? []) {
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toMatch(/^refused: host localhost resolves to .*loopback/);
  }
  expect(hits).toBe(0);
});
