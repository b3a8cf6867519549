import {
  ApiGatewayManagementApiClient,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tokenHashOf } from '../../../lambdas/domain/devices/devices';
import { pushIdFor } from '../../../lambdas/domain/push/records';
import { eventually } from '../../support/api';
import { queueIdle } from '../../support/queues';
import { realtimeRuntime } from '../../support/ws-runtime';

/**
 * The accepting request delivers a few named recipients itself and answers at the end of its time budget (6 s)
 * whatever is still in flight; on AWS its function may then be frozen or stopped, so nothing it decides after the
 * answer may be needed. Here the request's post of a recipient's `notification` frame hangs past the budget (a
 * slow `@connections` call, held until the test lets it go): the recipient's push must still reach the provider's
 * stand-in, exactly once, also after the held post completes.
 */
const realtime = realtimeRuntime();

vi.setConfig({ testTimeout: 120_000 });

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Holds the first `@connections` post of a frame whose JSON includes `marker` until `release()`; later posts of
 * such a frame go through, or are answered 410 Gone (`later: 'gone'`: the connection went away meanwhile).
 */
const holdFirstPost = (marker: string, later: 'send' | 'gone' = 'send') => {
  const send = ApiGatewayManagementApiClient.prototype.send;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let posts = 0;
  vi.spyOn(ApiGatewayManagementApiClient.prototype, 'send').mockImplementation(function (
    this: ApiGatewayManagementApiClient,
    command: unknown,
    ...rest: unknown[]
  ) {
    const call = () => (send as (...args: unknown[]) => Promise<unknown>).call(this, command, ...rest);
    if (
      command instanceof PostToConnectionCommand &&
      Buffer.from(command.input.Data as Uint8Array)
        .toString('utf8')
        .includes(marker)
    ) {
      posts += 1;
      if (posts === 1) return held.then(call);
      if (later === 'gone') {
        return Promise.reject(
          new GoneException({
            message: 'the connection is gone (injected)',
            $metadata: { httpStatusCode: 410 },
          }),
        );
      }
    }
    return call();
  } as typeof send);
  return { release: () => release(), posts: () => posts };
};

/** A connected user with one FCM device; its push id for a notification. */
const connectedUserWithDevice = async (name: string) => {
  const userId = `${name}-${realtime.run}`;
  const token = await realtime.runtime.mintUserToken(userId);
  const fcmToken = `fcm-${userId}`;
  expect(
    (await realtime.api('POST', '/devices', token, { token: fcmToken, platform: 'android' })).status,
  ).toBe(201);
  const { client } = await realtime.connectAs(userId);
  return { userId, fcmToken, client };
};

const fcmPushesTo = (token: string) =>
  (realtime.runtime.standIns.push.find((standIn) => standIn.provider === 'fcm')?.received() ?? []).filter(
    (push) => push.token === token,
  );

const notify = async (recipient: string, title: string, push?: Record<string, unknown>) => {
  const service = await realtime.runtime.mintServiceToken('crm', ['notifications:write']);
  const answer = await realtime.api('POST', '/notifications', service, {
    event_type: 'order.shipped',
    title,
    recipient_ids: [recipient],
    channels: ['in_app', 'toast', 'push'],
    ...(push ? { push } : {}),
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
};

/** Once Lambda's asynchronous queues and the push queue hold nothing more: every hand-off has been handled. */
const settled = () =>
  eventually(
    async () =>
      realtime.runtime.standIns.lambda.asyncBacklog() === 0 &&
      (await queueIdle('fanout')) &&
      (await queueIdle('push')),
    Boolean,
    60_000,
  );

describe('a recipient whose frames are in flight when the request’s budget ends', () => {
  it('`push.when: always`: the push is handed over before the frames, and reaches the device once', async () => {
    const title = `Shipped (held frame) ${realtime.run}`;
    const held = holdFirstPost(title);
    const user = await connectedUserWithDevice('budget-always');
    const id = await notify(user.userId, title);
    // Answered at the budget with the frame still held: the push does not wait for it.
    expect(held.posts()).toBe(1);
    const pushId = pushIdFor(id, tokenHashOf(user.fcmToken));
    await eventually(
      async () => fcmPushesTo(user.fcmToken).map((push) => push.push_id),
      (ids) => ids.length > 0,
      60_000,
    );
    // The held post completes: the request's delivery ends and hands the push over again, which sends nothing.
    held.release();
    await user.client.nextOfType('notification', 30_000);
    await settled();
    expect(fcmPushesTo(user.fcmToken).map((push) => push.push_id)).toEqual([pushId]);
  });

  it('`push.when: offline`: the recipient goes to the fan-out queue, whose frames decide the push', async () => {
    const title = `Shipped offline (held frame) ${realtime.run}`;
    // The fan-out worker's post of the frame finds the connection gone: no connection received it.
    const held = holdFirstPost(title, 'gone');
    const user = await connectedUserWithDevice('budget-offline');
    const id = await notify(user.userId, title, { when: 'offline' });
    const pushId = pushIdFor(id, tokenHashOf(user.fcmToken));
    await eventually(
      async () => fcmPushesTo(user.fcmToken).map((push) => push.push_id),
      (ids) => ids.length > 0,
      60_000,
    );
    // Posted again by the fan-out worker (refused there), besides the held post of the request.
    expect(held.posts()).toBe(2);
    held.release();
    await settled();
    expect(fcmPushesTo(user.fcmToken).map((push) => push.push_id)).toEqual([pushId]);
  });
});
