import { describe, expect, it, vi } from 'vitest';
import { apiClient, eventually } from '../support/api';
import { deliveryIdle, usePushRuntime } from '../support/push-runtime';
import { TestClient } from '../support/ws-client';

/**
 * Quiet hours and throttles end to end over real HTTP and WebSocket connections: a recipient inside a window gets
 * the feed item at once and its toast and push when the window ends (a window of the current minute, in a zone half
 * an hour off UTC, so it ends within a minute); read meanwhile, nothing follows; urgent passes when the defaults say
 * so. A throttle lets `limit` of a burst of concurrent notifications (sent twice each) through loudly.
 */
// SQS time 10× faster: a message whose handling failed once (a slow DynamoDB Local on a loaded machine) returns after
// 18 s, not the fan-out queue's 180 s, within the test's time. Scheduler's one-time schedules keep real time.
const push = usePushRuntime({ timeScale: '0.1' });

// A window ends at the next minute: up to a minute of waiting, then the release crosses a schedule and two queues.
vi.setConfig({ testTimeout: 150_000 });

const api = apiClient(() => push.runtime.httpUrl);
const service = () => push.runtime.mintServiceToken('quiet', ['notifications:write']);
let seq = 0;

const ZONE = 'Asia/Kolkata'; // UTC+05:30: the window's local times are not UTC's

/** A user with one Expo device and an open connection, kept open across the window by heartbeats. */
const userWithDevice = async (name: string) => {
  const id = `${name}-${push.run}-${++seq}`;
  const token = await push.runtime.mintUserToken(id);
  const pushToken = `ExponentPushToken[${id}]`;
  expect((await api('POST', '/devices', token, { token: pushToken, platform: 'ios' })).status).toBe(201);
  const client = await TestClient.open(`${push.runtime.wsUrl}?token=${token}`);
  await client.nextOfType('session');
  const heartbeat = setInterval(() => client.send({ type: 'heartbeat' }), 15_000);
  const close = () => {
    clearInterval(heartbeat);
    return client.close();
  };
  return { id, token, pushToken, client, close };
};

const localParts = (instant: number) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: ZONE,
      hourCycle: 'h23',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(new Date(instant))
      .map((part) => [part.type, part.value]),
  );
  return { weekday: String(parts.weekday).toLowerCase(), time: `${parts.hour}:${parts.minute}` };
};

/**
 * Quiet hours from this minute to the next, set when at least `leadSecs` of the minute are left (so the
 * notifications sent next fall inside); when the window ends (epoch ms).
 */
const quietThisMinute = async (tokens: readonly string[], leadSecs = 20) => {
  const secondsLeft = () => 60 - new Date().getUTCSeconds();
  if (secondsLeft() < leadSecs)
    await new Promise((resolve) => setTimeout(resolve, secondsLeft() * 1000 + 200));
  const now = Date.now();
  const start = localParts(now);
  const end = localParts(now + 60_000);
  for (const token of tokens) {
    const put = await api('PUT', '/preferences', token, {
      rules: [],
      time_zone: ZONE,
      quiet_hours: { windows: [{ days: [start.weekday], start: start.time, end: end.time }] },
    });
    expect(put.status).toBe(200);
  }
  return Math.ceil((now + 1) / 60_000) * 60_000;
};

const notify = async (body: Record<string, unknown>) => {
  const answer = await api('POST', '/notifications', await service(), {
    event_type: 'quiet.test',
    title: 'Hello',
    channels: ['in_app', 'toast', 'realtime', 'push'],
    ...body,
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
};

const feedOf = async (token: string) =>
  (await api('GET', '/notifications', token)).body.items as { id: string; notification_id: string }[];
const pushesTo = (pushToken: string) => push.pushesTo(pushToken);
const idle = deliveryIdle;

// Side by side: the window test mostly waits for its window's end. The service defaults are one setting of the
// service, so the tests that set them run one after the other.
describe.concurrent('quiet hours', () => {
  it('stores a time zone and windows; refuses unknown zones, bad times and windows without a zone (400)', async () => {
    const token = await push.runtime.mintUserToken(`prefs-${push.run}`);
    const body = {
      rules: [],
      time_zone: 'Europe/Berlin',
      quiet_hours: { windows: [{ days: ['mon', 'tue'], start: '22:00', end: '07:00' }] },
    };
    expect((await api('GET', '/preferences', token)).body).toMatchObject({
      time_zone: null,
      quiet_hours: null,
      defaults: { quiet_hours: { urgent: false, required: false } },
    });
    const put = await api('PUT', '/preferences', token, body);
    expect(put.status).toBe(200);
    expect((await api('GET', '/preferences', token)).body).toMatchObject(body);
    const refused = [
      [{ ...body, time_zone: 'Mars/Olympus' }, 'time_zone'],
      [{ ...body, time_zone: '+01:00' }, 'time_zone'],
      [{ ...body, time_zone: null }, 'time_zone'],
      [
        { ...body, quiet_hours: { windows: [{ days: ['mon'], start: '24:00', end: '07:00' }] } },
        'quiet_hours.windows[0].start',
      ],
      [
        { ...body, quiet_hours: { windows: [{ days: ['mon', 'mon'], start: '22:00', end: '07:00' }] } },
        'quiet_hours.windows[0].days',
      ],
      [
        { ...body, quiet_hours: { windows: [{ days: ['monday'], start: '22:00', end: '07:00' }] } },
        'quiet_hours.windows[0].days[0]',
      ],
      [{ ...body, quiet_hours: { windows: [] } }, 'quiet_hours.windows'],
    ] as const;
    for (const [wrong, field] of refused) {
      const answer = await api('PUT', '/preferences', token, wrong);
      expect(answer.status, JSON.stringify(wrong)).toBe(400);
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    expect((await api('GET', '/preferences', token)).body).toMatchObject(body); // nothing was written
  });

  it('holds push and toast until the window ends, writes the feed item at once; an item read meanwhile gets nothing', async ({
    onTestFailed,
  }) => {
    const started = Date.now();
    const timeline: string[] = [];
    const mark = (what: string) => timeline.push(`${((Date.now() - started) / 1000).toFixed(1)} s ${what}`);
    onTestFailed(() => console.error(`quiet hours timeline:\n${timeline.join('\n')}`));
    const alice = await userWithDevice('alice');
    const bob = await userWithDevice('bob');
    const carol = await userWithDevice('carol'); // no quiet hours
    try {
      mark('users connected');
      const ends = await quietThisMinute([alice.token, bob.token]);
      mark(`quiet hours set, the window ends in ${((ends - Date.now()) / 1000).toFixed(1)} s`);
      const id = await notify({ recipient_ids: [alice.id, bob.id, carol.id] });
      mark('notified');
      // The feed item and the live update (a `realtime` frame: no toast) arrive at once.
      const [aliceItem] = await feedOf(alice.token);
      expect(aliceItem?.notification_id).toBe(id);
      const [bobItem] = await feedOf(bob.token);
      mark('feed read');
      expect(bobItem?.notification_id).toBe(id);
      expect(await alice.client.next((frame) => frame.notification_id === id)).toMatchObject({
        type: 'notification',
        channel: 'realtime',
      });
      expect(await bob.client.next((frame) => frame.notification_id === id)).toMatchObject({
        channel: 'realtime',
      });
      expect(await carol.client.next((frame) => frame.notification_id === id)).toMatchObject({
        channel: 'toast',
      });
      mark('frames arrived');
      // Carol's push went with the delivery; once it is in and the queues are idle, a push to alice would be too.
      await eventually(
        () => pushesTo(carol.pushToken),
        (pushes) => pushes.length === 1,
      );
      mark("carol's push");
      await idle();
      mark('idle');
      if (Date.now() < ends) {
        expect(pushesTo(alice.pushToken)).toHaveLength(0);
        expect(pushesTo(bob.pushToken)).toHaveLength(0);
      }
      // Bob reads his item during the window.
      expect((await api('POST', `/notifications/${bobItem?.id}/read`, bob.token)).status).toBe(200);
      mark('bob read');
      // At the end of the window alice gets the toast (same item id) and one push.
      expect(await alice.client.next((frame) => frame.notification_id === id, 90_000)).toMatchObject({
        type: 'notification',
        id: aliceItem?.id,
        channel: 'toast',
      });
      mark("alice's toast");
      expect(Date.now()).toBeGreaterThanOrEqual(ends - 1000);
      await eventually(
        () => pushesTo(alice.pushToken),
        (pushes) => pushes.length === 1,
        30_000,
      );
      mark("alice's push");
      await idle();
      mark('idle after release');
      expect(pushesTo(alice.pushToken)).toHaveLength(1);
      expect(pushesTo(carol.pushToken)).toHaveLength(1);
      // Bob read it: no toast, no push. A marker after the release shows its frames would have come by now.
      const marker = await notify({ recipient_ids: [bob.id], channels: ['realtime'] });
      await bob.client.next((frame) => frame.notification_id === marker);
      mark('marker arrived');
      await idle();
      mark('idle after marker');
      expect(pushesTo(bob.pushToken)).toHaveLength(0);
      expect(bob.client.frames.filter((frame) => frame.notification_id === id)).toEqual([]);
    } finally {
      await Promise.all([alice, bob, carol].map((user) => user.close()));
    }
  });

  it('a fallback step due in quiet hours is held like any push: sent when the window ends, unless read by then', async () => {
    const dana = await userWithDevice('dana');
    const erin = await userWithDevice('erin');
    try {
      const ends = await quietThisMinute([dana.token, erin.token]);
      const id = await notify({
        recipient_ids: [dana.id, erin.id],
        channels: ['in_app', 'push'],
        fallback: [{ channel: 'push', after_secs: 1 }],
      });
      const [erinItem] = await feedOf(erin.token);
      expect(erinItem?.notification_id).toBe(id);
      // Erin reads it after the step's time, inside the window: the held step finds it read at the release.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect((await api('POST', `/notifications/${erinItem?.id}/read`, erin.token)).status).toBe(200);
      const [push] = await eventually(
        () => pushesTo(dana.pushToken),
        (pushes) => pushes.length === 1,
        90_000,
      );
      expect(Date.parse(push?.at ?? '')).toBeGreaterThanOrEqual(ends - 1000);
      await idle();
      expect(pushesTo(dana.pushToken)).toHaveLength(1);
      expect(pushesTo(erin.pushToken)).toHaveLength(0);
    } finally {
      await Promise.all([dana, erin].map((user) => user.close()));
    }
  });
});

describe.concurrent('service defaults', () => {
  it.sequential('urgent passes at once when the defaults let it; otherwise it is held like the rest', async () => {
    const dave = await userWithDevice('dave');
    const defaults = await service();
    try {
      expect(
        (await api('PUT', '/preferences/defaults', defaults, { rules: [], quiet_hours: { urgent: true } }))
          .body,
      ).toMatchObject({ quiet_hours: { urgent: true, required: false } });
      await quietThisMinute([dave.token], 15);
      const urgent = await notify({ recipient_ids: [dave.id], priority: 'urgent' });
      expect(await dave.client.next((frame) => frame.notification_id === urgent)).toMatchObject({
        channel: 'toast',
      });
      await eventually(
        () => pushesTo(dave.pushToken),
        (pushes) => pushes.length === 1,
      );
    } finally {
      await dave.close();
      await api('PUT', '/preferences/defaults', defaults, { rules: [] });
    }
  });

  it.sequential('a burst of concurrent notifications, each sent twice: `limit` push and toast, the rest feed and realtime only', async () => {
    const erin = await userWithDevice('erin');
    const defaults = await service();
    const family = `burst${push.run}`;
    try {
      const set = await api('PUT', '/preferences/defaults', defaults, {
        rules: [{ event_type: `${family}.*`, throttle: { limit: 2, window_secs: 86_400 } }],
      });
      expect(set.body.rules).toEqual([
        {
          event_type: `${family}.*`,
          channels: {},
          required: false,
          throttle: { limit: 2, window_secs: 86_400 },
        },
      ]);
      // Counted in daily windows from midnight UTC: not across one.
      const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
      if (toMidnight < 120_000) await new Promise((resolve) => setTimeout(resolve, toMidnight + 1000));
      const token = await service();
      const send = (index: number) =>
        api(
          'POST',
          '/notifications',
          token,
          {
            event_type: `${family}.comment`,
            title: `Comment ${index}`,
            recipient_ids: [erin.id],
            channels: ['in_app', 'toast', 'realtime', 'push'],
          },
          { 'idempotency-key': `${family}-${index}` },
        );
      const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => send(index % 6)));
      for (const answer of answers) expect([202, 409]).toContain(answer.status);
      const ids = [...new Set(answers.filter((a) => a.status === 202).map((a) => a.body.id as string))];
      expect(ids).toHaveLength(6);
      const frames = await Promise.all(
        ids.map((id) => erin.client.next((frame) => frame.notification_id === id)),
      );
      expect(frames.filter((frame) => frame.channel === 'toast')).toHaveLength(2);
      expect(frames.filter((frame) => frame.channel === 'realtime')).toHaveLength(4);
      await eventually(
        () => pushesTo(erin.pushToken),
        (pushes) => pushes.length >= 2,
      );
      await idle();
      expect(pushesTo(erin.pushToken)).toHaveLength(2);
      expect((await feedOf(erin.token)).map((item) => item.notification_id).sort()).toEqual([...ids].sort());
    } finally {
      await erin.close();
      await api('PUT', '/preferences/defaults', defaults, { rules: [] });
    }
  });
});
