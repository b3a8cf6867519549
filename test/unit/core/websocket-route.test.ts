/**
 * The wrapper of every WebSocket route's function (lambdas/core/websocket-route.ts), `$connect` included: each
 * invocation logs under its own keys (nothing left over from the one before), and its counters go out as an EMF
 * line when it ends, failed or not.
 */
import type { Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';

const loadWithMetrics = async () => {
  vi.resetModules();
  vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'Notify');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  vi.stubEnv('POWERTOOLS_DEV', undefined);
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  vi.stubEnv('LOG_LEVEL', 'INFO');
  const [{ webSocketRoute }, metrics, { logger }] = await Promise.all([
    import('../../../lambdas/core/websocket-route'),
    import('../../../lambdas/core/metrics'),
    import('../../../lambdas/core/logger'),
  ]);
  return { webSocketRoute, ...metrics, logger };
};

/** The JSON lines written to stdout while `action` runs (log lines and EMF lines). */
const captureStdout = async (action: () => Promise<unknown>): Promise<Record<string, unknown>[]> => {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await action().catch(() => undefined);
  } finally {
    spy.mockRestore();
  }
  return lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
};

const event = (routeKey: string, connectionId: string) => ({
  requestContext: { routeKey, connectionId, requestId: `req-${connectionId}` },
});
const context = (id: string) => ({ awsRequestId: id }) as unknown as Context;

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('webSocketRoute', () => {
  it('logs each invocation under its own route and connection, nothing kept from the one before', async () => {
    const { webSocketRoute, logger } = await loadWithMetrics();
    const handler = webSocketRoute(async (e: ReturnType<typeof event>) => {
      if (e.requestContext.connectionId === 'c1') logger.appendKeys({ user_id: 'ann' });
      logger.info('inside');
      return { statusCode: 200 };
    });
    const lines = await captureStdout(async () => {
      await handler(event('$connect', 'c1'), context('lambda-1'));
      await handler(event('subscribe', 'c2'), context('lambda-2'));
    });
    const inside = lines.filter((line) => line.message === 'inside');
    expect(inside).toHaveLength(2);
    expect(inside[0]).toMatchObject({
      route: '$connect',
      connection_id: 'c1',
      request_id: 'req-c1',
      function_request_id: 'lambda-1',
      user_id: 'ann',
    });
    expect(inside[1]).toMatchObject({
      route: 'subscribe',
      connection_id: 'c2',
      function_request_id: 'lambda-2',
    });
    expect(inside[1]).not.toHaveProperty('user_id');
  });

  it('writes the counters of an invocation when it ends, a failed one too', async () => {
    const { webSocketRoute, countMetric, SERVICE_METRICS } = await loadWithMetrics();
    const handler = webSocketRoute(async (e: ReturnType<typeof event>) => {
      countMetric(SERVICE_METRICS.framesSent, 2);
      if (e.requestContext.connectionId === 'broken') throw new Error('down');
      return { statusCode: 200 };
    });
    for (const connectionId of ['fine', 'broken']) {
      const lines = await captureStdout(() =>
        handler(event('$connect', connectionId), context(connectionId)),
      );
      expect(lines.filter((line) => line._aws)).toEqual([expect.objectContaining({ FramesSent: 2 })]);
    }
    // The failure reaches the caller too (its counters are written, as above, not printed here).
    const failed = vi.fn();
    await captureStdout(() => handler(event('$connect', 'broken'), context('again')).catch(failed));
    expect(failed).toHaveBeenCalledWith(expect.objectContaining({ message: 'down' }));
  });
});
