/**
 * The local gateway's socket opening after `$connect` answers (`webSocket.openDelayMs`, as API Gateway completes
 * the handshake after its integration returns): a client that leaves in between was connected all the same, and
 * gets its `$disconnect` (found by a review: the gateway forgot the connection, a `$disconnect` lost for sure).
 * Exact delivery: this is about the gateway forgetting it, not about API Gateway's best effort.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { recordedEvents } from '../support/fixtures/recorder';
import { fixtureWiring } from '../support/fixtures/wiring';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;

beforeAll(async () => {
  runtime = await startTestRuntime({
    wiring: fixtureWiring,
    webSocket: { openDelayMs: 1_000 },
    delivery: { mode: 'exact' },
  });
});
afterAll(() => runtime?.stop());

const until = async (condition: () => boolean) => {
  for (let attempt = 0; attempt < 200 && !condition(); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return condition();
};

const connectionIdOf = (event: unknown) =>
  (event as { requestContext: { connectionId: string } }).requestContext.connectionId;

describe('a client that leaves before its socket opens', () => {
  it('gets its $disconnect, as any connection whose $connect succeeded', async () => {
    const connectsBefore = recordedEvents('$connect').length;
    const socket = new WebSocket(runtime.wsUrl);
    socket.on('error', () => {});
    expect(await until(() => recordedEvents('$connect').length > connectsBefore)).toBe(true);
    socket.terminate();
    const connectionId = connectionIdOf(recordedEvents('$connect').at(-1));
    expect(
      await until(() =>
        recordedEvents('$disconnect').some((event) => connectionIdOf(event) === connectionId),
      ),
    ).toBe(true);
  }, 30_000);
});
