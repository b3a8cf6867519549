import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest in wall time (measured, docs/testing.md), mostly waiting on child processes and
 * timers, longest first. They start early, not last: a clean clone (CI) has no durations cached, and vitest's
 * fallback order, larger files first, would start some of them late (realtime-silence 50th of 99 files, the smoke
 * test 78th), where a minute-long file can leave one worker running alone at the end.
 */
const LONGEST_WAITING = [
  // Seconds in a run of the whole suite (4 workers, 2 cores): the order is what matters.
  // `npm start --data` killed between two fallback steps (toast at 18 s, push at 45 s here).
  'test/reliability/fallback-crash.test.ts', // 83
  // `npm start --data` killed inside a quiet window, and the window's end at a minute boundary.
  'test/reliability/quiet-hours-crash.test.ts', // 64
  'test/e2e/quiet-hours.test.ts', // 57: a window ends at a minute boundary
  'test/e2e/realtime-silence.test.ts', // 56: real scaled timers
  // `npm start --data` killed and started again around push deliveries.
  'test/reliability/push-crash.test.ts', // 55
  'test/e2e/push/push.test.ts', // 45: provider retries, Retry-After and scheduled pushes
  'test/reliability/crash.test.ts', // 45
  'test/reliability/digest-crash.test.ts', // 38: kills around digest windows
  // Lambda's retries of the push worker's invocations, each after the failed one's deadline (10 s here).
  'test/reliability/push-invoke-retries.test.ts', // 38
  'test/e2e/webhooks.test.ts', // 36: retries, a timeout, schedules
  // `npm start --data` killed during a held retry POST, and the cut-off message's hold after the restart.
  'test/reliability/webhook-retry-crash.test.ts', // 30
  // A restart of `npm start --data` and a wait for the dead invocation's claim to expire (10 s timeout + 5 s).
  'test/reliability/bus-invoke-crash.test.ts', // 25
  'test/e2e/throttles.test.ts', // 24: a throttle window's end
  'test/e2e/inbox-states.test.ts', // 24: snooze wake-ups through the scheduler
  // Two starts of `npm start --data` (a DynamoDB Local of its own), and the CLIs' start-up.
  'test/e2e/runtime-cli.test.ts', // 23
  'test/e2e/push/fallback.test.ts', // 22: fallback steps' delays, side by side
  'test/reliability/webhook-claims.test.ts', // 22: claims expiring, a retry after the deadline
  'test/e2e/digests.test.ts', // 21: digest windows closing, side by side
  'test/e2e/realtime.test.ts', // 22: a broadcast to 150 connections, idle and auth deadlines
  // The push worker held at five points for its whole lifetime (10 s here), side by side.
  'test/reliability/push-crash-points.test.ts', // 20
  // One 14 s retry chain of the default retry wait.
  'test/unit/local/lambda/async-invocation.test.ts', // 20
  // A small file, so started late by size, where its 31 s once ran alone at the end of the run.
  'test/reliability/webhook-isolation.test.ts', // 19
  // `npm start` twice, one after the other (a secret in SERVICE__AUTH__*, a JWKS).
  'test/reliability/demo-minting.test.ts', // 15
  // Small files (started late by size) that wait on child processes or Chromium, last to end on a clean clone.
  'test/e2e/token-cli.test.ts',
  'test/e2e/events.test.ts', // `npm run replay`
  'test/e2e/demo-own-auth.test.ts',
  'test/e2e/push/local-pushes.test.ts',
  'test/e2e/smoke.test.ts',
  'test/reliability/load.test.ts',
  'test/e2e/demo.test.ts',
];

/** How many of the listed files start with the run; after them, one listed file after every OTHERS_BETWEEN others. */
const STARTED_TOGETHER = 2;
const OTHERS_BETWEEN = 3;

/**
 * vitest's order (the last run's durations, else file size), with the listed files, longest first, spread over the
 * first part of the run: two start with it, then one after every three others. Started all at once they would hold
 * every worker for the run's first minute while the cores stand mostly idle (they wait, they do not compute);
 * spread, the other files keep the cores busy beside them, and each listed file still ends well before the run.
 */
export class SpreadWaitingSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_WAITING.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return index === -1 ? LONGEST_WAITING.length : index;
    };
    const sorted = [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
    const listed = sorted.filter((file) => rank(file) < LONGEST_WAITING.length);
    const others = sorted.filter((file) => rank(file) === LONGEST_WAITING.length);
    const order = listed.splice(0, STARTED_TOGETHER);
    for (const file of listed) order.push(...others.splice(0, OTHERS_BETWEEN), file);
    return [...order, ...others];
  }
}
