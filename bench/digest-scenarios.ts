import type { ServiceUnits } from './cost';
import type { MeteredRuntime } from './harness';
import { type BenchDevice, deviceOf, registerDevices, standInsOf, tableDifference } from './push-scenarios';
import { perOperation, result, type ScenarioResult, type SkippedScenario } from './scenarios';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Notifications per digest, as in the goal ("a comment storm on a post means 40 pushes"). */
export const DIGEST_SIZE = 40;
const WINDOW_SECS = 2;

/**
 * (g) 40 notifications (`in_app` + `push`) to one offline recipient with two devices (FCM and APNs), sent one by one
 * and (g2) batched into one digest (`digest.window_secs` 2): per notification sent. The difference is what a digest
 * saves: 39 of 40 feed items, pushes (claims, outcomes, provider calls, push messages) and delivery summaries,
 * against a join (a conditional put and two reads) per notification and one opening and close per digest.
 */
export const digestAgainstSeparate = async (
  bench: MeteredRuntime,
  serviceToken: string,
  rounds: number,
): Promise<(ScenarioResult | SkippedScenario)[]> => {
  const separateTitle = `${DIGEST_SIZE} separate notifications to one offline recipient with two devices (in_app + push)`;
  const digestTitle = `a digest of ${DIGEST_SIZE} notifications to one offline recipient with two devices (in_app + push)`;
  const standIns = standInsOf(bench);
  if (typeof standIns === 'string') {
    return [
      { id: 'g', title: separateTitle, skipped: standIns },
      { id: 'g2', title: digestTitle, skipped: standIns },
    ];
  }
  const user = `bench-digest-${Date.now()}`;
  const devices: BenchDevice[] = [deviceOf('fcm', user, 0), deviceOf('apns', user, 1)];
  await registerDevices(bench, user, devices);
  const pushed = () => [...standIns.values()].reduce((sum, standIn) => sum + standIn.received().length, 0);
  /** Waits until the devices got `count` more pushes than `before`. */
  const pushesArrived = async (before: number, count: number) => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(20)) {
      if (pushed() - before >= count) return;
    }
    throw new Error(`bench digest: ${count} pushes did not arrive within 60 s`);
  };
  let batch = 0;
  const send = async (digest: boolean, index: number) => {
    const response = await bench.api('/notifications', serviceToken, {
      method: 'POST',
      body: JSON.stringify({
        event_type: 'bench.comment',
        title: `Comment ${index}`,
        body: 'A comment of typical size for the benchmark.',
        data: { post_id: 'p-42' },
        channels: ['in_app', 'push'],
        recipient_ids: [user],
        ...(digest ? { digest: { key: `post-42-${batch}`, window_secs: WINDOW_SECS } } : {}),
      }),
    });
    if (response.status !== 202) throw new Error(`POST /notifications answered ${response.status}`);
  };
  const round = async (digest: boolean) => {
    batch += 1;
    const before = pushed();
    for (let index = 0; index < DIGEST_SIZE; index++) await send(digest, index);
    await pushesArrived(before, digest ? devices.length : DIGEST_SIZE * devices.length);
  };
  await round(false); // warm: no INIT in the figures
  await round(true);
  const separate = await bench.measure(async () => {
    for (let index = 0; index < rounds; index++) await round(false);
  });
  const digested = await bench.measure(async () => {
    for (let index = 0; index < rounds; index++) await round(true);
  });
  const operations = rounds * DIGEST_SIZE;
  const units = (usage: typeof separate): ServiceUnits => perOperation(usage, operations);
  const separateRow = result('g', separateTitle, 'notification', operations, units(separate), separate, [
    `${rounds} × ${DIGEST_SIZE} notifications, each pushed to both devices`,
  ]);
  const digestRow = result('g2', digestTitle, 'notification', operations, units(digested), digested, [
    `${rounds} digests of ${DIGEST_SIZE}, each one feed item and one push per device`,
    `per notification, by table, beyond ${DIGEST_SIZE} separate ones: ${tableDifference(digested, separate, operations)}`,
  ]);
  return [separateRow, digestRow];
};
