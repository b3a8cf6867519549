import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest in wall time (measured, docs/testing.md), mostly waiting on child processes and
 * scaled timers. They start first: a clean clone (CI) has no durations cached, and vitest's fallback order,
 * larger files first, would start some of them late (realtime-silence 50th of 99 files, the smoke test 78th),
 * where a minute-long file can leave one worker running alone at the end.
 */
const LONGEST_FIRST = [
  // Seconds in a run of the whole suite (3 workers, 2 cores): the order is what matters.
  'test/e2e/webhooks.test.ts', // 91: retries, a timeout, schedules
  'test/e2e/realtime-silence.test.ts', // 72
  // A restart of `npm start --data` and a wait for the dead invocation's claim to expire (30 s timeout + 5 s).
  'test/reliability/bus-invoke-crash.test.ts', // 50
  'test/reliability/crash.test.ts', // 47
  // `npm start` twice, one after the other (a secret in SERVICE__AUTH__*, a JWKS): 58 s alone on a loaded machine.
  'test/reliability/demo-minting.test.ts',
  // `npm start` with its own secret and Chromium: 31 s alone on a loaded machine.
  'test/e2e/demo-own-auth.test.ts',
  'test/e2e/realtime.test.ts', // 32
  // A small file, so started last by size, where its 31 s ran alone at the end of the run.
  'test/reliability/webhook-isolation.test.ts', // 31
  'test/e2e/runtime-cli.test.ts', // 24
  'test/reliability/webhook-claims.test.ts', // 22
  // 37 s before two of its retry chains were shortened: one 14 s chain of the default retry wait is left.
  'test/unit/local-async-invocation.test.ts', // 20
  'test/e2e/client-realtime.test.ts', // 20
  'test/e2e/notifications.test.ts', // 19
  // Small files (started late by size) that wait on child processes: 14, 13 and 17 s, last to end on a clean clone.
  'test/e2e/smoke.test.ts',
  'test/reliability/load.test.ts',
  'test/e2e/demo.test.ts',
];

/** vitest's order (the last run's durations, else file size), with the known longest files moved first. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}
