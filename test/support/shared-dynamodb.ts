/**
 * One DynamoDB Local per vitest worker for the whole run, instead of one JVM per test file: starting a JVM
 * was the largest fixed cost of every file on this 2-core machine. The global set-up (vitest.config.ts)
 * starts them without waiting; a file takes its worker's instance (VITEST_POOL_ID) and makes tables of its
 * own under a fresh prefix, so files stay isolated from each other, and deletes them when it is done.
 *
 * A file run without the global set-up (another vitest config) starts a DynamoDB Local of its own as before.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import {
  connectDynamoDbLocal,
  type DynamoDbLocal,
  launchDynamoDbLocal,
  startDynamoDbLocal,
} from '../../local/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Endpoints of the run's DynamoDB Local instances, one per worker; empty when none was started. */
    sharedDynamoDbEndpoints: string[];
  }
}

export default async function startSharedDynamoDb(project: TestProject): Promise<() => Promise<void>> {
  // No more instances than files to run: a run of one file (`npx vitest run test/e2e/foo.test.ts`) starts one JVM,
  // not one per worker. The CLI's file filters are vitest's own (not typed): without them, every file counts.
  const filters = (project.vitest as { filenamePattern?: string[] }).filenamePattern;
  const { testFiles } = await project.globTestFiles(filters);
  const workers = Math.max(1, Math.min(project.globalConfig.maxWorkers, testFiles.length));
  const instances = await Promise.all(Array.from({ length: workers }, () => launchDynamoDbLocal()));
  // Files waiting for an instance that never came up fail with a time-out; this says why, once. (A run that
  // ends before an instance answered stops it on purpose: no message then.)
  let stopping = false;
  for (const instance of instances) {
    instance.ready.catch((error: unknown) => {
      if (stopping) return;
      console.error(
        `shared DynamoDB Local at ${instance.endpoint} did not start: ${(error as Error).message}`,
      );
    });
  }
  project.provide(
    'sharedDynamoDbEndpoints',
    instances.map((instance) => instance.endpoint),
  );
  return async () => {
    stopping = true;
    await Promise.all(instances.map((instance) => instance.stop()));
  };
}

/**
 * This worker's shared DynamoDB Local and a table prefix no other file uses; undefined without the global
 * set-up.
 */
export const sharedDynamoDb = (): { endpoint: string; tablePrefix: string } | undefined => {
  const endpoints = inject('sharedDynamoDbEndpoints') ?? [];
  if (endpoints.length === 0) return undefined;
  const worker = Math.max(0, Number(process.env.VITEST_POOL_ID ?? 1) - 1);
  const endpoint = endpoints[worker % endpoints.length] as string;
  return { endpoint, tablePrefix: `t${randomUUID().slice(0, 8)}-` };
};

/**
 * This worker's shared DynamoDB Local and a fresh table prefix for the caller's tables; without the global
 * set-up, a DynamoDB Local of the caller's own and no prefix. `db.stop()` ends only what the caller started.
 */
export const openTestDynamoDb = async (
  shared = sharedDynamoDb(),
): Promise<{ db: DynamoDbLocal; tablePrefix: string | undefined }> =>
  shared
    ? { db: await connectDynamoDbLocal(shared.endpoint), tablePrefix: shared.tablePrefix }
    : { db: await startDynamoDbLocal(), tablePrefix: undefined };
