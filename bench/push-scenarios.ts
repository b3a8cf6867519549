import { tokenHashOf } from '../lambdas/domain/devices/devices';
import { pushIdFor } from '../lambdas/domain/push/records';
import type { ServiceUnits } from './cost';
import type { MeteredRuntime } from './harness';
import {
  perOperation,
  result,
  type ScenarioResult,
  type SkippedScenario,
  sendNotification,
} from './scenarios';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * (p) The push part of one notification to one offline recipient with two registered devices (Expo, the provider
 * `npm start` runs), `in_app` + `push`: the same notifications with `in_app` alone are measured too, and the
 * difference is the push's (the hand-off, the push queue, the worker's reads, claims and outcomes), per device.
 */
export const pushToOfflineDevices = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
): Promise<ScenarioResult | SkippedScenario> => {
  const title = 'the push part of one notification to one offline recipient with two devices (in_app + push)';
  const expo = bench.runtime.standIns.push.find((standIn) => standIn.provider === 'expo');
  if (!expo) return { id: 'p', title, skipped: 'no Expo stand-in in this runtime' };
  const user = `bench-push-${Date.now()}`;
  const userToken = await bench.runtime.mintUserToken(user);
  const devices = [`ExponentPushToken[${user}-phone]`, `ExponentPushToken[${user}-tablet]`];
  for (const token of devices) {
    const registered = await bench.api('/devices', userToken, {
      method: 'POST',
      body: JSON.stringify({ token, platform: 'ios' }),
    });
    if (registered.status !== 201) throw new Error(`POST /devices answered ${registered.status}`);
  }
  const pushed = (id: string) => {
    const expected = new Set(devices.map((token) => pushIdFor(id, tokenHashOf(token))));
    return expo.received().filter((push) => push.push_id !== null && expected.has(push.push_id)).length;
  };
  /** Done once both devices got the push and the push message is deleted (its outcomes recorded). */
  const pushDone = async (id: string, deletedBefore: number) => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) {
      const deleted = bench.runtime.standIns.sqs.counters().push?.deleted ?? 0;
      if (pushed(id) === devices.length && deleted > deletedBefore) return;
    }
    throw new Error(`notification ${id}: not pushed to both devices within 30 s`);
  };
  const once = async (push: boolean) => {
    const deletedBefore = bench.runtime.standIns.sqs.counters().push?.deleted ?? 0;
    const id = await sendNotification(bench, serviceToken, [user], push ? ['in_app', 'push'] : ['in_app']);
    if (push) await pushDone(id, deletedBefore);
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
  const base = perOperation(inAppOnly, operations);
  const total = perOperation(withPush, operations);
  const units = Object.fromEntries(
    Object.entries(total).map(([key, value]) => [key, Math.max(0, value - base[key as keyof ServiceUnits])]),
  ) as unknown as ServiceUnits;
  return result('p', title, 'device pushed', operations, units, withPush, [
    `${repetitions} notifications with in_app + push less ${repetitions} with in_app alone, per device`,
  ]);
};
