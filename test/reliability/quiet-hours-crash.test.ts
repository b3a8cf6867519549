import { describe, expect, it } from 'vitest';
import { tokenHashOf } from '../../lambdas/domain/devices/devices';
import { pushIdFor } from '../../lambdas/domain/push/records';
import { mintServiceToken, mintUserToken } from '../../local/dev-auth';
import { apiClient, eventually } from '../support/api';
import { pushCrashRuntime } from '../support/push-crash-runtime';

/**
 * `npm start --data` killed (SIGKILL to the whole process group) while a recipient's pushes are held by its quiet
 * hours: one notification delivered by the accepting request (its release schedule made before the 202), one
 * through the fan-out queue (11 recipients), sent just before the kill. After the restart each held push reaches
 * the device once, after the window's end, and no more follow. The Expo stand-in runs in this process, so what it
 * saw outlives the kill.
 */
const crashable = pushCrashRuntime('quiet-crash');

const hhmm = (instant: number) => new Date(instant).toISOString().slice(11, 16);
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

describe('the runtime killed while pushes are held by quiet hours', () => {
  it('sends each held push once, after the window ends, following a restart', async () => {
    const standIn = await crashable.standIn();
    const start = crashable.start;
    let runtime = await start();
    const port = runtime.port;
    const settings = crashable.devAuth();
    const service = await mintServiceToken(settings, 'quiet-crash', ['notifications:write']);
    const user = `quiet-crash-${Date.now()}`;
    const userToken = await mintUserToken(settings, user);
    const api = apiClient(() => runtime?.restUrl ?? '');
    const pushToken = `ExponentPushToken[${user}]`;
    expect((await api('POST', '/devices', userToken, { token: pushToken, platform: 'ios' })).status).toBe(
      201,
    );
    // Quiet from this minute (UTC) to the first minute boundary at least 30 s away: the window outlasts the kill
    // and the restart (a release that fell due while the runtime was down would fire as it starts).
    const now = Date.now();
    const ends = Math.ceil((now + 30_000) / 60_000) * 60_000;
    const put = await api('PUT', '/preferences', userToken, {
      rules: [],
      time_zone: 'UTC',
      quiet_hours: {
        windows: [{ days: [WEEKDAYS[new Date(now).getUTCDay()]], start: hhmm(now), end: hhmm(ends) }],
      },
    });
    expect(put.status).toBe(200);
    const notify = async (recipients: string[]) => {
      const created = await api('POST', '/notifications', service, {
        event_type: 'quiet.crash',
        title: 'Held',
        recipient_ids: recipients,
        channels: ['in_app', 'push'],
      });
      expect(created.status).toBe(202);
      return created.body.id as string;
    };
    const inRequest = await notify([user]);
    const others = Array.from({ length: 10 }, (_, index) => `${user}-other-${index}`);
    const throughQueue = await notify([user, ...others]);
    await runtime.crash();
    expect(Date.now()).toBeLessThan(ends); // killed inside the window
    runtime = await start(port);

    const expected = [inRequest, throughQueue].map((id) => pushIdFor(id, tokenHashOf(pushToken)));
    await eventually(
      () => new Set(standIn.received().map((push) => push.push_id)),
      (received) => expected.every((pushId) => received.has(pushId)),
      300_000,
    );
    const received = standIn.received();
    // Held until the window ended (the request's push could otherwise have gone before the kill).
    const first = received.find((push) => push.push_id === expected[0]);
    expect(Date.parse(first?.at ?? '')).toBeGreaterThanOrEqual(ends - 1000);
    for (const id of [inRequest, throughQueue]) {
      const records = await eventually(
        async () => (await api('GET', `/sent-notifications/${id}/pushes`, service)).body.items,
        (items: { status: string }[] | undefined) => items?.[0]?.status === 'delivered',
        60_000,
      );
      expect(records, runtime.stderr()).toMatchObject([{ status: 'delivered', attempts: 1 }]);
    }
    const count = received.length;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(standIn.received()).toHaveLength(count);
    for (const pushId of expected) {
      expect(standIn.received().filter((push) => push.push_id === pushId)).toHaveLength(1);
    }
  }, 480_000);
});
