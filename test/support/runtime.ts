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
import { type Runtime, type RuntimeOptions, startRuntime } from '../../local/runtime';

export type { Runtime } from '../../local/runtime';

export const startTestRuntime = (options: RuntimeOptions = {}): Promise<Runtime> =>
  startRuntime({ port: 0, quiet: true, ...options });
