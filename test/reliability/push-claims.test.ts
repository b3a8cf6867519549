import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pushSettingName } from '../../common/env';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { tokenHashOf } from '../../lambdas/domain/devices/devices';
import { pushIdFor, pushRecordKey, pushRetentionTtl } from '../../lambdas/domain/push/records';
import { newSeed } from '../../local/delivery';
import { type ExpoStandIn, startExpoStandIn } from '../../local/push/expo-stand-in';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { apiClient, eventually } from '../support/api';
import { queueIdle } from '../support/queues';
import { copiesOnQueue } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';

/**
 * Exactly one push per notification × device when SQS hands one push message to two consumers AT ONCE (both
 * copies carry the same message id: every other receive of `push` gets one here), and when a worker died holding a
 * push: its claim is taken over once expired (the push goes out once), never while its holder may still run.
 */
const COPY_ODDS = 0.5;

let runtime: Runtime;
let expo: ExpoStandIn;
let service: string;
const previousTimeScale = process.env[TIME_SCALE_ENV];
const seed = Number(process.env.RELIABILITY_SEED ?? newSeed());
const run = Date.now();

vi.setConfig({ testTimeout: 180_000 });

beforeAll(async () => {
  // A copy that finds the push held by the other returns after the visibility timeout (180 s): 9 s here.
  process.env[TIME_SCALE_ENV] = '0.05';
  expo = await startExpoStandIn();
  runtime = await startTestRuntime({
    delivery: copiesOnQueue(seed, 'push', COPY_ODDS),
    env: { [pushSettingName('EXPO_URL')]: expo.url },
  });
  service = await runtime.mintServiceToken('billing', ['notifications:write']);
});
afterAll(async () => {
  await runtime?.stop();
  await expo?.close();
  if (previousTimeScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = previousTimeScale;
});

const api = apiClient(() => runtime.httpUrl);

/** A user with `count` Expo devices: its id and their push tokens. */
const userWithDevices = async (name: string, count: number) => {
  const token = await runtime.mintUserToken(name);
  const pushTokens = Array.from({ length: count }, (_, index) => `ExponentPushToken[${name}-${index}]`);
  for (const pushToken of pushTokens) {
    expect((await api('POST', '/devices', token, { token: pushToken, platform: 'android' })).status).toBe(
      201,
    );
  }
  return { id: name, pushTokens };
};

const notify = async (recipients: string[], push?: Record<string, unknown>) => {
  const created = await api('POST', '/notifications', service, {
    event_type: 'billing.invoice_ready',
    title: 'Invoice ready',
    recipient_ids: recipients,
    channels: ['in_app', 'push'],
    ...(push ? { push } : {}),
  });
  expect(created.status).toBe(202);
  return created.body.id as string;
};

const pushIdsTo = (pushToken: string) =>
  expo
    .received()
    .filter((push) => push.token === pushToken)
    .map((push) => push.push_id);

describe('concurrent copies of one push message', () => {
  it('push each device once per notification', async () => {
    // More than the 10 recipients a request delivers itself: the pushes are handed over by fan-out chunks too.
    const users = await Promise.all(
      Array.from({ length: 12 }, (_, index) => userWithDevices(`copies${index}-${process.pid}-${run}`, 2)),
    );
    const ids: string[] = [];
    for (let round = 0; round < 3; round += 1) ids.push(await notify(users.map((user) => user.id)));
    const devices = users.flatMap((user) => user.pushTokens);
    await eventually(
      () => devices.every((device) => pushIdsTo(device).length >= ids.length),
      Boolean,
      150_000,
    );
    await eventually(() => queueIdle('push'), Boolean, 60_000);
    for (const device of devices) {
      const pushIds = pushIdsTo(device);
      expect(pushIds, `${device} (seed ${seed})`).toHaveLength(ids.length);
      expect(new Set(pushIds)).toEqual(new Set(ids.map((id) => pushIdFor(id, tokenHashOf(device)))));
    }
  });
});

describe('a worker that died holding a push', () => {
  /** The push record a holder leaves when it dies between its claim and the outcome. */
  const leaveClaim = async (notificationId: string, userId: string, pushToken: string, expiresAt: number) => {
    const tokenHash = tokenHashOf(pushToken);
    const now = new Date().toISOString();
    await documentClient().send(
      new PutCommand({
        TableName: tableName('pushes'),
        Item: {
          ...pushRecordKey(notificationId, userId),
          user_id: userId,
          devices: {
            [tokenHash]: {
              provider: 'expo',
              app_id: null,
              status: 'sending',
              attempts: 1,
              claimed_by: 'a-message-whose-worker-died',
              updated_at: now,
            },
          },
          claimed_by: 'a-message-whose-worker-died',
          claim_expires_at: expiresAt,
          created_at: now,
          updated_at: now,
          ttl: pushRetentionTtl(),
        },
      }),
    );
  };

  it('is taken over once its claim expired (one push), and left alone while its holder may still run', async () => {
    const dead = await userWithDevices(`dead-holder-${process.pid}-${run}`, 1);
    const live = await userWithDevices(`live-holder-${process.pid}-${run}`, 1);
    // The `unread` check (100 s: 5 s here) gives the test time to leave the claims before the worker comes.
    const id = await notify([dead.id, live.id], { when: 'unread', after_secs: 100 });
    const [deadToken] = dead.pushTokens;
    const [liveToken] = live.pushTokens;
    await leaveClaim(id, dead.id, deadToken ?? '', Date.now() - 1000);
    await leaveClaim(id, live.id, liveToken ?? '', Date.now() + 3600_000);
    const records = await eventually(
      async () => (await api('GET', `/sent-notifications/${id}/pushes`, service)).body.items,
      (items: { user_id: string; status: string; attempts: number }[]) =>
        items.some((item) => item.user_id === dead.id && item.status === 'delivered'),
      120_000,
    );
    await eventually(() => queueIdle('push'), Boolean, 60_000);
    expect(pushIdsTo(deadToken ?? '')).toEqual([pushIdFor(id, tokenHashOf(deadToken ?? ''))]);
    expect(pushIdsTo(liveToken ?? '')).toEqual([]);
    const byUser = Object.fromEntries(
      records.map((record: { user_id: string; status: string; attempts: number }) => [
        record.user_id,
        record,
      ]),
    );
    expect(byUser[dead.id]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(byUser[live.id]).toMatchObject({ status: 'sending', attempts: 1 });
  });
});
