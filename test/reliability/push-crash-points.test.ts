import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pushSettingName } from '../../common/env';
import { tokenHashOf } from '../../lambdas/domain/devices/devices';
import { pushIdFor, recipientPushKey } from '../../lambdas/domain/push/records';
import { type ExpoStandIn, startExpoStandIn } from '../../local/push/expo-stand-in';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { WebhookReceiver } from '../e2e/webhook-receiver';
import { apiClient, eventually } from '../support/api';
import { queueIdle } from '../support/queues';
import { type Runtime, startTestRuntime } from '../support/runtime';

/**
 * Exactly once per notification × device when the push worker's invocation ends at each dangerous point: after the
 * claim and before the send, after the provider answered and before the outcome is recorded, and in the middle of
 * a prune (recorded but the device not yet deleted; deleted and announced but not yet recorded), plus a token
 * registered again while its prune is in flight. The invocation is stopped at the point by failing the DynamoDB
 * call that follows it (the runtime's `dynamoDbOutage`) for as long as that invocation can run (its timeout):
 * it fails or times out, what it held in memory is gone, and what is stored is what a kill there leaves. The
 * message comes back under the same id and the work is finished from the stored state alone. (test/reliability/push-crash.test.ts kills the whole
 * runtime while a send waits on the provider.)
 */

/**
 * The push worker's timeout, shortened from its 30 s here (the runtime's `functionTimeouts`): the cases wait it out,
 * and what it tests (a claim held until the holder's deadline, then taken over) does not depend on its length.
 */
const PUSH_TIMEOUT_SECS = 10;
/** The push worker's timeout, and a second more: an invocation that hit a stop has ended by then. */
const INVOCATION_LIFETIME_MS = PUSH_TIMEOUT_SECS * 1000 + 1000;

let runtime: Runtime;
let expo: ExpoStandIn;
const receiver = new WebhookReceiver();
const savedScale = process.env[TIME_SCALE_ENV];
const run = Date.now();

/** A DynamoDB call of a function, as the proxy sees it (low-level JSON). */
type Call = { readonly operation: string; readonly body: Readonly<Record<string, unknown>> };
interface Stop {
  readonly matches: (call: Call) => boolean;
  readonly until: () => boolean;
  failed: number;
  /** When the first call was failed. */
  firstAt: number;
}
const stops: Stop[] = [];
/** The matcher's creations of a webhook delivery, by delivery id (the event id): one per time it got the event. */
const deliveryPuts = new Map<string, number>();

/**
 * Fails the calls `matches` picks until `until` says so; by default for the lifetime of the invocation that made
 * the first of them, so that invocation ends there whatever its SDK's retries.
 */
const stopAt = (matches: (call: Call) => boolean, until?: () => boolean): Stop => {
  const stop: Stop = {
    matches,
    failed: 0,
    firstAt: 0,
    until: until ?? (() => stop.failed > 0 && Date.now() > releasedAt(stop)),
  };
  stops.push(stop);
  return stop;
};
const releasedAt = (stop: Stop) => stop.firstAt + INVOCATION_LIFETIME_MS;

beforeAll(async () => {
  // Visibility timeout 180 s → 18 s: the message comes back after the holder's claim (its deadline + 5 s) expired.
  process.env[TIME_SCALE_ENV] = '0.1';
  expo = await startExpoStandIn();
  await receiver.start();
  runtime = await startTestRuntime({
    functionTimeouts: { 'push.deliver': PUSH_TIMEOUT_SECS },
    env: { [pushSettingName('EXPO_URL')]: expo.url },
    dynamoDbOutage: (operation, body) => {
      if (onTable({ operation, body }, 'PutItem', 'webhookDeliveries')) {
        const deliveryId = string(field(body, 'Item')?.delivery_id) ?? '';
        deliveryPuts.set(deliveryId, (deliveryPuts.get(deliveryId) ?? 0) + 1);
      }
      const stop = stops.find((candidate) => !candidate.until() && candidate.matches({ operation, body }));
      if (!stop) return false;
      if (stop.failed === 0) stop.firstAt = Date.now();
      stop.failed += 1;
      return true;
    },
  });
});
afterAll(async () => {
  await runtime?.stop();
  await expo?.close();
  await receiver.stop();
  if (savedScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = savedScale;
});

vi.setConfig({ testTimeout: 240_000 });

const api = apiClient(() => runtime.httpUrl);

const string = (value: unknown): string | undefined => (value as { S?: string } | undefined)?.S;
const field = (body: Readonly<Record<string, unknown>>, name: string) =>
  body[name] as Record<string, unknown> | undefined;
const onTable = (call: Call, operation: string, table: string) =>
  call.operation === operation && String(call.body.TableName).endsWith(table);

/** A user with one registered Expo device. */
const userWithDevice = async (name: string) => {
  const id = `${name}-${process.pid}-${run}`;
  const token = await runtime.mintUserToken(id);
  const pushToken = `ExponentPushToken[${id}]`;
  const register = () => api('POST', '/devices', token, { token: pushToken, platform: 'ios' });
  expect((await register()).status).toBe(201);
  return { id, token, pushToken, tokenHash: tokenHashOf(pushToken), register };
};

const notify = async (recipient: string) => {
  const service = await runtime.mintServiceToken('billing', ['notifications:write']);
  const answer = await api('POST', '/notifications', service, {
    event_type: 'billing.invoice_ready',
    title: 'Invoice ready',
    recipient_ids: [recipient],
    channels: ['in_app', 'push'],
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
};

interface PushView {
  readonly push_id: string;
  readonly updated_at: string;
  readonly status: string;
  readonly attempts: number;
  readonly reason: string | null;
}

/** The notification's one push once it is settled (not `sending`). */
const settledPush = async (id: string): Promise<PushView> => {
  const service = await runtime.mintServiceToken('billing', ['notifications:write']);
  const [push] = await eventually(
    async () => (await api('GET', `/sent-notifications/${id}/pushes`, service)).body.items as PushView[],
    (items) => items.length === 1 && items[0]?.status !== 'sending',
    180_000,
  );
  return push as PushView;
};

const pushIdsTo = (pushToken: string) =>
  expo
    .received()
    .filter((push) => push.token === pushToken)
    .map((push) => push.push_id);

const registeredTokens = async (userToken: string) =>
  ((await api('GET', '/devices', userToken)).body.items as { token: string }[]).map((device) => device.token);

/** The `notify.device.pruned` events the webhook received for this push. */
const prunedEvents = (pushId: string) =>
  receiver
    .at('/pruned')
    .filter((event) => (event.verified as { data?: { id?: string } } | undefined)?.data?.id === pushId);

describe.concurrent('the push worker stopped at each dangerous point', () => {
  beforeAll(async () => {
    const secret = `s3cret-${randomBytes(8).toString('hex')}`;
    const admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
    const hook = await api('POST', '/webhooks', admin, {
      url: receiver.endpoint('/pruned', secret),
      secret,
      event_filters: ['notify.device.pruned'],
      name: 'pruned devices',
    });
    expect(hook.status).toBe(201);
  });

  it('after the claim, before the send: sent once, after the dead holder’s claim expired', async () => {
    const user = await userWithDevice('claimed-unsent');
    // The APNs/Expo badge's unread count is read after the claim and before the send.
    const stop = stopAt(
      (call) => onTable(call, 'GetItem', 'feedState') && string(field(call.body, 'Key')?.user_id) === user.id,
    );
    const id = await notify(user.id);
    const push = await settledPush(id);
    expect(stop.failed).toBeGreaterThan(0);
    expect(push).toMatchObject({ status: 'delivered', attempts: 1 });
    await eventually(() => queueIdle('push'), Boolean, 60_000);
    const received = expo.received().filter((sent) => sent.token === user.pushToken);
    expect(received.map((sent) => sent.push_id)).toEqual([pushIdFor(id, user.tokenHash)]);
    // Sent by the invocation that took the claim over, not by the one stopped before its send.
    expect(Date.parse(received[0]?.at ?? '')).toBeGreaterThan(releasedAt(stop));
  });

  it('after the provider answered, before the outcome is recorded: recorded once, the repeat under the same push id', async () => {
    const user = await userWithDevice('answered-unrecorded');
    const stop = stopAt(
      (call) =>
        onTable(call, 'UpdateItem', 'pushes') &&
        string(field(call.body, 'Key')?.record_key) === recipientPushKey(user.id) &&
        String(call.body.UpdateExpression).includes('devices.'),
    );
    const id = await notify(user.id);
    const push = await settledPush(id);
    expect(stop.failed).toBeGreaterThan(0);
    expect(push).toMatchObject({ status: 'delivered', attempts: 1 });
    await eventually(() => queueIdle('push'), Boolean, 60_000);
    // The answered send, then the one after the takeover: the same push, which the app drops by its id.
    const pushId = pushIdFor(id, user.tokenHash);
    expect(pushIdsTo(user.pushToken)).toEqual([pushId, pushId]);
    const service = await runtime.mintServiceToken('billing', ['notifications:write']);
    const summary = await api('GET', `/sent-notifications/${id}`, service);
    expect(summary.body.pushes).toMatchObject({ sending: 0, delivered: 1 });
  });

  it('a prune recorded, the device not yet deleted: deleted and announced once the message is back', async () => {
    const user = await userWithDevice('prune-undeleted');
    expo.markDead(user.pushToken);
    const stop = stopAt(
      (call) =>
        onTable(call, 'DeleteItem', 'devices') &&
        string(field(call.body, 'Key')?.token_hash) === user.tokenHash,
    );
    const id = await notify(user.id);
    const push = await settledPush(id);
    expect(stop.failed).toBeGreaterThan(0);
    expect(push.status).toBe('pruned');
    // Completed by the message once back, after the stopped invocation had ended.
    expect(Date.parse(push.updated_at)).toBeGreaterThan(releasedAt(stop));
    expect(await registeredTokens(user.token)).toEqual([]);
    const events = await eventually(
      () => prunedEvents(push.push_id),
      (found) => found.length >= 1,
      60_000,
    );
    expect(events).toHaveLength(1);
  });

  it('a device deleted and announced, the prune not yet recorded: recorded, announced again under the same id', async () => {
    const user = await userWithDevice('prune-unrecorded');
    expo.markDead(user.pushToken);
    const stop = stopAt(
      (call) =>
        onTable(call, 'UpdateItem', 'pushes') &&
        string(field(call.body, 'Key')?.record_key) === recipientPushKey(user.id) &&
        String(call.body.ConditionExpression).includes('prune'),
    );
    const id = await notify(user.id);
    const push = await settledPush(id);
    expect(stop.failed).toBeGreaterThan(0);
    expect(push.status).toBe('pruned');
    expect(Date.parse(push.updated_at)).toBeGreaterThan(releasedAt(stop));
    expect(await registeredTokens(user.token)).toEqual([]);
    // Published before the stop and again by the message that came back (the device then already deleted): the
    // matcher gets the same event twice, and the webhook has one delivery of it, under its id.
    const matched = await eventually(
      () => deliveryPuts.get(push.push_id) ?? 0,
      (count) => count >= 2,
      60_000,
    );
    expect(matched).toBeGreaterThanOrEqual(2);
    const events = prunedEvents(push.push_id);
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(new Set(events.map((event) => event.headers['webhook-id']))).toHaveProperty('size', 1);
  });

  it('a token registered again while its prune is in flight: kept, not announced', async () => {
    const user = await userWithDevice('prune-reregistered');
    expo.markDead(user.pushToken);
    let registeredAgain = false;
    const stop = stopAt(
      (call) =>
        onTable(call, 'DeleteItem', 'devices') &&
        string(field(call.body, 'Key')?.token_hash) === user.tokenHash,
      () => registeredAgain,
    );
    const id = await notify(user.id);
    await eventually(
      () => stop.failed,
      (failed) => failed > 0,
      60_000,
    );
    // The app registers its token again (it got a new registration from the provider, or simply on start).
    expect((await user.register()).status).toBe(201);
    registeredAgain = true;
    const push = await settledPush(id);
    expect(push.status).toBe('failed');
    expect(push.reason).toContain('registered again meanwhile: kept');
    expect(await registeredTokens(user.token)).toEqual([user.pushToken]);
    await eventually(() => queueIdle('push'), Boolean, 60_000);
    expect(prunedEvents(push.push_id)).toEqual([]);
  });
});
