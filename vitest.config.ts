// Before any SDK client: the global set-up builds DynamoDB clients in this process, where `test.env` does not
// reach; the variable set here also reaches every worker and the processes tests spawn.
import './local/sdk-env.ts';
import { defineConfig } from 'vitest/config';
import { SpreadWaitingSequencer } from './test/support/sequencer.ts';

// DynamoDB Local's JVMs in a test run live seconds to minutes and took a third of the run's CPU: without the
// optimizing compiler (C2) they take about half as much (docs/testing.md). Set here, it reaches every JVM the run
// starts (the shared instances, each `npm start --data`'s own) and not a user's `npm start` or the benchmarks.
const TEST_JVM_OPTION = '-XX:TieredStopAtLevel=1';
if (!process.env.JAVA_TOOL_OPTIONS?.includes(TEST_JVM_OPTION)) {
  process.env.JAVA_TOOL_OPTIONS = [process.env.JAVA_TOOL_OPTIONS, TEST_JVM_OPTION].filter(Boolean).join(' ');
}

// Two cores, four workers: much of an e2e file's time is waiting (timers, child processes, sockets), so files beyond
// two are in flight to fill it, and the sequencer spreads the files that wait longest (docs/testing.md). Each worker
// keeps one DynamoDB Local (a JVM) for the whole run (test/support/shared-dynamodb.ts) instead of a JVM per file.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 4,
    globalSetup: ['test/support/shared-dynamodb.ts'],
    setupFiles: ['test/support/function-logs.ts'],
    sequence: { sequencer: SpreadWaitingSequencer },
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: ['default'],
    // Each file's line has its duration; below it, only the tests that shape the suite's time.
    slowTestThreshold: 10_000,
    // A green run prints the summary: what a test writes to the console (handler logs included, through
    // test/support/function-logs.ts) is printed only when that test fails.
    silent: 'passed-only',
    // Handlers log one JSON line per request; tests that read logs raise the level themselves.
    env: { POWERTOOLS_LOG_LEVEL: 'WARN' },
  },
});
