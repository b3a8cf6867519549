import { randomBytes } from 'node:crypto';
import { tokenHashOf } from '../lambdas/domain/devices/devices';
import { REQUEST_DELIVERY_MAX_RECIPIENTS } from '../lambdas/domain/notifications/create';
import { pushIdFor } from '../lambdas/domain/push/records';
import type { Usage } from '../local/metering';
import type { PushStandIn, ReceivedPush } from '../local/push/stand-in';
import type { ServiceUnits } from './cost';
import type { MeteredRuntime } from './harness';
import { percentile } from './latency';
import {
  perOperation,
  result,
  type ScenarioResult,
  type SkippedScenario,
  sendNotification,
} from './scenarios';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The providers the bench's devices use: a phone on FCM (Android) and one on APNs (iOS), as apps register them. */
export type BenchPushProvider = 'fcm' | 'apns';

export interface BenchDevice {
  readonly provider: BenchPushProvider;
  readonly token: string;
}

/** The registration body of a device of `provider`, as the Android and iOS apps send it (docs/push.md). */
const registration = (device: BenchDevice) =>
  device.provider === 'fcm'
    ? { token: device.token, platform: 'android' }
    : { token: device.token, platform: 'ios', apns_environment: 'sandbox' };

/** A fresh device token of the provider's shape (APNs: 32 bytes in hex). */
export const deviceOf = (provider: BenchPushProvider, user: string, index: number): BenchDevice => ({
  provider,
  token: provider === 'fcm' ? `fcm-${user}-${index}` : randomBytes(32).toString('hex'),
});

/** Registers each device for `user` over `POST /devices`. */
export const registerDevices = async (
  bench: MeteredRuntime,
  user: string,
  devices: readonly BenchDevice[],
) => {
  const userToken = await bench.runtime.mintUserToken(user);
  for (const device of devices) {
    const registered = await bench.api('/devices', userToken, {
      method: 'POST',
      body: JSON.stringify(registration(device)),
    });
    if (registered.status !== 201) {
      throw new Error(
        `POST /devices (${device.provider}) answered ${registered.status} ${await registered.text()}`,
      );
    }
  }
};

/** npm start's stand-ins of the bench's providers, or the first one missing. */
export const standInsOf = (bench: MeteredRuntime): Map<BenchPushProvider, PushStandIn> | string => {
  const found = new Map<BenchPushProvider, PushStandIn>();
  for (const provider of ['fcm', 'apns'] as const) {
    const standIn = bench.runtime.standIns.push.find((candidate) => candidate.provider === provider);
    if (!standIn) return `no ${provider} stand-in in this runtime`;
    found.set(provider, standIn);
  }
  return found;
};

/** The pushes of notification `id` to `devices` that their stand-ins have received. */
export const receivedPushes = (
  standIns: ReadonlyMap<BenchPushProvider, PushStandIn>,
  id: string,
  devices: readonly BenchDevice[],
): ReceivedPush[] => {
  const expected = new Set(devices.map((device) => pushIdFor(id, tokenHashOf(device.token))));
  return [...standIns.values()].flatMap((standIn) =>
    standIn.received().filter((push) => push.push_id !== null && expected.has(push.push_id)),
  );
};

/** Waits until every one of `devices` got notification `id`'s push; returns the pushes. */
export const waitForPushes = async (
  standIns: ReadonlyMap<BenchPushProvider, PushStandIn>,
  id: string,
  devices: readonly BenchDevice[],
  timeoutMs = 60_000,
): Promise<ReceivedPush[]> => {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(10)) {
    const pushes = receivedPushes(standIns, id, devices);
    if (pushes.length >= devices.length) return pushes;
  }
  throw new Error(`notification ${id}: not pushed to its ${devices.length} devices within ${timeoutMs} ms`);
};

/**
 * (p) The push part of one notification to one offline recipient with two registered devices, one on FCM and one
 * on APNs (through `npm start`'s stand-ins), `in_app` + `push`: the same notifications with `in_app` alone are
 * measured too, and the difference is the push's (the hand-off by asynchronous invocation, the worker's reads,
 * claims and outcomes), per device.
 */
export const pushToOfflineDevices = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
): Promise<ScenarioResult | SkippedScenario> => {
  const title =
    'the push part of one notification to one offline recipient with two devices, FCM and APNs (in_app + push)';
  const standIns = standInsOf(bench);
  if (typeof standIns === 'string') return { id: 'p', title, skipped: standIns };
  const user = `bench-push-${Date.now()}`;
  const devices = [deviceOf('fcm', user, 0), deviceOf('apns', user, 1)];
  await registerDevices(bench, user, devices);
  /**
   * Done once both devices got the push and the push worker's invocation has ended (its outcomes recorded): the
   * event is out of Lambda's asynchronous queue.
   */
  const pushDone = async (id: string) => {
    await waitForPushes(standIns, id, devices, 30_000);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) {
      if (bench.runtime.standIns.lambda.asyncBacklog() === 0) return;
    }
    throw new Error(`notification ${id}: its push invocation did not end within 30 s`);
  };
  const once = async (push: boolean) => {
    const id = await sendNotification(bench, serviceToken, [user], push ? ['in_app', 'push'] : ['in_app']);
    if (push) await pushDone(id);
  };
  await once(false); // warm: no INIT in the figures
  await once(true);
  const inAppOnly = await bench.measure(async () => {
    for (let index = 0; index < repetitions; index++) await once(false);
  });
  const withPush = await bench.measure(async () => {
    for (let index = 0; index < repetitions; index++) await once(true);
  });
  const operations = repetitions * devices.length;
  const units = unitsBeyond(perOperation(withPush, operations), perOperation(inAppOnly, operations));
  return result('p', title, 'device pushed', operations, units, withPush, [
    `${repetitions} notifications with in_app + push less ${repetitions} with in_app alone, per device`,
    `per device, by table: ${tableDifference(withPush, inAppOnly, operations)}`,
  ]);
};

/** The units of `total` beyond those of `base`, per kind (never below 0). */
export const unitsBeyond = (total: ServiceUnits, base: ServiceUnits): ServiceUnits =>
  Object.fromEntries(
    Object.entries(total).map(([key, value]) => [key, Math.max(0, value - base[key as keyof ServiceUnits])]),
  ) as unknown as ServiceUnits;

/** What `more` read and wrote beyond `less`, per table and per operation (the push's share of DynamoDB). */
export const tableDifference = (more: Usage, less: Usage, operations: number): string =>
  [...new Set([...Object.keys(more.dynamoDb), ...Object.keys(less.dynamoDb)])]
    .map((table) => {
      const units = (usage: Usage, kind: 'readUnits' | 'writeUnits') => usage.dynamoDb[table]?.[kind] ?? 0;
      const per = (kind: 'readUnits' | 'writeUnits') =>
        ((units(more, kind) - units(less, kind)) / operations).toFixed(3).replace(/\.?0+$/, '');
      return { table, reads: per('readUnits'), writes: per('writeUnits') };
    })
    .filter(({ reads, writes }) => reads !== '0' || writes !== '0')
    .map(({ table, reads, writes }) => `${table} ${reads} RRU ${writes} WRU`)
    .join('; ');

export interface PushLatencyResult {
  /** The recipients' devices: one each, on these providers (alternating when both). */
  readonly providers: readonly BenchPushProvider[];
  readonly recipients: number;
  readonly notifications: number;
  readonly pushes: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Median time from the POST to the last of the notification's pushes. */
  readonly lastPushP50Ms: number;
}

/**
 * From the start of `POST /notifications` (`in_app` + `push`, nobody connected) to each push's arrival at its
 * provider's stand-in (the `at` it records), for `recipients` recipients with one device each, their providers
 * taken from `providers` in turn. One notification first, not counted, so no cold start is in the figures.
 */
export const measurePushLatency = async (
  bench: MeteredRuntime,
  serviceToken: string,
  options: {
    readonly recipients: number;
    readonly notifications: number;
    readonly providers: readonly BenchPushProvider[];
  },
): Promise<PushLatencyResult> => {
  const standIns = standInsOf(bench);
  if (typeof standIns === 'string') throw new Error(`push latency: ${standIns}`);
  const run = `bench-push-lat-${Date.now()}`;
  const users = Array.from({ length: options.recipients }, (_, index) => `${run}-${index}`);
  const devices = users.map((user, index) =>
    deviceOf(options.providers[index % options.providers.length] ?? 'fcm', user, 0),
  );
  for (const [index, user] of users.entries())
    await registerDevices(bench, user, [devices[index] as BenchDevice]);
  await bench.settle();
  const latencies: number[] = [];
  const lastPushes: number[] = [];
  for (let round = 0; round <= options.notifications; round++) {
    // Wall clock on both sides: the stand-ins stamp a push's arrival with the time of day.
    const sentAt = Date.now();
    const id = await sendNotification(bench, serviceToken, users, ['in_app', 'push']);
    const arrivals = (await waitForPushes(standIns, id, devices)).map((push) => Date.parse(push.at) - sentAt);
    if (round > 0) {
      latencies.push(...arrivals);
      lastPushes.push(Math.max(...arrivals));
    }
    await bench.settle();
  }
  latencies.sort((a, b) => a - b);
  lastPushes.sort((a, b) => a - b);
  return {
    providers: options.providers,
    recipients: options.recipients,
    notifications: options.notifications,
    pushes: latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? Number.NaN,
    lastPushP50Ms: percentile(lastPushes, 0.5),
  };
};

/** `HH:MM` of an instant in UTC, for a quiet window in the user's time zone `UTC`. */
const utcTimeOfDay = (instant: number) => new Date(instant).toISOString().slice(11, 16);

/**
 * (q) A push held by quiet hours (docs/delivery-rules.md): `repetitions` notifications (`in_app` + `push`) to one
 * offline recipient with one FCM device, sent inside a quiet window of the current minute and pushed when it ends,
 * less the same notifications sent outside quiet hours: what holding and releasing adds per held push (the
 * schedule, its message on `fanout`, the release's reads and claim).
 */
export const heldPush = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
): Promise<ScenarioResult | SkippedScenario> => {
  const title = 'a push held by quiet hours and released at the window end, less the same push not held';
  const standIns = standInsOf(bench);
  if (typeof standIns === 'string') return { id: 'q', title, skipped: standIns };
  const user = `bench-quiet-${Date.now()}`;
  const devices = [deviceOf('fcm', user, 0)];
  await registerDevices(bench, user, devices);
  const userToken = await bench.runtime.mintUserToken(user);
  const setQuietHours = async (windows: unknown) => {
    const put = await bench.api('/preferences', userToken, {
      method: 'PUT',
      body: JSON.stringify({ rules: [], time_zone: 'UTC', quiet_hours: windows }),
    });
    if (put.status !== 200) throw new Error(`PUT /preferences answered ${put.status} ${await put.text()}`);
  };
  const sendAll = async () => {
    const ids: string[] = [];
    for (let index = 0; index < repetitions; index++) {
      ids.push(await sendNotification(bench, serviceToken, [user], ['in_app', 'push']));
    }
    for (const id of ids) await waitForPushes(standIns, id, devices, 120_000);
  };
  await sendAll(); // warm: no INIT in the figures
  // The release runs in the fan-out worker, which a notification to more recipients than the request delivers
  // itself warms as well (when this row runs alone, nothing before it has).
  const audience = Array.from(
    { length: REQUEST_DELIVERY_MAX_RECIPIENTS + 1 },
    (_, index) => `${user}-${index}`,
  );
  await sendNotification(bench, serviceToken, audience, ['in_app']);
  const notHeld = await bench.measure(sendAll);
  // A window from this minute to the next, set with at least 30 s of it left for the sends.
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 30_000) await sleep(left + 200);
  const now = Date.now();
  const weekday = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][new Date(now).getUTCDay()];
  await setQuietHours({
    windows: [{ days: [weekday], start: utcTimeOfDay(now), end: utcTimeOfDay(now + 60_000) }],
  });
  const held = await bench.measure(sendAll);
  await setQuietHours(null);
  const units = unitsBeyond(perOperation(held, repetitions), perOperation(notHeld, repetitions));
  return result('q', title, 'push held', repetitions, units, held, [
    `${repetitions} notifications with in_app + push held by a quiet window less ${repetitions} not held`,
    `per held push, by table: ${tableDifference(held, notHeld, repetitions)}`,
  ]);
};
