/**
 * A notification's link and buttons, and clicks on them, end to end over real HTTP and WebSocket on the local
 * runtime: `url` and `actions` on POST /notifications, in the feed and the `notification` frame; POST
 * /notifications/{receiver_id}/interact recording the first click, marking the item seen and read, reaching the
 * user's connections, and publishing `notify.notification.interacted` on the bus once — seen by a webhook, and
 * counted on the bus — after a double click, concurrent clicks, and a request that fails after recording.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, eventually } from '../support/api';
import { queueIdle } from '../support/queues';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { type Frame, TestClient } from '../support/ws-client';
import { WebhookReceiver } from './webhook-receiver';

let runtime: Runtime;
let service: string;
let run = 0;
const user = (name: string) => `${name}-${process.pid}-${run}`;
const receiver = new WebhookReceiver();
const HOOK = '/interacted';
/** The DynamoDB calls failing now (an outage a test switches on and off). */
let failing: ((operation: string, request: Readonly<Record<string, unknown>>) => boolean) | undefined;

beforeAll(async () => {
  await receiver.start();
  runtime = await startTestRuntime({
    dynamoDbOutage: (operation, request) => failing?.(operation, request) === true,
  });
  run = Date.now();
  service = await runtime.mintServiceToken('approvals', ['notifications:write']);
  const secret = `s3cret-${randomBytes(8).toString('hex')}`;
  const admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
  const hook = await api('POST', '/webhooks', admin, {
    url: receiver.endpoint(HOOK, secret),
    secret,
    event_filters: ['notify.notification.interacted'],
    name: 'clicks',
  });
  expect(hook.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
  await receiver.stop();
});

const api = apiClient(() => runtime.httpUrl);

const ACTIONS = [
  { id: 'approve', label: 'Approve' },
  { id: 'reject', label: 'Reject' },
  { id: 'open', label: 'Open', url: 'https://example.com/requests/7' },
];

/** A notification with a link and buttons to the user; its feed item. */
const notifyWithActions = async (userId: string, token: string, extra: Record<string, unknown> = {}) => {
  const created = await api('POST', '/notifications', service, {
    event_type: 'approvals.requested',
    title: 'Approve the expense?',
    recipient_ids: [userId],
    url: 'myapp://requests/7',
    actions: ACTIONS,
    ...extra,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(202);
  const items = await eventually(
    async () => (await api('GET', '/notifications?state=all', token)).body.items as Record<string, unknown>[],
    (found) => found.some((item) => item.notification_id === created.body.id),
  );
  return items.find((item) => item.notification_id === created.body.id) as Record<string, unknown> & {
    id: string;
  };
};

const connect = async (token: string) => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
  await client.nextOfType('session', 30_000);
  return client;
};

const unread = async (token: string) =>
  (await api('GET', '/notifications/unread-count', token)).body.count as number;

/** The webhook deliveries of the clicks on `receiverId`'s item. */
const eventsAbout = (receiverId: string) =>
  receiver
    .at(HOOK)
    .map(
      (received) =>
        received.verified as { type: string; data: { id: string; data: Record<string, unknown> } },
    )
    .filter((event) => event.data.data.receiver_id === receiverId);

/** Every message of `fanout` handled: interaction events published (or given up). */
const fanoutDone = () =>
  eventually(
    () => queueIdle('fanout'),
    (idle) => idle,
    60_000,
  );

describe('link and buttons', () => {
  it('carries `url` and `actions` into the feed item and the `notification` frame', async () => {
    const amy = user('amy');
    const token = await runtime.mintUserToken(amy);
    const client = await connect(token);
    const created = await api('POST', '/notifications', service, {
      event_type: 'approvals.requested',
      title: 'Approve?',
      recipient_ids: [amy],
      channels: ['in_app', 'toast'],
      url: 'https://example.com/requests/1',
      actions: ACTIONS,
    });
    expect(created.status).toBe(202);
    const wire = {
      url: 'https://example.com/requests/1',
      actions: [
        { id: 'approve', label: 'Approve', url: null },
        { id: 'reject', label: 'Reject', url: null },
        { id: 'open', label: 'Open', url: 'https://example.com/requests/7' },
      ],
    };
    expect(await client.nextOfType('notification')).toMatchObject({
      notification_id: created.body.id,
      ...wire,
    });
    const [item] = (await api('GET', '/notifications', token)).body.items;
    expect(item).toMatchObject({
      notification_id: created.body.id,
      ...wire,
      interacted_at: null,
      interacted_action: null,
      revision: 0,
    });
    // Without them: null and [].
    await api('POST', '/notifications', service, {
      event_type: 'plain',
      title: 'plain',
      recipient_ids: [amy],
      channels: ['in_app', 'toast'],
    });
    expect(await client.nextOfType('notification')).toMatchObject({ title: 'plain', url: null, actions: [] });
    client.assertDocumentedFrames();
    await client.close();
  });

  it('refuses a relative or script URL, too many buttons, duplicate or malformed ids, naming the field', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ url: '/relative/path' }, 'url'],
      [{ url: 'javascript:alert(1)' }, 'url'],
      [{ url: `https://example.com/${'a'.repeat(2048)}` }, 'url'],
      [{ url: 'https://example.com/a b' }, 'url'],
      [{ actions: [] }, 'actions'],
      [{ actions: [...ACTIONS, { id: 'more', label: 'More' }] }, 'actions'],
      [{ actions: [ACTIONS[0], { id: 'approve', label: 'Again' }] }, 'actions[1].id'],
      [{ actions: [{ id: 'Approve!', label: 'x' }] }, 'actions[0].id'],
      [{ actions: [{ id: 'ok', label: '' }] }, 'actions[0].label'],
      [{ actions: [{ id: 'ok', label: 'x', url: 'data:text/html,hi' }] }, 'actions[0].url'],
      [{ actions: [{ id: 'ok', label: 'x', style: 'primary' }] }, 'actions[0].style'],
    ];
    for (const [extra, field] of bad) {
      const answer = await api('POST', '/notifications', service, {
        event_type: 'approvals.requested',
        title: 'x',
        recipient_ids: [user('nobody')],
        ...extra,
      });
      expect(answer.status, JSON.stringify(extra).slice(0, 80)).toBe(400);
      // One issue each: a relative URL is not also reported as unparseable.
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toEqual([field]);
    }
  });
});

describe('interact', () => {
  it('records the first of concurrent clicks once, marks the item seen and read, tells every connection, and publishes one event', async () => {
    const bea = user('bea');
    const token = await runtime.mintUserToken(bea);
    const item = await notifyWithActions(bea, token);
    await notifyWithActions(bea, token, { title: 'another' });
    const [phone, laptop] = [await connect(token), await connect(token)];
    expect(await unread(token)).toBe(2);
    await fanoutDone();
    const published = runtime.standIns.eventBridge.counters().putEvents;

    // A double click and a click on another button from the other device, at once.
    const clicks = await Promise.all([
      api('POST', `/notifications/${item.id}/interact`, token, { action_id: 'approve' }),
      api('POST', `/notifications/${item.id}/interact`, token, { action_id: 'approve' }),
      api('POST', `/notifications/${item.id}/interact`, token, { action_id: 'reject' }),
    ]);
    for (const click of clicks) expect(click.status, JSON.stringify(click.body)).toBe(200);
    const [first] = clicks;
    expect(first?.body).toMatchObject({
      id: item.id,
      seen_at: expect.any(String),
      read_at: expect.any(String),
      interacted_at: expect.any(String),
      interacted_action: expect.stringMatching(/^(approve|reject)$/),
      revision: 1,
    });
    // Every click answers the one recorded.
    for (const click of clicks) expect(click.body).toEqual(first?.body);
    // A later click changes nothing either.
    const later = await api('POST', `/notifications/${item.id}/interact`, token, {});
    expect(later.body).toEqual(first?.body);
    for (const client of [phone, laptop]) {
      expect(
        await client.next(
          (frame: Frame) => frame.type === 'notification.state' && frame.change === 'interacted',
        ),
      ).toEqual({ type: 'notification.state', change: 'interacted', ...first?.body });
    }
    // Read by the click: the count follows exactly.
    expect(await unread(token)).toBe(1);
    const unreadIds = (await api('GET', '/notifications?state=unread', token)).body.items.map(
      (listed: { id: string }) => listed.id,
    );
    expect(unreadIds).not.toContain(item.id);

    const [event] = await eventually(
      () => eventsAbout(item.id),
      (events) => events.length > 0,
      60_000,
    );
    expect(event).toMatchObject({
      type: 'notify.notification.interacted',
      data: {
        event_type: 'notify.notification.interacted',
        source: 'notify',
        data: {
          notification_id: item.notification_id,
          receiver_id: item.id,
          user_id: bea,
          action_id: first?.body.interacted_action,
          event_type: 'approvals.requested',
          category: null,
          interacted_at: first?.body.interacted_at,
        },
      },
    });
    // Once on the bus, not only once at the webhook (which would drop a repeat of the same id).
    await fanoutDone();
    expect(runtime.standIns.eventBridge.counters().putEvents - published).toBe(1);
    expect(eventsAbout(item.id)).toHaveLength(1);
    phone.assertDocumentedFrames();
    laptop.assertDocumentedFrames();
    await Promise.all([phone.close(), laptop.close()]);
  }, 120_000);

  it('publishes the click of a request that failed after recording it, once, and a retry answers the click', async () => {
    const cal = user('cal');
    const token = await runtime.mintUserToken(cal);
    const item = await notifyWithActions(cal, token);
    await fanoutDone();
    const published = runtime.standIns.eventBridge.counters().putEvents;
    // The store fails after the click is recorded: the frame's lookup of the user's connections.
    failing = (operation, request) =>
      operation === 'Query' && String(request.TableName).endsWith('wsChannels');
    const failed = await api('POST', `/notifications/${item.id}/interact`, token, { action_id: 'reject' });
    failing = undefined;
    expect(failed.status).toBe(503);
    const [event] = await eventually(
      () => eventsAbout(item.id),
      (events) => events.length > 0,
      60_000,
    );
    expect(event?.data.data).toMatchObject({ receiver_id: item.id, action_id: 'reject' });
    const retried = await api('POST', `/notifications/${item.id}/interact`, token, { action_id: 'reject' });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      interacted_action: 'reject',
      interacted_at: event?.data.data.interacted_at,
    });
    await fanoutDone();
    expect(runtime.standIns.eventBridge.counters().putEvents - published).toBe(1);
    expect(eventsAbout(item.id)).toHaveLength(1);
  }, 120_000);

  it('records a click on the item itself with a null action', async () => {
    const dan = user('dan');
    const token = await runtime.mintUserToken(dan);
    const item = await notifyWithActions(dan, token);
    const click = await api('POST', `/notifications/${item.id}/interact`, token);
    expect(click.status).toBe(200);
    expect(click.body).toMatchObject({ interacted_at: expect.any(String), interacted_action: null });
    const [event] = await eventually(
      () => eventsAbout(item.id),
      (events) => events.length > 0,
      60_000,
    );
    expect(event?.data.data).toMatchObject({ action_id: null, receiver_id: item.id });
  }, 90_000);

  it('answers 400 naming action_id for an id not among the buttons, and 404 for an item not the caller’s or expired', async () => {
    const eva = user('eva');
    const fay = user('fay');
    const [evaToken, fayToken] = await Promise.all([runtime.mintUserToken(eva), runtime.mintUserToken(fay)]);
    const item = await notifyWithActions(eva, evaToken);
    const plain = await api('POST', '/notifications', service, {
      event_type: 'plain',
      title: 'no buttons',
      recipient_ids: [eva],
    });
    expect(plain.status).toBe(202);
    const plainItem = (await api('GET', '/notifications', evaToken)).body.items.find(
      (listed: { notification_id: string }) => listed.notification_id === plain.body.id,
    );
    for (const [id, body] of [
      [item.id, { action_id: 'maybe' }],
      [plainItem.id, { action_id: 'approve' }],
      [item.id, { action_id: '' }],
      [item.id, { action_id: 'approve', extra: true }],
    ] as const) {
      const answer = await api('POST', `/notifications/${id}/interact`, evaToken, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.details[0].field).toBe('extra' in body ? 'extra' : 'action_id');
    }
    // Nothing was recorded by the refused clicks.
    expect((await api('GET', '/notifications', evaToken)).body.items[1]).toMatchObject({
      id: item.id,
      interacted_at: null,
      read_at: null,
    });
    expect((await api('POST', `/notifications/${item.id}/interact`, fayToken, {})).status).toBe(404);
    expect(
      (await api('POST', '/notifications/01a204c7-0000-7000-8000-000000000000/interact', fayToken)).status,
    ).toBe(404);
    const expiresAt = Date.now() + 2000;
    const brief = await notifyWithActions(fay, fayToken, { expires_at: new Date(expiresAt).toISOString() });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt + 100 - Date.now())));
    expect((await api('POST', `/notifications/${brief.id}/interact`, fayToken, {})).status).toBe(404);
  }, 60_000);
});
