import { defineConfig } from 'vitest/config';

// Two cores: e2e suites each start DynamoDB Local (a JVM), so files run in a small pool.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: ['default'],
  },
});
