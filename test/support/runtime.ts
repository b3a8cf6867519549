/**
 * The local runtime for end-to-end tests, on free ports and in memory:
 *
 *   const runtime = await startTestRuntime();          // the service's wiring, dev HS256 auth
 *   afterAll(() => runtime.stop());
 *   const token = await runtime.mintUserToken('alice');
 *   await fetch(`${runtime.httpUrl}/live`);
 *
 * Pass `env: authEnvFor(idp)` (tokens.ts) to verify tokens against a test JWKS server instead, or
 * `wiring: fixtureWiring` to mount the fixture handlers.
 */
import { describeDelivery } from '../../local/delivery';
import { type Runtime, type RuntimeOptions, startRuntime } from '../../local/runtime';

export type { Runtime } from '../../local/runtime';

/**
 * AWS-like delivery is on (duplicates, reordering, asynchronous events, lost `$disconnect`s) unless
 * NOTIFY_LOCAL_DELIVERY=exact; the seed is printed so a failing run can be repeated with NOTIFY_LOCAL_SEED.
 */
export const startTestRuntime = async (options: RuntimeOptions = {}): Promise<Runtime> => {
  const runtime = await startRuntime({ port: 0, quiet: true, ...options });
  console.error(`local runtime: ${describeDelivery(runtime.delivery)}`);
  return runtime;
};
