import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer';

// Two cores, three workers: much of an e2e file's time is waiting (timers, child processes, sockets), so a third
// file in flight fills it (vitest 380 s → 265 s on a clean clone, docs/testing.md). Each worker keeps one
// DynamoDB Local (a JVM) for the whole run (test/support/shared-dynamodb.ts) instead of a JVM per file.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 3,
    globalSetup: ['test/support/shared-dynamodb.ts'],
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: ['default'],
    // Handlers log one JSON line per request; tests that read logs raise the level themselves. The variable that
    // silences the AWS SDK's Node-version warning (@aws-sdk/core) also reaches the processes tests spawn.
    env: { POWERTOOLS_LOG_LEVEL: 'WARN', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
