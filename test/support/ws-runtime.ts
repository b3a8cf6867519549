import { afterAll, afterEach, beforeAll } from 'vitest';
import { apiClient } from './api';
import { type Runtime, startTestRuntime } from './runtime';
import { type Frame, TestClient } from './ws-client';

/**
 * A local runtime for a test file whose tests talk to it as users over WebSockets; the connections a test opens
 * are closed after it:
 *
 *   const realtime = realtimeRuntime();
 *   const { client, session } = await realtime.connectAs(`alice-${realtime.run}`);
 *   const { status, body } = await realtime.api('GET', '/presence/alice', token);
 */
export const realtimeRuntime = () => {
  let started: Runtime | undefined;
  const open: TestClient[] = [];
  const runtime = (): Runtime => {
    if (!started) throw new Error('the runtime is not started yet (use it inside a test)');
    return started;
  };
  const realtime = {
    get runtime(): Runtime {
      return runtime();
    },
    /** Sets this run's users and rooms apart from earlier runs' on the same DynamoDB Local. */
    run: Date.now(),
    api: apiClient(() => runtime().httpUrl),
    /** An authenticated connection (`?token=`), after its `session` frame. */
    async connectAs(userId: string): Promise<{ client: TestClient; session: Frame }> {
      const client = await TestClient.open(
        `${runtime().wsUrl}?token=${await runtime().mintUserToken(userId)}`,
      );
      open.push(client);
      // Generous: the shared machine can be loaded many times over (no timing is asserted).
      return { client, session: await client.nextOfType('session', 30_000) };
    },
    /** Drops every connection opened so far. */
    closeAll(): void {
      for (const client of open.splice(0)) client.socket.terminate();
    },
  };
  beforeAll(async () => {
    started = await startTestRuntime();
  }, 60_000);
  afterEach(() => realtime.closeAll());
  afterAll(() => started?.stop());
  return realtime;
};
