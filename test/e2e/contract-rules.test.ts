/**
 * The rules the service enforces beyond a route's declared access and its schemas' JSON Schema keywords (fields
 * checked against the caller, fields that must name something that exists, cross-field rules): each is stated in
 * docs/contract.md and in the operation's part of docs/api/openapi.json, and the running service enforces it as
 * stated. A rule row holds a request that breaks the rule and the same request keeping it; the documents' words are
 * matched as they are written, so rewording a rule means looking at this table again.
 */
import { createECDH } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../api-docs/operations';
import { pushSettingName } from '../../common/env';
import openApi from '../../docs/api/openapi.json' with { type: 'json' };
import { repoRoot } from '../../lib/paths';
import { wiring } from '../../lib/wiring';
import { apiClient } from '../support/api';
import { vapidCredentials } from '../support/push-keys';
import { type Runtime, startTestRuntime } from '../support/runtime';

type Json = Record<string, unknown>;

interface Tokens {
  readonly alice: string;
  /** A service named `billing` holding every scope these rules need. */
  readonly billing: string;
  /** The receiver id of alice's feed item with the buttons `approve` and `reject`. */
  readonly aliceItemWithButtons: string;
}

interface Call {
  readonly method: string;
  /** The path, or how it follows from what the set-up made. */
  readonly path: string | ((tokens: Tokens) => string);
  readonly token: (tokens: Tokens) => string;
  readonly body?: unknown;
}

interface Rule {
  /** The operation (lib/wiring id) that enforces the rule. */
  readonly operation: string;
  readonly rule: string;
  /** How docs/contract.md states it. */
  readonly contract: RegExp;
  /** How the operation's part of docs/api/openapi.json states it (descriptions of the route, its fields, errors). */
  readonly openApi: RegExp;
  readonly broken: Call & { readonly status: number; readonly code: string; readonly field?: string };
  readonly kept: Call & { readonly status: number };
}

const run = Date.now().toString(36);
const topic = `rules-${run}`;
const alice = (tokens: Tokens) => tokens.alice;
const billing = (tokens: Tokens) => tokens.billing;

/** POST /notifications by `token` with `extra` fields. */
const notify = (token: (tokens: Tokens) => string, extra: Json): Call => ({
  method: 'POST',
  path: '/notifications',
  token,
  body: { event_type: 'rules.check', title: 'Rule check', ...extra },
});
/** POST /webhooks with a `url` and a `secret` (loopback: the local runtime allows plain http there). */
const createWebhook = (url: string, secret: string): Call => ({
  method: 'POST',
  path: '/webhooks',
  token: (tokens) => tokens.billing,
  body: { name: 'rules', url, secret, event_filters: ['rules.none'] },
});
/** A webhook create refused for its `url`. */
const refusedUrl = (url: string) => ({
  ...createWebhook(url, 'a-secret-of-16-chars'),
  status: 400,
  code: 'validation',
  field: 'url',
});
/** POST /devices by alice. */
const registerDevice = (body: Json): Call => ({ method: 'POST', path: '/devices', token: alice, body });
const putDigests = (digests: Json[]): Call => ({
  method: 'PUT',
  path: '/preferences',
  token: alice,
  body: { rules: [], digests },
});
/** A browser's PushSubscription.toJSON() with a fresh P-256 key, on loopback (allowed locally). */
const webSubscription = (p256dh = createECDH('prime256v1').generateKeys().toString('base64url')) => ({
  endpoint: `http://127.0.0.1:9/push/${run}`,
  keys: { p256dh, auth: Buffer.alloc(16, 7).toString('base64url') },
});
const offCurve = (() => {
  const point = createECDH('prime256v1').generateKeys();
  point[64] = (point[64] as number) ^ 1;
  return point.toString('base64url');
})();
const event = (source: string) => ({ event_type: 'rules.checked', source, version: 1, data: {} });
/** A click by alice on her item with buttons. */
const click = (body: Json): Call => ({
  method: 'POST',
  path: (tokens) => `/notifications/${tokens.aliceItemWithButtons}/interact`,
  token: alice,
  body,
});

/** Rows run in order: a later one may rely on an earlier one's `kept` request (the required default that the
 * preferences rule meets). */
const RULES: readonly Rule[] = [
  {
    operation: 'events.publish',
    rule: 'a service publishes only as itself or a dotted sub-source of itself',
    contract:
      /`source`\s+\(printable ASCII, names separated by single dots none of them empty, not starting with `aws\.`,\s+and the calling\s+service's name or `<name>\.\*`/,
    openApi: /calling service's own name or a dotted sub-source of it.*any other value is a 403/,
    broken: {
      method: 'POST',
      path: '/events',
      token: billing,
      body: event('shop'),
      status: 403,
      code: 'forbidden',
    },
    kept: { method: 'POST', path: '/events', token: billing, body: event('billing.invoices'), status: 202 },
  },
  {
    operation: 'notifications.create',
    rule: 'a service states only its own source',
    contract: /A `source`\s+given must be the caller's own or, for a service, `<name>\.\*` \(§2; else 403\)/,
    openApi: /given, the calling service's own name or a dotted sub-source of it/,
    broken: {
      ...notify(billing, { recipient_ids: ['alice'], source: 'shop' }),
      status: 403,
      code: 'forbidden',
    },
    kept: {
      ...notify(billing, { recipient_ids: ['alice'], source: 'billing.invoices' }),
      status: 202,
    },
  },
  {
    operation: 'notifications.create',
    rule: 'a user’s source is `user`',
    contract: /`user` for a user/,
    openApi: /`user` for a user; any other value is a 403/,
    broken: {
      ...notify(alice, { recipient_ids: ['alice'], source: 'billing' }),
      status: 403,
      code: 'forbidden',
    },
    kept: {
      ...notify(alice, { recipient_ids: ['alice'], source: 'user' }),
      status: 202,
    },
  },
  {
    operation: 'notifications.create',
    rule: 'a user notifies only itself',
    contract: /A user names only itself in `recipient_ids` and no `topics` \(else 403\)/,
    openApi: /A user may name only itself \(another id is a 403\)/,
    broken: {
      ...notify(alice, { recipient_ids: ['alice', 'bob'] }),
      status: 403,
      code: 'forbidden',
    },
    kept: {
      ...notify(alice, { recipient_ids: ['alice'] }),
      status: 202,
    },
  },
  {
    operation: 'notifications.create',
    rule: 'only services name topics',
    contract: /A user names only itself in `recipient_ids` and no `topics` \(else 403\)/,
    openApi: /Services only \(a user naming topics is a 403\)/,
    broken: {
      ...notify(alice, { topics: [topic] }),
      status: 403,
      code: 'forbidden',
    },
    kept: {
      ...notify(billing, { topics: [topic] }),
      status: 202,
    },
  },
  {
    operation: 'notifications.create',
    rule: 'named topics exist',
    contract: /a topic that does not exist → 404/,
    openApi: /existing topics \(an unknown one is a 404\)/,
    broken: {
      ...notify(billing, { topics: [`${topic}-missing`] }),
      status: 404,
      code: 'not_found',
    },
    kept: {
      ...notify(billing, { topics: [topic] }),
      status: 202,
    },
  },
  {
    operation: 'notifications.create',
    rule: 'recipients or topics name the audience',
    contract: /`recipient_ids` \(1–1000 unique user ids[^)]*\) unless `topics`/,
    openApi: /required \(non-empty\) unless `topics` is given/,
    broken: {
      ...notify(billing, {}),
      status: 400,
      code: 'validation',
      field: 'recipient_ids',
    },
    kept: {
      ...notify(billing, { recipient_ids: ['alice'] }),
      status: 202,
    },
  },
  {
    operation: 'subscriptions.create',
    rule: 'a user subscribes only itself',
    contract: /a user subscribes\s+itself: another `user_id` → 403/,
    openApi: /A user leaves it out or names itself \(another user is a 403\)/,
    broken: {
      method: 'POST',
      path: '/subscriptions',
      token: alice,
      body: { topic, user_id: 'bob' },
      status: 403,
      code: 'forbidden',
    },
    kept: {
      method: 'POST',
      path: '/subscriptions',
      token: alice,
      body: { topic, user_id: 'alice' },
      status: 201,
    },
  },
  {
    operation: 'subscriptions.create',
    rule: 'a service names the subscriber',
    contract: /a service with `notifications:write` names the user: without `user_id` → 400/,
    openApi: /a service names the user \(without it, a 400\)/,
    broken: {
      method: 'POST',
      path: '/subscriptions',
      token: billing,
      body: { topic },
      status: 400,
      code: 'validation',
      field: 'user_id',
    },
    kept: {
      method: 'POST',
      path: '/subscriptions',
      token: billing,
      body: { topic, user_id: 'carol' },
      status: 201,
    },
  },
  {
    operation: 'subscriptions.create',
    rule: 'the topic exists',
    contract: /without `user_id` → 400\);\s+unknown topic → 404/,
    openApi: /An existing topic \(an unknown one is a 404\)/,
    broken: {
      method: 'POST',
      path: '/subscriptions',
      token: billing,
      body: { topic: `${topic}-missing`, user_id: 'dave' },
      status: 404,
      code: 'not_found',
    },
    kept: {
      method: 'POST',
      path: '/subscriptions',
      token: billing,
      body: { topic, user_id: 'dave' },
      status: 201,
    },
  },
  {
    operation: 'presence.user',
    rule: 'a user id in the path is within the user-id bound',
    contract: /user id: [^|]*path \| 1–512 bytes \| 401 for a token; else 400 on the field/,
    openApi: /1 to 512 bytes in UTF-8/,
    broken: {
      method: 'GET',
      path: `/presence/${'é'.repeat(257)}`,
      token: alice,
      status: 400,
      code: 'validation',
      field: 'user_id',
    },
    kept: { method: 'GET', path: `/presence/${'é'.repeat(256)}`, token: alice, status: 200 },
  },
  {
    operation: 'preferences.get',
    rule: 'a user reads only its own preferences',
    contract: /A user reads and sets its own \(`\?user_id=`\s+left out or its own id; another → 403\)/,
    openApi: /A user leaves it out or names itself \(another user is a 403\)/,
    broken: { method: 'GET', path: '/preferences?user_id=bob', token: alice, status: 403, code: 'forbidden' },
    kept: { method: 'GET', path: '/preferences?user_id=alice', token: alice, status: 200 },
  },
  {
    operation: 'preferences.get',
    rule: 'a service names the user whose preferences it reads',
    contract: /a service with `notifications:write` names the user in `\?user_id=`\s+\(required, else 400\)/,
    openApi: /a service names the user \(without it, a 400\)/,
    broken: {
      method: 'GET',
      path: '/preferences',
      token: billing,
      status: 400,
      code: 'validation',
      field: 'user_id',
    },
    kept: { method: 'GET', path: '/preferences?user_id=alice', token: billing, status: 200 },
  },
  {
    operation: 'notifications.create',
    rule: 'a digest closes after a window or at a time of day, one of them',
    contract:
      /exactly one of `window_secs`\s+\(1–604800[^)]*\) and `at` \(`HH:MM`[\s\S]*?else 400 on `digest\.window_secs`/,
    openApi: /Exactly one of `window_secs` and `at`, else a 400 on `digest\.window_secs`/,
    broken: {
      ...notify(billing, {
        recipient_ids: ['alice'],
        digest: { key: 'post-1', window_secs: 60, at: '09:00' },
      }),
      status: 400,
      code: 'validation',
      field: 'digest.window_secs',
    },
    kept: {
      ...notify(billing, { recipient_ids: ['alice'], digest: { key: 'post-1', window_secs: 60 } }),
      status: 202,
    },
  },
  {
    operation: 'preferences.put',
    rule: 'a digest choice names one pattern and one close',
    contract:
      /at most 20 choices `\{"event_type" \|\s+"category", "window_secs" \| "at"\}` \(exactly one of each pair, else 400/,
    openApi:
      /exactly one of `event_type` and `category`, and exactly one of `window_secs` and `at`, else a 400/,
    broken: {
      method: 'PUT',
      path: '/preferences',
      token: alice,
      body: { rules: [], digests: [{ event_type: 'a.*', category: 'a', at: '09:00' }] },
      status: 400,
      code: 'validation',
      field: 'digests[0].event_type',
    },
    kept: {
      method: 'PUT',
      path: '/preferences',
      token: alice,
      body: { rules: [], digests: [{ event_type: 'a.*', at: '09:00' }] },
      status: 200,
    },
  },
  {
    operation: 'preferences.put',
    rule: 'a digest choice names its pattern once per kind',
    contract: /patterns as for rules, each once per\s+kind/,
    openApi: /Each pattern once per kind, else a 400/,
    broken: {
      ...putDigests([
        { category: 'a', at: '09:00' },
        { category: 'a', window_secs: 60 },
      ]),
      status: 400,
      code: 'validation',
      field: 'digests[1].category',
    },
    kept: {
      ...putDigests([
        { category: 'a', at: '09:00' },
        { event_type: 'a', window_secs: 60 },
      ]),
      status: 200,
    },
  },
  {
    operation: 'preferences.put',
    rule: 'a user sets only its own preferences',
    contract: /A user reads and sets its own \(`\?user_id=`\s+left out or its own id; another → 403\)/,
    openApi: /A user leaves it out or names itself \(another user is a 403\)/,
    broken: {
      method: 'PUT',
      path: '/preferences?user_id=bob',
      token: alice,
      body: { rules: [] },
      status: 403,
      code: 'forbidden',
    },
    kept: { method: 'PUT', path: '/preferences', token: alice, body: { rules: [] }, status: 200 },
  },
  {
    operation: 'preferences.defaults.put',
    rule: 'defaults switch only known channels',
    contract: /`channels` a subset of `in_app`, `toast`, `realtime`/,
    openApi: /unknown channels/,
    broken: {
      method: 'PUT',
      path: '/preferences/defaults',
      token: billing,
      body: { rules: [{ event_type: `${topic}.security.*`, required: true, channels: { email: true } }] },
      status: 400,
      code: 'validation',
      field: 'rules[0].channels.email',
    },
    kept: {
      method: 'PUT',
      path: '/preferences/defaults',
      token: billing,
      body: { rules: [{ event_type: `${topic}.security.*`, required: true }] },
      status: 200,
    },
  },
  {
    operation: 'preferences.put',
    rule: 'a user cannot turn off what a default requires',
    contract: /a user rule that turns a channel off for types a `required` default covers → 400/,
    openApi: /a rule turning a channel off for types a required default covers/,
    broken: {
      method: 'PUT',
      path: '/preferences',
      token: alice,
      body: { rules: [{ event_type: `${topic}.security.login`, channels: { in_app: false } }] },
      status: 400,
      code: 'validation',
      field: 'rules[0].event_type',
    },
    kept: {
      method: 'PUT',
      path: '/preferences',
      token: alice,
      body: { rules: [{ event_type: `${topic}.security.login`, channels: { in_app: true } }] },
      status: 200,
    },
  },
  {
    operation: 'webhooks.create',
    rule: 'a webhook URL is https (plain http only to loopback, locally)',
    contract: /`url` must be `https:\/\/` \(plain `http:\/\/` only\s+for loopback in local mode\)/,
    openApi:
      /An absolute `https:\/\/` URL.*plain `http:\/\/` only to a loopback address on the local runtime/,
    broken: refusedUrl('http://example.com/hook'),
    kept: {
      ...createWebhook('http://127.0.0.1:9/hook', 'a-secret-of-16-chars'),
      status: 201,
    },
  },
  {
    operation: 'webhooks.create',
    rule: 'a webhook host resolves',
    contract: /the host must resolve \(else 400\)/,
    openApi: /A host that does not resolve is a 400/,
    broken: refusedUrl('https://receiver.invalid/hook'),
    kept: { ...createWebhook('https://127.0.0.1:9/hook', 'a-secret-of-16-chars'), status: 201 },
  },
  {
    operation: 'webhooks.create',
    rule: 'a webhook host is public (loopback allowed only locally)',
    contract:
      /every address it resolves to must be public:\s+private, link-local, metadata and reserved addresses are refused \(400\), and loopback too except on the local\s+runtime/,
    openApi:
      /a host resolving to a private, link-local, metadata or reserved address is a 400, and to a loopback address too except on the local runtime/,
    broken: refusedUrl('https://10.0.0.1/hook'),
    kept: { ...createWebhook('https://[::1]:9/hook', 'a-secret-of-16-chars'), status: 201 },
  },
  {
    operation: 'webhooks.create',
    rule: 'a whsec_ secret is standard base64 of at least 16 bytes',
    contract:
      /a secret written\s+`whsec_<base64>` is base64-decoded first.*it must be standard base64\s+decoding to at least 16 bytes/s,
    openApi: /written `whsec_<base64>`, the decoded bytes \(standard base64, at least 16 bytes\)/,
    broken: {
      ...createWebhook('http://127.0.0.1:9/hook', `whsec_${Buffer.alloc(8, 1).toString('base64')}`),
      status: 400,
      code: 'validation',
      field: 'secret',
    },
    kept: {
      ...createWebhook('http://127.0.0.1:9/hook', `whsec_${Buffer.alloc(24, 1).toString('base64')}`),
      status: 201,
    },
  },
  {
    operation: 'devices.register',
    rule: 'a device names an app configured for push',
    contract: /`app_id`: an app configured for push on the stage.*An unknown app.*→ 400/s,
    openApi: /`app_id` is not an app configured for push on this stage/,
    broken: {
      ...registerDevice({ token: `rules-${run}`, platform: 'android', app_id: 'no-such-app' }),
      status: 400,
      code: 'validation',
      field: 'app_id',
    },
    kept: {
      ...registerDevice({ token: `rules-${run}`, platform: 'android', app_id: 'rules-app' }),
      status: 201,
    },
  },
  {
    operation: 'devices.register',
    rule: 'a provider reaches the platform',
    contract: /`apns` reaches `ios` only, `webpush` `web` only/,
    openApi: /a `provider` that does not reach the\s+`platform`/,
    broken: {
      ...registerDevice({ token: `rules-${run}-2`, platform: 'android', provider: 'apns' }),
      status: 400,
      code: 'validation',
      field: 'provider',
    },
    kept: { ...registerDevice({ token: `rules-${run}-2`, platform: 'ios', provider: 'apns' }), status: 201 },
  },
  {
    operation: 'devices.register',
    rule: "a Web Push subscription's p256dh is a P-256 point on the curve",
    contract: /`p256dh`: base64url of an uncompressed P-256 point\s+\(65 bytes\) on the curve/,
    openApi: /whose `p256dh` is not an uncompressed P-256 point on the curve/,
    broken: {
      ...registerDevice({ platform: 'web', subscription: webSubscription(offCurve) }),
      status: 400,
      code: 'validation',
      field: 'subscription.keys.p256dh',
    },
    kept: { ...registerDevice({ platform: 'web', subscription: webSubscription() }), status: 201 },
  },
  {
    operation: 'devices.register',
    rule: "a Web Push subscription's endpoint passes the webhook address policy",
    contract: /`endpoint`.*a URL under the webhook address policy/s,
    openApi: /whose `endpoint` breaks the webhook address policy/,
    broken: {
      ...registerDevice({
        platform: 'web',
        subscription: { ...webSubscription(), endpoint: 'https://10.0.0.1/push' },
      }),
      status: 400,
      code: 'validation',
      field: 'subscription.endpoint',
    },
    kept: { ...registerDevice({ platform: 'web', subscription: webSubscription() }), status: 201 },
  },
  {
    operation: 'push.vapidPublicKey',
    rule: 'the VAPID key is asked for a configured app',
    contract: /An unknown `app_id` → 400 naming it/,
    openApi: /`app_id` is not an app configured for push on this stage/,
    broken: {
      method: 'GET',
      path: '/push/vapid-public-key?app_id=no-such-app',
      token: alice,
      status: 400,
      code: 'validation',
      field: 'app_id',
    },
    kept: { method: 'GET', path: '/push/vapid-public-key?app_id=rules-app', token: alice, status: 200 },
  },
  {
    operation: 'notifications.interact',
    rule: 'a click names one of the notification’s buttons',
    contract: /`action_id` not the id of one of the notification's\s+`actions` → 400 naming `action_id`/,
    openApi: /`action_id` is not the id of one of the notification’s actions/,
    broken: { ...click({ action_id: 'maybe' }), status: 400, code: 'validation', field: 'action_id' },
    kept: { ...click({ action_id: 'approve' }), status: 200 },
  },
];

/** The operation's whole part of the OpenAPI document: route, parameters, responses and request body schema. */
const operationText = (operationId: string): string => {
  const paths = openApi.paths as Record<string, Record<string, Json>>;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (operation.operationId !== operationId) continue;
      const body = JSON.stringify(operation.requestBody ?? {}).match(
        /#\/components\/requestBodies\/(\w+)/,
      )?.[1];
      const bodies = openApi.components.requestBodies as Record<string, unknown>;
      return JSON.stringify([operation, body ? bodies[body] : undefined]).replaceAll('\\"', '"');
    }
  }
  throw new Error(`docs/api/openapi.json has no operation ${operationId}`);
};

const contract = readFileSync(join(repoRoot, 'docs/contract.md'), 'utf8');

describe('every rule checked beyond access and schema keywords is documented (docs/contract.md, openapi.json)', () => {
  it.each(RULES.map((rule) => [`${rule.operation}: ${rule.rule}`, rule] as const))('%s', (_name, rule) => {
    expect(contract).toMatch(rule.contract);
    expect(operationText(rule.operation)).toMatch(rule.openApi);
  });

  it('lists a rule for every route-specific 400 and 403 the API description names', () => {
    const documented = Object.entries(OPERATIONS).flatMap(([operation, doc]) =>
      (['validation', 'forbidden'] as const)
        .filter((code) => doc.errors?.[code] !== undefined)
        // A cursor the listing did not issue is the paging helper's rule, tested with paging.
        .filter((code) => !/^a cursor /.test(doc.errors?.[code] ?? ''))
        .map((code) => `${operation} ${code}`),
    );
    const covered = new Set(RULES.map((rule) => `${rule.operation} ${rule.broken.code}`));
    expect(documented.filter((entry) => !covered.has(entry))).toEqual([]);
  });

  it('names only declared operations', () => {
    const declared = new Set(wiring.httpRoutes.map((route) => route.id));
    expect(RULES.map((rule) => rule.operation).filter((operation) => !declared.has(operation))).toEqual([]);
  });
});

describe('the service enforces each documented rule as documented', () => {
  let runtime: Runtime;
  let tokens: Tokens;
  const api = apiClient(() => runtime.httpUrl);
  const send = (call: Call) =>
    api(
      call.method,
      typeof call.path === 'string' ? call.path : call.path(tokens),
      call.token(tokens),
      call.body,
    );

  beforeAll(async () => {
    // One push app with every provider, for the device and VAPID key rules.
    runtime = await startTestRuntime({
      env: {
        [pushSettingName('APPS')]: JSON.stringify({
          'rules-app': {
            fcm: { credentials: {} },
            apns: { credentials: {} },
            webpush: { credentials: vapidCredentials() },
          },
        }),
      },
    });
    const [aliceToken, billingToken] = [
      await runtime.mintUserToken('alice'),
      await runtime.mintServiceToken('billing', ['events:publish', 'notifications:write', 'webhooks:admin']),
    ];
    expect((await api('POST', '/topics', billingToken, { name: topic })).status).toBe(201);
    const withButtons = await api('POST', '/notifications', billingToken, {
      event_type: 'rules.approval',
      title: 'Approve?',
      recipient_ids: ['alice'],
      actions: [
        { id: 'approve', label: 'Approve' },
        { id: 'reject', label: 'Reject' },
      ],
    });
    expect(withButtons.status).toBe(202);
    // Delivered by the request itself (one named recipient): in the feed when it answers.
    const feed = await api('GET', '/notifications?state=all&limit=100', aliceToken);
    tokens = {
      alice: aliceToken,
      billing: billingToken,
      aliceItemWithButtons: feed.body.items.find(
        (item: { notification_id: string }) => item.notification_id === withButtons.body.id,
      ).id,
    };
  });
  afterAll(() => runtime?.stop());

  it.each(RULES.map((rule) => [`${rule.operation}: ${rule.rule}`, rule] as const))(
    '%s',
    async (_name, rule) => {
      const broken = await send(rule.broken);
      expect({ status: broken.status, code: broken.body?.code }).toEqual({
        status: rule.broken.status,
        code: rule.broken.code,
      });
      if (rule.broken.field) {
        expect(broken.body.details.map((detail: { field: string }) => detail.field)).toContain(
          rule.broken.field,
        );
      }
      expect((await send(rule.kept)).status).toBe(rule.kept.status);
    },
  );
});
