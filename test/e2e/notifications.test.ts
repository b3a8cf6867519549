import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envNames } from '../../lib/wiring';
import { apiClient, eventually } from '../support/api';
import { assertDocumentedResponse } from '../support/api-conformance';
import { type DynamoDbCallMatch, receiverCount } from '../support/dynamodb';
import { recordFunctionLogs } from '../support/function-logs';
import { queueIdle } from '../support/queues';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

let runtime: Runtime;
let service: string;
let run = 0;
/** Users unique to this run, so tests never see each other's feeds. */
const user = (name: string) => `${name}-${process.pid}-${run}`;

/** While set, the functions' DynamoDB calls it picks fail (a store outage). */
let outage: DynamoDbCallMatch | undefined;

beforeAll(async () => {
  runtime = await startTestRuntime({
    dynamoDbOutage: (operation, request) => outage?.(operation, request) === true,
  });
  run = Date.now();
  service = await runtime.mintServiceToken('billing', ['notifications:write']);
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

const unread = async (token: string) =>
  (await api('GET', '/notifications/unread-count', token)).body.count as number;

const fanoutQueueIdle = () => queueIdle('fanout');

describe('notifications end to end', () => {
  it('delivers in_app + toast to three users: frames on every open connection, one feed item each', async () => {
    const [alice, bob, carol] = [user('alice'), user('bob'), user('carol')];
    const tokens = Object.fromEntries(
      await Promise.all(
        [alice, bob, carol].map(async (id) => [id, await runtime.mintUserToken(id)] as const),
      ),
    );
    const sockets = await Promise.all([
      TestClient.open(`${runtime.wsUrl}?token=${tokens[alice]}`),
      TestClient.open(`${runtime.wsUrl}?token=${tokens[alice]}`),
      TestClient.open(`${runtime.wsUrl}?token=${tokens[bob]}`),
    ]);
    await Promise.all(sockets.map((socket) => socket.nextOfType('session')));

    const created = await api('POST', '/notifications', service, {
      event_type: 'invoice.paid',
      title: 'Invoice paid',
      body: 'Thank you',
      data: { invoice: 'INV-1' },
      channels: ['in_app', 'toast'],
      recipient_ids: [alice, bob, carol],
    });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({
      id: expect.any(String),
      status: 'accepted',
      recipient_count: 3,
      scheduled_at: null,
    });

    const frames = await Promise.all(sockets.map((socket) => socket.nextOfType('notification')));
    for (const frame of frames) {
      expect(frame).toMatchObject({
        type: 'notification',
        notification_id: created.body.id,
        event_type: 'invoice.paid',
        source: 'billing',
        title: 'Invoice paid',
        body: 'Thank you',
        data: { invoice: 'INV-1' },
        priority: 'normal',
        channel: 'toast',
      });
    }
    for (const id of [alice, bob, carol]) {
      expect(
        await eventually(
          () => unread(tokens[id]!),
          (count) => count === 1,
        ),
      ).toBe(1);
      const feed = await api('GET', '/notifications', tokens[id]!);
      expect(feed.body.items).toHaveLength(1);
      expect(feed.body.items[0]).toMatchObject({ notification_id: created.body.id, read_at: null });
    }
    // The frame's id is the receiver id the feed uses, so a toast can be marked read.
    const aliceItem = (await api('GET', '/notifications', tokens[alice]!)).body.items[0];
    expect(frames[0]?.id).toBe(aliceItem.id);

    const read = await api('POST', `/notifications/${aliceItem.id}/read`, tokens[alice]!);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ id: aliceItem.id, read_at: expect.any(String) });
    expect((await api('POST', `/notifications/${aliceItem.id}/read`, tokens[alice]!)).body).toEqual(
      read.body,
    );
    expect(await unread(tokens[alice]!)).toBe(0);
    expect((await api('POST', `/notifications/${aliceItem.id}/read`, tokens[bob]!)).status).toBe(404);

    expect((await api('POST', '/notifications/read-all', tokens[bob]!)).body).toEqual({ updated: 1 });
    expect(await unread(tokens[bob]!)).toBe(0);
    expect(await unread(tokens[carol]!)).toBe(1);
    for (const socket of sockets) socket.socket.close();
  });

  it('keeps the read_at a read-all gave an item when later read-alls come (found by a user probe)', async () => {
    const reader = user('rhoda');
    const token = await runtime.mintUserToken(reader);
    const create = async (title: string) =>
      (await api('POST', '/notifications', service, { event_type: 'x.y', title, recipient_ids: [reader] }))
        .body.id as string;
    const readAtOf = async (notificationId: string) =>
      (
        (await api('GET', '/notifications', token)).body.items as {
          notification_id: string;
          read_at: string;
        }[]
      ).find((item) => item.notification_id === notificationId)?.read_at;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    const first = await create('first');
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 1 });
    const firstReadAt = await readAtOf(first);
    expect(firstReadAt).toEqual(expect.any(String));
    await sleep(20);
    const second = await create('second');
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 1 });
    const secondReadAt = await readAtOf(second);
    expect(secondReadAt).not.toBe(firstReadAt);
    // The first item keeps the time of the read-all that read it, in the feed and on a repeated read.
    expect(await readAtOf(first)).toBe(firstReadAt);
    const items = (await api('GET', '/notifications', token)).body.items as {
      id: string;
      notification_id: string;
    }[];
    const firstItem = items.find((item) => item.notification_id === first);
    expect((await api('POST', `/notifications/${firstItem?.id}/read`, token)).body).toEqual({
      id: firstItem?.id,
      read_at: firstReadAt,
    });
    // A read-all with nothing to read changes nobody's read_at.
    await sleep(20);
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 0 });
    expect([await readAtOf(first), await readAtOf(second)]).toEqual([firstReadAt, secondReadAt]);
  });

  /** A new user's token, with one unread notification in its feed. */
  const userWithOneUnread = async (name: string): Promise<string> => {
    const reader = user(name);
    await api('POST', '/notifications', service, {
      event_type: 'x.y',
      title: 'one',
      recipient_ids: [reader],
    });
    const token = await runtime.mintUserToken(reader);
    await eventually(
      () => unread(token),
      (count) => count === 1,
    );
    return token;
  };

  /** A request sent as is (`path` may hold a query string); its answer, checked against the API document. */
  const sendAsIs = async (method: string, path: string, token: string, body?: string) => {
    const response = await fetch(`${runtime.httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    assertDocumentedResponse({
      method,
      path: path.split('?')[0] as string,
      status: response.status,
      headers: response.headers,
      text,
    });
    return { status: response.status, body: JSON.parse(text) };
  };

  it('refuses a body on read-all, which read everything whatever the body asked for (found by a user probe)', async () => {
    const token = await userWithOneUnread('bodie');
    for (const body of ['{"before":"2026-01-01T00:00:00Z"}', '{"a":1}', '[1]', 'not json']) {
      const response = await sendAsIs('POST', '/notifications/read-all', token, body);
      expect(response.status, body).toBe(400);
      expect(response.body, body).toMatchObject({
        code: 'validation',
        details: [{ field: '(body)', issue: 'this request takes no body' }],
      });
    }
    expect(await unread(token)).toBe(1);
    // No body, or an empty object (some clients always send one), is a read-all.
    expect((await api('POST', '/notifications/read-all', token, {})).body).toEqual({ updated: 1 });
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 0 });
  });

  it('refuses query parameters on a route that takes none: read-all?before= would read everything', async () => {
    const token = await userWithOneUnread('query');
    for (const [method, path, field] of [
      ['POST', '/notifications/read-all?before=2026-01-01T00:00:00Z', 'before'],
      ['GET', '/notifications/unread-count?since=2026-01-01T00:00:00Z', 'since'],
    ] as const) {
      const response = await sendAsIs(method, path, token);
      expect(response.status, path).toBe(400);
      expect(response.body, path).toMatchObject({
        code: 'validation',
        details: [{ field, issue: 'unknown field' }],
      });
    }
    expect(await unread(token)).toBe(1);
  });

  it('a small audience is delivered when the 202 arrives: feed items stored, frames sent, once each', async () => {
    const [erin, finn] = [user('erin'), user('finn')];
    const tokens = [await runtime.mintUserToken(erin), await runtime.mintUserToken(finn)] as const;
    const socket = await TestClient.open(`${runtime.wsUrl}?token=${tokens[0]}`);
    await socket.nextOfType('session');
    const created = await api('POST', '/notifications', service, {
      event_type: 'invoice.paid',
      title: 'Invoice paid',
      channels: ['in_app', 'toast'],
      recipient_ids: [erin, finn],
    });
    expect(created.status).toBe(202);
    // No waiting: the request delivered before it answered (docs/notifications.md, "Flow").
    expect(await unread(tokens[0])).toBe(1);
    expect(await unread(tokens[1])).toBe(1);
    expect(await fanoutQueueIdle()).toBe(true);
    await socket.next((frame) => frame.notification_id === created.body.id);
    // Frames on one connection arrive in order: once the next one is here, no second copy is on its way.
    const marker = await api('POST', '/notifications', service, {
      event_type: 'test.marker',
      title: 'marker',
      channels: ['realtime'],
      recipient_ids: [erin],
    });
    await socket.next((frame) => frame.notification_id === marker.body.id);
    expect(socket.frames.filter((frame) => frame.notification_id === created.body.id)).toEqual([]);
    socket.socket.close();
  });

  it('stores and sends data whose keys are named like the properties of every object (found by a user probe)', async () => {
    const gus = user('gus');
    const token = await runtime.mintUserToken(gus);
    const socket = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
    await socket.nextOfType('session');
    // Each of these made the SDK's marshaller refuse the item (a 500) or store it as another type.
    const data = JSON.parse(
      '{"constructor": {"name": "String"}, "toString": "x", "a": [{"constructor": 1}], "b": {"constructor": {"name": "Set"}}}',
    );
    const created = await api('POST', '/notifications', service, {
      event_type: 'odd.keys',
      title: 'Odd keys',
      channels: ['in_app', 'toast'],
      recipient_ids: [gus],
      data,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const frame = await socket.next((sent) => sent.notification_id === created.body.id);
    expect(frame.data).toEqual(data);
    const feed = await api('GET', '/notifications', token);
    expect(feed.body.items[0].data).toEqual(data);
    socket.socket.close();
  });

  it('reaches every one of 1,000 recipients exactly once, and a redelivered message changes nothing', async () => {
    const recipients = Array.from({ length: 1000 }, (_, index) => user(`crowd${index}`));
    const created = await api('POST', '/notifications', service, {
      event_type: 'system.maintenance',
      title: 'Maintenance tonight',
      recipient_ids: recipients,
    });
    expect(created.status).toBe(202);
    expect(created.body.recipient_count).toBe(1000);
    await eventually(fanoutQueueIdle, (idle) => idle, 60_000);
    await eventually(
      () => receiverCount(recipients.at(-1)!),
      (count) => count === 1,
    );
    const counts = await Promise.all(recipients.map(receiverCount));
    expect(counts.filter((count) => count !== 1)).toEqual([]);

    // Redeliver a chunk and the plan as SQS would after a lost acknowledgement.
    const sqs = new SQSClient({});
    const queueUrl = process.env[envNames.queueUrl('fanout')];
    for (const body of [
      { kind: 'chunk', notification_id: created.body.id, recipients: recipients.slice(0, 100) },
      { kind: 'plan', notification_id: created.body.id },
    ]) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body) }));
    }
    sqs.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await eventually(fanoutQueueIdle, (idle) => idle, 60_000);
    const after = await Promise.all(recipients.map(receiverCount));
    expect(after.filter((count) => count !== 1)).toEqual([]);
    expect(await unread(await runtime.mintUserToken(recipients[0]!))).toBe(1);
  }, 120_000);

  it('lets a user notify itself but nobody else', async () => {
    const dave = user('dave');
    const token = await runtime.mintUserToken(dave);
    const own = await api('POST', '/notifications', token, {
      event_type: 'note.self',
      title: 'Remember',
      recipient_ids: [dave],
    });
    expect(own.status).toBe(202);
    const other = await api('POST', '/notifications', token, {
      event_type: 'note.self',
      title: 'Hi',
      recipient_ids: [dave, user('erin')],
    });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('forbidden');
    const unscoped = await runtime.mintServiceToken('reports', ['events:publish']);
    expect(
      (
        await api('POST', '/notifications', unscoped, {
          event_type: 'a.b',
          title: 't',
          recipient_ids: [dave],
        })
      ).status,
    ).toBe(403);
    const source = (
      await eventually(
        () => api('GET', '/notifications', token),
        (feed) => feed.body.items.length === 1,
      )
    ).body.items[0].source;
    expect(source).toBe('user');
  });

  it('lets a user notify itself without naming itself; a service must name its recipients', async () => {
    const grace = user('grace');
    const token = await runtime.mintUserToken(grace);
    const own = await api('POST', '/notifications', token, {
      event_type: 'note.self',
      title: 'Water plants',
    });
    expect(own.status).toBe(202);
    expect(own.body.recipient_count).toBe(1);
    const feed = await eventually(
      () => api('GET', '/notifications', token),
      (page) => page.body.items.length === 1,
    );
    expect(feed.body.items[0]).toMatchObject({ notification_id: own.body.id, title: 'Water plants' });
    const unnamed = await api('POST', '/notifications', service, { event_type: 'a.b', title: 'To whom?' });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.details).toEqual([{ field: 'recipient_ids', issue: 'required' }]);
  });

  it('returns the first response for a repeated Idempotency-Key and 409 for a different body', async () => {
    const frank = user('frank');
    const body = { event_type: 'order.shipped', title: 'Shipped', recipient_ids: [frank] };
    const key = { 'idempotency-key': `order-${run}` };
    const first = await api('POST', '/notifications', service, body, key);
    const second = await api('POST', '/notifications', service, body, key);
    expect(second.status).toBe(202);
    // The identical body: same keys in the same order (a client may compare or sign the bytes).
    expect(JSON.stringify(second.body)).toBe(JSON.stringify(first.body));
    const different = await api('POST', '/notifications', service, { ...body, title: 'Changed' }, key);
    expect(different.status).toBe(409);
    expect(different.body.code).toBe('conflict');
    await eventually(fanoutQueueIdle, (idle) => idle);
    expect(await receiverCount(frank)).toBe(1);
  });

  it('answers 503 to a retry with the same Idempotency-Key while the store fails, and the next retry is accepted once', async () => {
    const ivan = user('ivan');
    const body = { event_type: 'order.shipped', title: 'Shipped', recipient_ids: [ivan] };
    const key = { 'idempotency-key': `outage-${run}` };
    const table = (id: string) => runtime.env[envNames.tableName(id)];
    const writesTo =
      (operation: string, tableId: string): DynamoDbCallMatch =>
      (called, request) =>
        called === operation && request.TableName === table(tableId);
    const logs = recordFunctionLogs();
    try {
      // The first attempt reserves the key, cannot store the notification and releases the key.
      outage = writesTo('PutItem', 'notifications');
      const first = await api('POST', '/notifications', service, body, key);
      expect(first.status).toBe(503);
      expect(first.body.code).toBe('unavailable');
      // The retry finds the key free and takes it over: that write fails too.
      outage = writesTo('UpdateItem', 'idempotency');
      const retry = await api('POST', '/notifications', service, body, key);
      expect(retry.status).toBe(503);
      expect(retry.body.code).toBe('unavailable');
      // Each failure is logged with its request id and the store's error.
      for (const failed of [first, retry]) {
        expect(logs.at('ERROR')).toContainEqual(
          expect.objectContaining({
            message: 'request failed',
            route: 'notifications.create',
            request_id: failed.body.request_id,
            error: expect.objectContaining({ message: 'Injected outage (test)' }),
          }),
        );
      }
    } finally {
      outage = undefined;
    }
    const accepted = await api('POST', '/notifications', service, body, key);
    expect(accepted.status).toBe(202);
    expect(await api('POST', '/notifications', service, body, key)).toEqual(accepted);
    await eventually(fanoutQueueIdle, (idle) => idle);
    expect(await receiverCount(ivan)).toBe(1);
  });

  it('schedules a notification: not delivered before scheduled_at, delivered once after', async () => {
    const gina = user('gina');
    const token = await runtime.mintUserToken(gina);
    // 4 s ahead: the request still finds it more than 1 s ahead (else it delivers at once), and the check below
    // runs before it fires, with room for a loaded machine's stalls (2.5 s left 1.5 s for the POST and a GET).
    const scheduledAt = new Date(Date.now() + 4000);
    const created = await api('POST', '/notifications', service, {
      event_type: 'reminder.due',
      title: 'Reminder',
      recipient_ids: [gina],
      scheduled_at: scheduledAt.toISOString(),
    });
    expect(created.status).toBe(202);
    expect(created.body.status).toBe('scheduled');
    expect(Date.parse(created.body.scheduled_at)).toBe(scheduledAt.getTime());
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await unread(token)).toBe(0);
    expect(
      await eventually(
        () => unread(token),
        (count) => count === 1,
        60_000,
      ),
    ).toBe(1);
    expect(Date.now()).toBeGreaterThanOrEqual(scheduledAt.getTime());
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await receiverCount(gina)).toBe(1);
  }, 90_000);

  it('does not list, count or deliver an expired notification', async () => {
    const hank = user('hank');
    const token = await runtime.mintUserToken(hank);
    // 3 s: room for the POST and the first count on a loaded machine (1.2 s was not), then wait until it passed.
    const expiresAt = Date.now() + 3000;
    await api('POST', '/notifications', service, {
      event_type: 'flash.sale',
      title: 'Ends soon',
      recipient_ids: [hank],
      expires_at: new Date(expiresAt).toISOString(),
    });
    expect(await unread(token)).toBe(1); // delivered by the request itself
    // One that expires before its schedule fires: scheduled at .200 of a second at least 3 s ahead (so the
    // request still schedules it), `at()` rounds up to the next whole second, and it expires at .700, 300 ms
    // before that. (Scheduled 1.5 s and expiring 1.6 s ahead, the schedule fired inside the 100 ms before the
    // expiry about one time in ten, and the notification was delivered.)
    const second = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    const fired = runtime.standIns.scheduler.counters().fired;
    const late = await api('POST', '/notifications', service, {
      event_type: 'flash.sale',
      title: 'Too late',
      recipient_ids: [hank],
      scheduled_at: new Date(second + 200).toISOString(),
      expires_at: new Date(second + 700).toISOString(),
    });
    expect(late.body.status).toBe('scheduled');
    await new Promise((resolve) => setTimeout(resolve, expiresAt + 100 - Date.now()));
    expect(await unread(token)).toBe(0);
    expect((await api('GET', '/notifications', token)).body.items).toEqual([]);
    // The schedule fired (its message is on `fanout` then) and the message was handled.
    await eventually(
      () => runtime.standIns.scheduler.counters().fired,
      (count) => count > fired,
      60_000,
    );
    await eventually(fanoutQueueIdle, (idle) => idle, 60_000);
    expect(await receiverCount(hank)).toBe(1); // only the first one, which expired but is not yet deleted by TTL
  }, 150_000);

  it('pages the feed with an opaque cursor and refuses a tampered one', async () => {
    const ivy = user('ivy');
    const token = await runtime.mintUserToken(ivy);
    for (let index = 0; index < 3; index += 1) {
      await api('POST', '/notifications', service, {
        event_type: 'x.y',
        title: `n${index}`,
        recipient_ids: [ivy],
      });
      await eventually(
        () => unread(token),
        (count) => count === index + 1,
      );
    }
    const first = await api('GET', '/notifications?limit=2', token);
    expect(first.body.items.map((item: { title: string }) => item.title)).toEqual(['n2', 'n1']);
    const second = await api('GET', `/notifications?limit=2&cursor=${first.body.next_cursor}`, token);
    expect(second.body).toMatchObject({ items: [{ title: 'n0' }], next_cursor: null });
    const tampered = await api('GET', `/notifications?cursor=${first.body.next_cursor}x`, token);
    expect(tampered.status).toBe(400);
    expect((await api('GET', '/notifications?limit=101', token)).status).toBe(400);
    // One clear issue for anything that is not one integer in range (it read "expected number, received NaN"). A
    // repeated parameter, which reaches the function joined by a comma (API Gateway's payload 2.0), says so.
    expect((await api('GET', '/notifications?limit=1&limit=2', token)).body.details).toEqual([
      { field: 'limit', issue: 'given more than once' },
    ]);
    for (const query of ['limit=abc', 'limit=0', 'limit=2.5', 'limit=101']) {
      const refused = await api('GET', `/notifications?${query}`, token);
      expect(refused.status, query).toBe(400);
      expect(refused.body.details, query).toEqual([
        { field: 'limit', issue: 'must be one integer from 1 to 100' },
      ]);
    }
  });
});
