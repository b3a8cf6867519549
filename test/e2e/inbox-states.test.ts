/**
 * The feed's item states end to end, over real HTTP and WebSocket on the local runtime: seen, read, archived and
 * snoozed items, the feed's state filters, the unread count with each, bulk changes (with items arriving during
 * the call), and the frames that keep a user's other connections in step (also replayed on reconnect). A snooze
 * wakes up through the scheduler stand-in, at its time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, eventually } from '../support/api';
import { queueIdle } from '../support/queues';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { type Frame, TestClient } from '../support/ws-client';

let runtime: Runtime;
let service: string;
let run = 0;
const user = (name: string) => `${name}-${process.pid}-${run}`;

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = await runtime.mintServiceToken('billing', ['notifications:write']);
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

interface Item {
  readonly id: string;
  readonly title: string;
  readonly read_at: string | null;
  readonly seen_at: string | null;
  readonly archived_at: string | null;
  readonly snoozed_until: string | null;
}

/** Every item of the feed (all pages) in one state (absent: the default feed). */
const feed = async (token: string, state?: string): Promise<Item[]> => {
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const query = [`limit=100`, state ? `state=${state}` : '', cursor ? `cursor=${cursor}` : '']
      .filter(Boolean)
      .join('&');
    const page = await api('GET', `/notifications?${query}`, token);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    items.push(...(page.body.items as Item[]));
    cursor = page.body.next_cursor;
  } while (cursor);
  return items;
};

const titles = (items: readonly Item[]) => items.map((item) => item.title);

const unread = async (token: string) =>
  (await api('GET', '/notifications/unread-count', token)).body.count as number;

/** Notifications to the user, one after the other (newest last); their feed ids, oldest first. */
const notify = async (userId: string, token: string, ...names: string[]): Promise<string[]> => {
  for (const title of names) {
    const created = await api('POST', '/notifications', service, {
      event_type: 'inbox.test',
      title,
      recipient_ids: [userId],
    });
    expect(created.status).toBe(202);
  }
  const items = await feed(token, 'all');
  return names.map((title) => items.find((item) => item.title === title)?.id as string);
};

const connect = async (token: string) => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
  const session = await client.nextOfType('session');
  return { client, session };
};

const stateFrame = (client: TestClient, id: string, change: string, timeoutMs?: number) =>
  client.next(
    (frame: Frame) => frame.type === 'notification.state' && frame.id === id && frame.change === change,
    timeoutMs,
  );

describe('item states', () => {
  it('archives and unarchives: out of the default feed and the count, listed by the filter, in step on every connection', async () => {
    const ann = user('ann');
    const token = await runtime.mintUserToken(ann);
    const [one, two] = await notify(ann, token, 'one', 'two');
    const [phone, laptop] = [await connect(token), await connect(token)];
    expect(await unread(token)).toBe(2);

    const archived = await api('POST', `/notifications/${one}/archive`, token);
    expect(archived.status).toBe(200);
    expect(archived.body).toEqual({
      id: one,
      seen_at: null,
      read_at: null,
      archived_at: expect.any(String),
      snoozed_until: null,
      interacted_at: null,
      interacted_action: null,
      revision: 1,
    });
    for (const { client } of [phone, laptop]) {
      expect(await stateFrame(client, one as string, 'archived')).toEqual({
        type: 'notification.state',
        change: 'archived',
        ...archived.body,
      });
    }
    expect(titles(await feed(token))).toEqual(['two']);
    expect(titles(await feed(token, 'archived'))).toEqual(['one']);
    expect(titles(await feed(token, 'all'))).toEqual(['two', 'one']);
    expect(await unread(token)).toBe(1);
    expect(titles(await feed(token, 'unread'))).toEqual(['two']);

    // Idempotent: the first archived_at stays, and the frame says the same again.
    const again = await api('POST', `/notifications/${one}/archive`, token);
    expect(again.body).toEqual(archived.body);
    expect(await stateFrame(laptop.client, one as string, 'archived')).toMatchObject(archived.body);

    const back = await api('POST', `/notifications/${one}/unarchive`, token);
    // Each change that writes adds 1 to the revision; a repeat writes nothing.
    expect(back.body).toEqual({ ...archived.body, archived_at: null, revision: 2 });
    expect(await stateFrame(phone.client, one as string, 'unarchived')).toMatchObject({ archived_at: null });
    expect(await api('POST', `/notifications/${one}/unarchive`, token)).toMatchObject({
      status: 200,
      body: back.body,
    });
    expect(titles(await feed(token))).toEqual(['two', 'one']);
    expect(await unread(token)).toBe(2);

    // A read item archived and back stays read; a read-all while it is archived leaves it as it was.
    await api('POST', `/notifications/${two}/read`, token);
    await api('POST', `/notifications/${two}/archive`, token);
    await api('POST', `/notifications/${one}/archive`, token);
    expect(await unread(token)).toBe(0);
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 0 });
    await api('POST', `/notifications/${one}/unarchive`, token);
    await api('POST', `/notifications/${two}/unarchive`, token);
    const items = await feed(token);
    expect(items.map((item) => [item.title, item.read_at === null])).toEqual([
      ['two', false],
      ['one', true],
    ]);
    expect(await unread(token)).toBe(1);
    phone.client.assertDocumentedFrames();
    laptop.client.assertDocumentedFrames();
    await Promise.all([phone.client.close(), laptop.client.close()]);
  }, 60_000);

  it('keeps an unread item unread when a read-all covers its id while it is archived', async () => {
    const ben = user('ben');
    const token = await runtime.mintUserToken(ben);
    const [old] = await notify(ben, token, 'old', 'new');
    await api('POST', `/notifications/${old}/archive`, token);
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 1 });
    expect(await unread(token)).toBe(0);
    await api('POST', `/notifications/${old}/unarchive`, token);
    expect(await unread(token)).toBe(1);
    expect(titles(await feed(token, 'unread'))).toEqual(['old']);
    expect(titles(await feed(token, 'read'))).toEqual(['new']);
  });

  it('marks a list of items seen in one call, idempotently, and tells the other connections', async () => {
    const cid = user('cid');
    const token = await runtime.mintUserToken(cid);
    const [a, b, c] = await notify(cid, token, 'a', 'b', 'c');
    const { client } = await connect(token);
    const marked = await api('POST', '/notifications/seen', token, { ids: [a, b] });
    expect(marked.status).toBe(200);
    expect(marked.body.items.map((item: Item) => [item.id, typeof item.seen_at])).toEqual([
      [a, 'string'],
      [b, 'string'],
    ]);
    expect(
      await client.next((frame) => frame.type === 'notification.bulk' && frame.change === 'seen'),
    ).toEqual({
      type: 'notification.bulk',
      change: 'seen',
      ids: [a, b],
      before: null,
      category: null,
      at: expect.any(String),
      updated: 2,
    });
    expect(titles(await feed(token, 'unseen'))).toEqual(['c']);
    // Seen is not read.
    expect(await unread(token)).toBe(3);
    const again = await api('POST', '/notifications/seen', token, { ids: [b, a] });
    expect(again.body.items).toEqual([marked.body.items[1], marked.body.items[0]]);
    expect(await client.next((frame) => frame.type === 'notification.bulk')).toMatchObject({ updated: 0 });
    // One id not the caller's: 404, and nothing is marked.
    const eve = user('eve');
    const eveToken = await runtime.mintUserToken(eve);
    const [foreign] = await notify(eve, eveToken, 'hers');
    expect((await api('POST', '/notifications/seen', token, { ids: [c, foreign] })).status).toBe(404);
    expect((await api('POST', '/notifications/seen', eveToken, { ids: [c] })).status).toBe(404);
    expect(titles(await feed(token, 'unseen'))).toEqual(['c']);
    expect((await api('POST', '/notifications/seen', token, { ids: [] })).status).toBe(400);
    expect((await api('POST', '/notifications/seen', token, { ids: [c, c] })).status).toBe(400);
    client.assertDocumentedFrames();
    await client.close();
  });

  it('sends a read to the other connections, and a read-all as a bulk frame', async () => {
    const dot = user('dot');
    const token = await runtime.mintUserToken(dot);
    const [first] = await notify(dot, token, 'first', 'second');
    const { client } = await connect(token);
    const read = await api('POST', `/notifications/${first}/read`, token);
    expect(await stateFrame(client, first as string, 'read')).toMatchObject({ read_at: read.body.read_at });
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 1 });
    expect(
      await client.next((frame) => frame.type === 'notification.bulk' && frame.change === 'read'),
    ).toMatchObject({ ids: null, before: null, updated: 1 });
    client.assertDocumentedFrames();
    await client.close();
  });

  it('answers 404 for another user’s item, an unknown id and an expired item, on every state change', async () => {
    const fox = user('fox');
    const gil = user('gil');
    const [foxToken, gilToken] = await Promise.all([runtime.mintUserToken(fox), runtime.mintUserToken(gil)]);
    const [his] = await notify(fox, foxToken, 'his');
    const expiresAt = Date.now() + 2500;
    await api('POST', '/notifications', service, {
      event_type: 'inbox.test',
      title: 'brief',
      recipient_ids: [gil],
      expires_at: new Date(expiresAt).toISOString(),
    });
    const [brief] = (await feed(gilToken)).map((item) => item.id);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const changes = (id: string) =>
      [
        ['POST', `/notifications/${id}/read`, undefined],
        ['POST', `/notifications/${id}/archive`, undefined],
        ['POST', `/notifications/${id}/unarchive`, undefined],
        ['POST', `/notifications/${id}/snooze`, { until }],
        ['POST', '/notifications/seen', { ids: [id] }],
        ['POST', '/notifications/bulk', { action: 'archive', before: id }],
      ] as const;
    for (const [method, path, body] of [
      ...changes(his as string),
      ...changes('01a204c7-0000-7000-8000-000000000000'),
      ...changes('not-an-id'),
    ]) {
      const answer = await api(method, path, gilToken, body);
      expect(answer.status, path).toBe(404);
      expect(answer.body.code).toBe('not_found');
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt + 100 - Date.now())));
    for (const [method, path, body] of changes(brief as string)) {
      expect((await api(method, path, gilToken, body)).status, path).toBe(404);
    }
    // Nothing changed on the owner's item.
    expect(await feed(foxToken)).toMatchObject([
      { id: his, read_at: null, archived_at: null, seen_at: null },
    ]);
  });

  it('refuses a snooze time not in the future, over a year ahead or malformed, and an unknown state filter', async () => {
    const hal = user('hal');
    const token = await runtime.mintUserToken(hal);
    const [item] = await notify(hal, token, 'x');
    // Each names the one thing wrong: a malformed time is not also "not in the future".
    for (const [until, issue] of [
      [new Date(Date.now() - 1000).toISOString(), 'must be in the future'],
      ['2999-01-01T00:00:00Z', 'must be at most 365 days ahead'],
      ['tomorrow', 'must be an RFC 3339 timestamp'],
      ['2026-11-28T05:10:60Z', 'must be an RFC 3339 timestamp'],
    ]) {
      const answer = await api('POST', `/notifications/${item}/snooze`, token, { until });
      expect(answer.status, until).toBe(400);
      expect(answer.body.details, until).toEqual([{ field: 'until', issue }]);
    }
    expect((await api('POST', `/notifications/${item}/snooze`, token, {})).status).toBe(400);
    // Past the item's life: it expires, or leaves the feed after its 90 days, before it would wake.
    const expiring = await api('POST', '/notifications', service, {
      event_type: 'inbox.test',
      title: 'brief',
      recipient_ids: [hal],
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(expiring.status).toBe(202);
    const brief = (await feed(token, 'all')).find((listed) => listed.title === 'brief')?.id as string;
    for (const [id, until] of [
      [brief, new Date(Date.now() + 2 * 3_600_000).toISOString()],
      [item, new Date(Date.now() + 100 * 24 * 3_600_000).toISOString()],
    ] as const) {
      const answer = await api('POST', `/notifications/${id}/snooze`, token, { until });
      expect(answer.status, until).toBe(400);
      expect(answer.body.details[0]).toMatchObject({ field: 'until' });
    }
    expect((await api('GET', '/notifications?state=deleted', token)).status).toBe(400);
    expect((await api('POST', '/notifications/bulk', token, { action: 'delete' })).status).toBe(400);
  });
});

describe('state filters', () => {
  it('pages a filtered feed with its cursor while items arrive: nothing missed, nothing twice', async () => {
    const ned = user('ned');
    const token = await runtime.mintUserToken(ned);
    const ids = await notify(ned, token, 'r0', 'u1', 'r2', 'u3', 'r4', 'u5', 'u6');
    for (const index of [0, 2, 4]) await api('POST', `/notifications/${ids[index]}/read`, token);
    const first = await api('GET', '/notifications?state=unread&limit=2', token);
    expect(titles(first.body.items)).toEqual(['u6', 'u5']);
    await notify(ned, token, 'u7', 'u8');
    const second = await api(
      'GET',
      `/notifications?state=unread&limit=2&cursor=${first.body.next_cursor}`,
      token,
    );
    expect(titles(second.body.items)).toEqual(['u3', 'u1']);
    expect(second.body.next_cursor).toBeNull();
    expect(titles(await feed(token, 'read'))).toEqual(['r4', 'r2', 'r0']);
    expect(titles(await feed(token, 'unread'))).toEqual(['u8', 'u7', 'u6', 'u5', 'u3', 'u1']);
  });
});

describe('snooze', () => {
  it('hides an item until its time, then wakes it up unread and unseen, with a frame, through the scheduler', async () => {
    const ida = user('ida');
    const token = await runtime.mintUserToken(ida);
    const [sleepy, other] = await notify(ida, token, 'sleepy', 'other');
    await api('POST', '/notifications/seen', token, { ids: [sleepy] });
    await api('POST', `/notifications/${sleepy}/read`, token);
    await api('POST', `/notifications/${other}/archive`, token);
    const { client } = await connect(token);
    const fired = runtime.standIns.scheduler.counters().fired;
    // 4 s ahead: the checks below run before it wakes, with room for a loaded machine's stalls.
    const until = new Date(Date.now() + 4000).toISOString();
    const snoozed = await api('POST', `/notifications/${sleepy}/snooze`, token, { until });
    expect(snoozed.status).toBe(200);
    expect(snoozed.body).toMatchObject({ id: sleepy, snoozed_until: until, read_at: expect.any(String) });
    expect(await stateFrame(client, sleepy as string, 'snoozed')).toMatchObject({ snoozed_until: until });
    // The same time again changes nothing.
    expect((await api('POST', `/notifications/${sleepy}/snooze`, token, { until })).body).toEqual(
      snoozed.body,
    );
    expect(await feed(token)).toEqual([]);
    expect(titles(await feed(token, 'all'))).toEqual(['other']);
    expect(titles(await feed(token, 'snoozed'))).toEqual(['sleepy']);
    expect(await unread(token)).toBe(0);

    const woken = await stateFrame(client, sleepy as string, 'woken', 40_000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(until));
    expect(runtime.standIns.scheduler.counters().fired).toBeGreaterThan(fired);
    expect(woken).toEqual({
      type: 'notification.state',
      change: 'woken',
      id: sleepy,
      seen_at: null,
      read_at: null,
      archived_at: null,
      snoozed_until: null,
      interacted_at: null,
      interacted_action: null,
      // seen, read, snoozed, woken
      revision: 4,
    });
    expect(titles(await feed(token))).toEqual(['sleepy']);
    expect(titles(await feed(token, 'unseen'))).toEqual(['sleepy']);
    expect(await feed(token, 'snoozed')).toEqual([]);
    expect(await unread(token)).toBe(1);
    client.assertDocumentedFrames();
    await client.close();
  }, 60_000);

  it('moves the wake-up when snoozed again: the earlier one does nothing; a read-all while asleep does not read it', async () => {
    const jay = user('jay');
    const token = await runtime.mintUserToken(jay);
    const [item] = await notify(jay, token, 'later', 'newer');
    const { client } = await connect(token);
    const first = new Date(Date.now() + 3000).toISOString();
    const second = new Date(Date.now() + 7000).toISOString();
    await api('POST', `/notifications/${item}/snooze`, token, { until: first });
    await api('POST', `/notifications/${item}/snooze`, token, { until: second });
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 1 });
    const woken = await stateFrame(client, item as string, 'woken', 40_000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(second));
    expect(woken).toMatchObject({ read_at: null, snoozed_until: null });
    await eventually(
      () => queueIdle('fanout'),
      (idle) => idle,
    );
    // The first wake-up came no earlier than the second time: the first time's found it snoozed until another
    // time and did nothing. A repeat of the frame (a wake-up message delivered twice) states the same.
    for (const repeat of client.frames.filter((frame) => frame.change === 'woken'))
      expect(repeat).toEqual(woken);
    expect(await unread(token)).toBe(1);
    expect((await feed(token, 'unread')).map((listed) => listed.id)).toEqual([item]);
    await client.close();
  }, 60_000);
  it('keeps an item archived after it was snoozed: archiving ends the snooze, and no wake-up brings it back', async () => {
    const kit = user('kit');
    const token = await runtime.mintUserToken(kit);
    const [item] = await notify(kit, token, 'put away');
    const fired = runtime.standIns.scheduler.counters().fired;
    const until = new Date(Date.now() + 2000).toISOString();
    await api('POST', `/notifications/${item}/snooze`, token, { until });
    const archived = await api('POST', `/notifications/${item}/archive`, token);
    expect(archived.body).toMatchObject({ id: item, snoozed_until: null, archived_at: expect.any(String) });
    // The wake-up's schedule fires and its message is handled: it finds no snooze to end.
    await eventually(
      () => runtime.standIns.scheduler.counters().fired,
      (count) => count > fired,
      40_000,
    );
    await eventually(
      () => queueIdle('fanout'),
      (idle) => idle,
    );
    expect(titles(await feed(token, 'archived'))).toEqual(['put away']);
    expect(await feed(token)).toEqual([]);
    expect(await unread(token)).toBe(0);
  }, 60_000);
});

describe('bulk changes', () => {
  it('marks seen, marks read or archives every item, or those older than a given one', async () => {
    const kim = user('kim');
    const token = await runtime.mintUserToken(kim);
    const ids = await notify(kim, token, 'n0', 'n1', 'n2', 'n3', 'n4');
    const { client } = await connect(token);
    const bulk = (body: Record<string, unknown>) => api('POST', '/notifications/bulk', token, body);

    expect((await bulk({ action: 'mark_seen', before: ids[2] })).body).toEqual({ updated: 2 });
    expect(titles(await feed(token, 'unseen'))).toEqual(['n4', 'n3', 'n2']);
    expect(
      await client.next((frame) => frame.type === 'notification.bulk' && frame.change === 'seen'),
    ).toMatchObject({ ids: null, before: ids[2], updated: 2 });
    expect((await bulk({ action: 'mark_seen' })).body).toEqual({ updated: 3 });
    expect((await bulk({ action: 'mark_seen' })).body).toEqual({ updated: 0 });

    expect((await bulk({ action: 'mark_read', before: ids[3] })).body).toEqual({ updated: 3 });
    expect(titles(await feed(token, 'unread'))).toEqual(['n4', 'n3']);
    expect(await unread(token)).toBe(2);
    expect((await bulk({ action: 'mark_read', before: ids[3] })).body).toEqual({ updated: 0 });

    expect((await bulk({ action: 'archive', before: ids[1] })).body).toEqual({ updated: 1 });
    expect(titles(await feed(token))).toEqual(['n4', 'n3', 'n2', 'n1']);
    expect((await bulk({ action: 'archive' })).body).toEqual({ updated: 4 });
    expect(await feed(token)).toEqual([]);
    expect(titles(await feed(token, 'archived'))).toEqual(['n4', 'n3', 'n2', 'n1', 'n0']);
    expect(await unread(token)).toBe(0);
    expect(
      await client.next(
        (frame) => frame.type === 'notification.bulk' && frame.change === 'archived' && frame.before === null,
      ),
    ).toMatchObject({ updated: 4 });
    // Unarchived, the unread ones count again.
    for (const id of ids) await api('POST', `/notifications/${id}/unarchive`, token);
    expect(await unread(token)).toBe(2);
    client.assertDocumentedFrames();
    await client.close();
  });

  it('leaves alone what arrives during the call, and counts exactly what it changed', async () => {
    const lea = user('lea');
    const token = await runtime.mintUserToken(lea);
    const present = await notify(lea, token, ...Array.from({ length: 30 }, (_, index) => `p${index}`));
    expect(present.every(Boolean)).toBe(true);
    for (const action of ['archive', 'mark_seen', 'mark_read'] as const) {
      // Arrivals race the call; the ones posted after it answered must be left alone.
      const racing = Array.from({ length: 6 }, (_, index) =>
        api('POST', '/notifications', service, {
          event_type: 'inbox.test',
          title: `${action}-during-${index}`,
          recipient_ids: [lea],
        }),
      );
      const { body } = await api('POST', '/notifications/bulk', token, { action });
      await Promise.all(racing);
      const after = await notify(lea, token, `${action}-after`);
      const all = await feed(token, 'all');
      const changed = (item: Item) =>
        action === 'archive'
          ? item.archived_at !== null
          : action === 'mark_seen'
            ? item.seen_at !== null
            : item.read_at !== null;
      const during = all.filter((item) => item.title.startsWith(`${action}-during`));
      expect(all.find((item) => item.id === after[0])).toBeDefined();
      expect(changed(all.find((item) => item.id === after[0]) as Item)).toBe(false);
      if (action === 'archive') {
        // Every item present before the call is archived; `updated` counts exactly the items it archived.
        expect(all.filter((item) => present.includes(item.id)).every(changed)).toBe(true);
        expect(body.updated).toBe(30 + during.filter(changed).length);
      }
      // The count always equals the unread items of the default feed.
      expect(await unread(token)).toBe((await feed(token, 'unread')).length);
      expect((await feed(token)).filter((item) => item.read_at === null)).toHaveLength(await unread(token));
    }
  }, 120_000);
});

describe('reconnect', () => {
  it('replays the state changes a connection missed while away', async () => {
    const max = user('max');
    const token = await runtime.mintUserToken(max);
    const [item] = await notify(max, token, 'away', 'kept');
    const first = await connect(token);
    await first.client.close();
    await api('POST', `/notifications/${item}/archive`, token);
    await api('POST', '/notifications/bulk', token, { action: 'mark_seen' });
    const second = await connect(token);
    const ack = await second.client.request({ type: 'reconnect', session_id: first.session.session_id });
    expect(ack).toMatchObject({ type: 'ack', op: 'reconnect', replayed: 2 });
    expect(await stateFrame(second.client, item as string, 'archived')).toMatchObject({ id: item });
    expect(await second.client.nextOfType('notification.bulk')).toMatchObject({ change: 'seen', updated: 1 });
    second.client.assertDocumentedFrames();
    await second.client.close();
  });
});
