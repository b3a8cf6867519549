/**
 * The local runtime for end-to-end tests, on free ports and in memory:
 *
 *   const runtime = await startTestRuntime();          // the service's wiring, dev HS256 auth
 *   afterAll(() => runtime.stop());
 *   const token = await runtime.mintUserToken('alice');
 *   await fetch(`${runtime.httpUrl}/live`);
 *
 * Pass `env: authEnvFor(idp)` (tokens.ts) to verify tokens against a test JWKS server instead, or
 * `wiring: fixtureWiring` to mount the fixture handlers. Tables go to the worker's shared DynamoDB Local
 * (shared-dynamodb.ts) under a prefix of their own; a runtime with a `dataDir` starts its own DynamoDB Local.
 */
import { describeDelivery } from '../../local/delivery';
import { type Runtime, type RuntimeOptions, startRuntime } from '../../local/runtime';
import { sharedDynamoDb } from './shared-dynamodb';

export type { Runtime } from '../../local/runtime';

/**
 * AWS-like delivery is on (duplicates, reordering, asynchronous events, lost `$disconnect`s) unless
 * NOTIFY_LOCAL_DELIVERY=exact; the seed is printed so a failing run can be repeated with NOTIFY_LOCAL_SEED.
 */
export const startTestRuntime = async (options: RuntimeOptions = {}): Promise<Runtime> => {
  const shared = options.dataDir ? undefined : sharedDynamoDb();
  const runtime = await startRuntime({
    port: 0,
    quiet: true,
    ...(shared ? { sharedDynamoDb: shared } : {}),
    ...options,
  });
  console.error(`local runtime: ${describeDelivery(runtime.delivery)}`);
  return runtime;
};
