import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest in wall time (measured, docs/testing.md), mostly waiting on child processes and
 * scaled timers. They start first: a clean clone (CI) has no durations cached, and vitest's fallback order,
 * larger files first, would start some of them late (realtime-silence 50th of 99 files, the smoke test 78th),
 * where a minute-long file can leave one worker running alone at the end.
 */
const LONGEST_FIRST = [
  'test/reliability/crash.test.ts',
  'test/e2e/realtime-silence.test.ts',
  // A restart of `npm start --data` and a wait for the dead invocation's claim to expire (30 s timeout + 5 s).
  'test/reliability/bus-invoke-crash.test.ts',
  'test/e2e/smoke.test.ts',
  'test/e2e/realtime.test.ts',
  'test/cdk/operations.test.ts',
  'test/e2e/runtime-cli.test.ts',
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
