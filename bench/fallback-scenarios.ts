import type { MeteredRuntime } from './harness';
import {
  deviceOf,
  receivedPushes,
  registerDevices,
  standInsOf,
  tableDifference,
  unitsBeyond,
  waitForPushes,
} from './push-scenarios';
import type { ScenarioResult, SkippedScenario } from './scenarios';
import { expectStatus, perOperation, result, sendNotification } from './scenarios';

/**
 * Real time a step waits at least, so the sends and reads of a round are done before the first step runs. A
 * step waits by SQS delay, which the local runtime scales by NOTIFY_LOCAL_TIME_SCALE (60 in the bench, so the
 * sweeper stays out of the figures): 1 s of `after_secs` is a minute here.
 */
const STEP_WAIT_MS = 20_000;

/**
 * (r1) A fallback step of `push` that fires (the item not read) and (r2) one that is cancelled (the item read
 * before the step): `repetitions` notifications (`in_app` + `push`, `fallback: [{channel: push, after_secs,
 * unless: read}]`) to one offline recipient with one FCM device, less the same notifications with `in_app` alone
 * (for r2, read the same way): what the step adds per notification, its message, checks and (r1) the push.
 */
export const fallbackSteps = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
  rows: { readonly fired: boolean; readonly cancelled: boolean },
): Promise<(ScenarioResult | SkippedScenario)[]> => {
  const firedTitle =
    'a push fallback step that fires (the item not read), less the notification without the step';
  const cancelledTitle =
    'a push fallback step cancelled (the item read before it, by a read-all), less the notification without the step';
  const standIns = standInsOf(bench);
  if (typeof standIns === 'string') {
    return [
      ...(rows.fired ? [{ id: 'r1', title: firedTitle, skipped: standIns }] : []),
      ...(rows.cancelled ? [{ id: 'r2', title: cancelledTitle, skipped: standIns }] : []),
    ];
  }
  const user = `bench-fallback-${Date.now()}`;
  const devices = [deviceOf('fcm', user, 0)];
  await registerDevices(bench, user, devices);
  const userToken = await bench.runtime.mintUserToken(user);
  const timeScale = bench.runtime.standIns.sqs.timeScale;
  const afterSecs = Math.max(1, Math.ceil(STEP_WAIT_MS / 1000 / timeScale));
  // The steps of a round wait their `after_secs` (scaled) in the queue: settling waits for them to run.
  const settleMs = afterSecs * 1000 * timeScale + 60_000;

  const sendWithStep = () =>
    sendNotification(bench, serviceToken, [user], ['in_app', 'push'], {
      fallback: [{ channel: 'push', after_secs: afterSecs, unless: 'read' }],
    });
  /**
   * The user reads everything (`POST /notifications/read-all`): one request a round, so what the round's reads cost
   * is the same with and without the steps, and the difference is the steps' own.
   */
  const readAll = async () =>
    expectStatus(await bench.api('/notifications/read-all', userToken, { method: 'POST' }), 200, 'read-all');
  /** `repetitions` notifications, with the step or `in_app` alone; `read`: read (all) before the steps. */
  const round = async (withStep: boolean, read: boolean): Promise<string[]> => {
    const startedAt = Date.now();
    const ids: string[] = [];
    for (let index = 0; index < repetitions; index++) {
      ids.push(
        withStep ? await sendWithStep() : await sendNotification(bench, serviceToken, [user], ['in_app']),
      );
    }
    if (read) await readAll();
    if (withStep && Date.now() - startedAt >= afterSecs * 1000 * timeScale) {
      throw new Error('bench fallback: the sends and reads took longer than the steps wait');
    }
    // Not read: each step pushes. Read: `measure` settles once the cancelled steps have run.
    if (withStep && !read) for (const id of ids) await waitForPushes(standIns, id, devices, settleMs);
    return ids;
  };
  /** The usage of one round, settled after its steps have run. */
  const measured = async (withStep: boolean, read: boolean) => {
    let ids: string[] = [];
    // Nothing unread before a round that reads: its read-all changes the round's items alone, with or without steps.
    if (read) await readAll();
    const usage = await bench.measure(async () => {
      ids = await round(withStep, read);
    }, settleMs);
    const pushed = ids.filter((id) => receivedPushes(standIns, id, devices).length > 0);
    if (read && pushed.length > 0)
      throw new Error(`bench fallback: ${pushed.length} items read before their step were pushed`);
    return usage;
  };
  /** What the step adds per notification, and the notes of its row. */
  const row = async (id: string, title: string, read: boolean, what: string) => {
    const base = await measured(false, read);
    const withStep = await measured(true, read);
    const units = unitsBeyond(perOperation(withStep, repetitions), perOperation(base, repetitions));
    const dollars = (usage: typeof base) =>
      `$${result(id, title, 'notification', repetitions, perOperation(usage, repetitions)).dollarsPerMillion.total.toFixed(2)}`;
    return result(id, title, 'notification', repetitions, units, withStep, [
      `${repetitions} notifications with in_app + a push step after ${afterSecs} s (waiting ${afterSecs * timeScale} s at time scale ${timeScale}), ${what}`,
      `per notification, by table: ${tableDifference(withStep, base, repetitions)}`,
      `per million notifications${read ? ', the read-all included' : ''}: ${dollars(withStep)} with the step, ${dollars(base)} without`,
    ]);
  };

  // Warm: the push worker, which runs the steps, has pushed once, so no INIT is in the figures.
  const warm = await sendNotification(bench, serviceToken, [user], ['in_app', 'push']);
  await waitForPushes(standIns, warm, devices);
  const out: ScenarioResult[] = [];
  if (rows.fired)
    out.push(await row('r1', firedTitle, false, `none read, less ${repetitions} with in_app alone`));
  if (rows.cancelled) {
    const what = `all read (one read-all) before them, less ${repetitions} with in_app alone read the same way`;
    out.push(await row('r2', cancelledTitle, true, what));
  }
  return out;
};
