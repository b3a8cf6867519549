import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, eventually } from '../support/api';
import { queueIdle } from '../support/queues';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

let runtime: Runtime;
let run = 0;
let service = '';

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = await runtime.mintServiceToken('prefs', ['notifications:write']);
}, 120_000);
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);
const userId = (name: string) => `${name}-${run}`;
const tokenOf = (name: string) => runtime.mintUserToken(userId(name));

const feedOf = async (token: string) =>
  (await api('GET', '/notifications', token)).body.items as { notification_id: string }[];

const notify = async (body: Record<string, unknown>) => {
  const created = await api('POST', '/notifications', service, { title: 'Hello', ...body });
  expect(created.status).toBe(202);
  return created.body as { id: string; recipient_count: number };
};

const connect = async (token: string) => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
  await client.nextOfType('session');
  return client;
};

/**
 * Waits until the `fanout` queue is idle (a topic's subscribers are reached through it) and then until a marker
 * notification (realtime only, which no test turns off) reached the user's feed and socket: deliveries created
 * before it are done by then, so what they did not deliver never will. The marker alone is not enough: a request
 * delivers a small audience itself, so it arrived before a topic's pages still waiting on the queue.
 */
const settle = async (recipient: string, token: string, client?: TestClient, eventType = `marker.${run}`) => {
  await eventually(
    () => queueIdle('fanout'),
    (idle) => idle,
    60_000,
  );
  const marker = await notify({
    event_type: eventType,
    channels: client ? ['in_app', 'realtime'] : ['in_app'],
    recipient_ids: [recipient],
  });
  const feed = await eventually(
    () => feedOf(token),
    (items) => items.some((item) => item.notification_id === marker.id),
  );
  expect(feed.map((item) => item.notification_id)).toContain(marker.id);
  if (client) await client.next((frame) => frame.notification_id === marker.id);
};

describe('preferences', () => {
  it('reads empty preferences, replaces them (PUT) and reads them back; a service names the user', async () => {
    const alice = await tokenOf('alice');
    expect((await api('GET', '/preferences', alice)).body).toMatchObject({
      user_id: userId('alice'),
      rules: [],
      muted_topics: [],
      updated_at: null,
    });
    const body = {
      rules: [{ event_type: 'marketing.*', channels: { toast: false } }],
      muted_topics: ['news'],
    };
    const put = await api('PUT', '/preferences', alice, body);
    expect(put).toEqual({
      status: 200,
      body: {
        user_id: userId('alice'),
        ...body,
        digests: [], // none given: an empty list, not absent
        time_zone: null,
        quiet_hours: null,
        updated_at: expect.any(String),
        defaults: expect.any(Object),
      },
    });
    expect((await api('GET', '/preferences', alice)).body).toEqual(put.body);
    const bySevice = await api('GET', `/preferences?user_id=${userId('alice')}`, service);
    expect(bySevice.body).toEqual(put.body);
    expect((await api('GET', '/preferences', service)).status).toBe(400);
    expect((await api('GET', `/preferences?user_id=${userId('bob')}`, alice)).status).toBe(403);
    const publisher = await runtime.mintServiceToken('other', ['events:publish']);
    expect((await api('GET', `/preferences?user_id=${userId('alice')}`, publisher)).status).toBe(403);
  });

  it('refuses unknown channels, malformed patterns and more than 200 rules (400), writing nothing', async () => {
    const carol = await tokenOf('carol');
    const bad = async (body: unknown) => {
      const response = await api('PUT', '/preferences', carol, body);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('validation');
      return response.body.details as { field: string }[];
    };
    expect(await bad({ rules: [{ event_type: 'a.b', channels: { email: false } }] })).toEqual([
      expect.objectContaining({ field: expect.stringContaining('rules[0].channels') }),
    ]);
    expect(await bad({ rules: [{ event_type: 'a.*.b', channels: { toast: false } }] })).toEqual([
      expect.objectContaining({ field: 'rules[0].event_type' }),
    ]);
    const many = Array.from({ length: 201 }, (_, index) => ({
      event_type: `t.e${index}`,
      channels: { toast: false },
    }));
    expect(await bad({ rules: many })).toEqual([expect.objectContaining({ field: 'rules' })]);
    expect(
      await bad({
        rules: [
          { event_type: 'x', channels: {} },
          { event_type: 'x', channels: {} },
        ],
      }),
    ).toEqual([expect.objectContaining({ field: 'rules[1].event_type' })]);
    expect((await api('GET', '/preferences', carol)).body.updated_at).toBeNull();
  });

  it('opt-out per channel: no toast frame, the feed item still arrives; in_app off leaves no feed item', async () => {
    const name = 'dave';
    const token = await tokenOf(name);
    const client = await connect(token);
    const prefix = `promo${run}`;
    await api('PUT', '/preferences', token, {
      rules: [
        { event_type: `${prefix}.*`, channels: { toast: false } },
        { event_type: `${prefix}.silent`, channels: { in_app: false } },
      ],
    });
    const toastOff = await notify({
      event_type: `${prefix}.sale`,
      channels: ['in_app', 'toast'],
      recipient_ids: [userId(name)],
    });
    const inAppOff = await notify({
      event_type: `${prefix}.silent`,
      channels: ['in_app'],
      recipient_ids: [userId(name)],
    });
    expect(inAppOff.recipient_count).toBe(1); // counted, documented: preferences are applied at delivery
    await settle(userId(name), token, client);
    const feed = await feedOf(token);
    expect(feed.map((item) => item.notification_id)).toContain(toastOff.id);
    expect(feed.map((item) => item.notification_id)).not.toContain(inAppOff.id);
    expect(client.frames.filter((frame) => frame.notification_id === toastOff.id)).toEqual([]);
    await client.close();
  });

  it('mutes a topic: nothing through it, while a direct recipient still gets it', async () => {
    const topic = `muted-${run}`;
    expect((await api('POST', '/topics', service, { name: topic })).status).toBe(201);
    const [erin, frank] = [await tokenOf('erin'), await tokenOf('frank')];
    for (const token of [erin, frank])
      expect((await api('POST', '/subscriptions', token, { topic })).status).toBe(201);
    await api('PUT', '/preferences', erin, { rules: [], muted_topics: [topic] });
    const viaTopic = await notify({ event_type: `news.${run}`, topics: [topic] });
    await settle(userId('frank'), frank);
    await settle(userId('erin'), erin);
    expect((await feedOf(frank)).map((item) => item.notification_id)).toContain(viaTopic.id);
    expect((await feedOf(erin)).map((item) => item.notification_id)).not.toContain(viaTopic.id);
    const direct = await notify({
      event_type: `news.${run}`,
      topics: [topic],
      recipient_ids: [userId('erin')],
    });
    await settle(userId('erin'), erin);
    expect((await feedOf(erin)).map((item) => item.notification_id)).toContain(direct.id);
  }, 120_000);

  it('defaults: set by a service, followed by users without a rule, overridden by a user rule', async () => {
    const prefix = `digest${run}`;
    const user = await tokenOf('gina');
    expect((await api('PUT', '/preferences/defaults', user, { rules: [] })).status).toBe(403);
    const set = await api('PUT', '/preferences/defaults', service, {
      rules: [{ event_type: `${prefix}.*`, channels: { in_app: false } }],
    });
    expect(set).toEqual({
      status: 200,
      body: {
        rules: [{ event_type: `${prefix}.*`, channels: { in_app: false }, required: false }],
        quiet_hours: { urgent: false, required: false },
        updated_at: expect.any(String),
      },
    });
    expect((await api('GET', '/preferences', user)).body.defaults).toEqual(set.body);
    const hank = await tokenOf('hank');
    await api('PUT', '/preferences', hank, {
      rules: [{ event_type: `${prefix}.weekly`, channels: { in_app: true } }],
    });
    const sent = await notify({
      event_type: `${prefix}.weekly`,
      recipient_ids: [userId('gina'), userId('hank')],
    });
    await settle(userId('gina'), user);
    await settle(userId('hank'), hank);
    expect((await feedOf(user)).map((item) => item.notification_id)).not.toContain(sent.id);
    expect((await feedOf(hank)).map((item) => item.notification_id)).toContain(sent.id);
  });

  it('required types: a user cannot turn them off (400), and neither broad rules nor mutes stop them', async () => {
    const prefix = `security${run}`;
    const topic = `alerts-${run}`;
    expect((await api('POST', '/topics', service, { name: topic })).status).toBe(201);
    await api('PUT', '/preferences/defaults', service, {
      rules: [{ event_type: `${prefix}.*`, required: true }],
    });
    const ivy = await tokenOf('ivy');
    expect((await api('POST', '/subscriptions', ivy, { topic })).status).toBe(201);
    const refused = await api('PUT', '/preferences', ivy, {
      rules: [
        { event_type: `${prefix}.login`, channels: { in_app: false } },
        { event_type: 'other.*', channels: { toast: false } },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'validation', details: [{ field: 'rules[0].event_type' }] });
    expect((await api('GET', '/preferences', ivy)).body.updated_at).toBeNull();
    const broad = await api('PUT', '/preferences', ivy, {
      rules: [{ event_type: '*', channels: { in_app: false } }],
      muted_topics: [topic],
    });
    expect(broad.status).toBe(200);
    const alert = await notify({ event_type: `${prefix}.login`, topics: [topic] });
    const other = await notify({ event_type: `other${run}.thing`, recipient_ids: [userId('ivy')] });
    await settle(userId('ivy'), ivy, undefined, `${prefix}.marker`); // required: her `*` rule does not stop it
    const ids = (await feedOf(ivy)).map((item) => item.notification_id);
    expect(ids).toContain(alert.id);
    expect(ids).not.toContain(other.id);
    await api('PUT', '/preferences/defaults', service, { rules: [] });
  }, 90_000);
});
