import { describe, expect, it } from 'vitest';
import { tokenHashOf } from '../../lambdas/domain/devices/devices';
import { pushIdFor } from '../../lambdas/domain/push/records';
import { mintServiceToken, mintUserToken } from '../../local/dev-auth';
import { apiClient, eventually } from '../support/api';
import { pushCrashRuntime } from '../support/push-crash-runtime';

/**
 * `npm start --data` killed (SIGKILL to the whole process group) while the push worker waits on the provider's
 * answer: the push message is journaled, comes back after the restart, finds the push claimed by its own message
 * id, waits for the dead holder's claim to expire, takes it over and sends again under the same push id. The push
 * is recorded once, delivered, with one attempt; the device got the push once answered (and the cut-off send
 * before it, with the same push id, which docs/push-delivery.md allows); a notification accepted just before the
 * kill is pushed after the restart. The Expo stand-in runs in this process, so what it saw outlives the kills.
 */
const crashable = pushCrashRuntime('push-crash', { NOTIFY_LOCAL_TIME_SCALE: '0.1' });

describe('the runtime killed while a push is being sent', () => {
  it('pushes each accepted notification to the device, recorded once, after the restart', async () => {
    const standIn = await crashable.standIn();
    const start = crashable.start;
    let runtime = await start();
    const port = runtime.port;
    const settings = crashable.devAuth();
    const service = await mintServiceToken(settings, 'push-crash', ['notifications:write']);
    const user = `push-crash-${Date.now()}`;
    const userToken = await mintUserToken(settings, user);
    const api = apiClient(() => runtime?.restUrl ?? '');
    const pushToken = `ExponentPushToken[${user}]`;
    expect((await api('POST', '/devices', userToken, { token: pushToken, platform: 'ios' })).status).toBe(
      201,
    );
    const notify = async (title: string) => {
      const created = await api('POST', '/notifications', service, {
        event_type: 'push.crash',
        title,
        recipient_ids: [user],
        channels: ['in_app', 'push'],
      });
      expect(created.status).toBe(202);
      return created.body.id as string;
    };

    // The first send is held unanswered until the kill.
    standIn.failNext({ hang: true });
    const cutOff = await notify('cut off');
    await eventually(
      () => standIn.held().length,
      (count) => count === 1,
      120_000,
    );
    const accepted = await notify('accepted before the kill');
    await runtime.crash();
    runtime = await start(port);

    const ids = [cutOff, accepted];
    const expected = ids.map((id) => pushIdFor(id, tokenHashOf(pushToken)));
    await eventually(
      () => new Set(standIn.received().map((push) => push.push_id)),
      (received) => expected.every((pushId) => received.has(pushId)),
      240_000,
    );
    for (const id of ids) {
      const records = await eventually(
        async () => (await api('GET', `/sent-notifications/${id}/pushes`, service)).body.items,
        (items: { status: string }[] | undefined) => items?.[0]?.status === 'delivered',
        60_000,
      );
      expect(records, runtime.stderr()).toMatchObject([{ status: 'delivered', attempts: 1 }]);
    }
    // The cut-off push answered once; its cut-off send was the same push (same id), not a push of its own.
    const answered = standIn.received().map((push) => push.push_id);
    expect(answered.filter((pushId) => pushId === expected[0])).toHaveLength(1);
    expect(standIn.held().map((push) => push.push_id)).toEqual([expected[0]]);
    const count = answered.length;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(standIn.received()).toHaveLength(count);
  }, 420_000);
});
