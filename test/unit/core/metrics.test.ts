/** EMF counters: one line per invocation with the stage's dimensions on AWS, nothing at all without a namespace. */
import { afterEach, describe, expect, it, vi } from 'vitest';

const captureStdout = async (action: () => Promise<void>): Promise<string[]> => {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await action();
  } finally {
    spy.mockRestore();
  }
  return lines;
};

const loadMetrics = async (env: Record<string, string | undefined>) => {
  vi.resetModules();
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return import('../../../lambdas/core/metrics');
};

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('service metrics', () => {
  it('writes the counters of an invocation as one EMF line with service and stage dimensions', async () => {
    const { countMetric, SERVICE_METRICS, withMetrics } = await loadMetrics({
      POWERTOOLS_METRICS_NAMESPACE: 'Notify',
      POWERTOOLS_SERVICE_NAME: 'notify',
      POWERTOOLS_METRICS_DISABLED: 'false',
      POWERTOOLS_DEV: undefined,
      NOTIFY_STAGE: 'prodtest',
    });
    const handler = withMetrics(async () => {
      countMetric(SERVICE_METRICS.webhookDeliveries);
      countMetric(SERVICE_METRICS.webhookDeliveries);
      countMetric(SERVICE_METRICS.framesSent, 3);
      countMetric(SERVICE_METRICS.framesSent, 0);
      return 'done';
    });
    let result: string | undefined;
    const lines = await captureStdout(async () => {
      result = await handler();
    });
    expect(result).toBe('done');
    const emf = lines.map((line) => JSON.parse(line)).filter((entry) => entry._aws);
    expect(emf).toHaveLength(1);
    const [entry] = emf;
    expect(entry._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'Notify',
      Dimensions: [['service', 'stage']],
      Metrics: expect.arrayContaining([
        { Name: 'FramesSent', Unit: 'Count' },
        { Name: 'WebhookDeliveries', Unit: 'Count' },
      ]),
    });
    expect(entry._aws.CloudWatchMetrics[0].Metrics).toHaveLength(2);
    expect(entry._aws.Timestamp).toEqual(expect.any(Number));
    expect(lines.filter((line) => line.includes('_aws'))[0]?.endsWith('}\n')).toBe(true);
    // One sum per counter, however often it was counted (a fan-out counts per recipient).
    expect(entry).toMatchObject({
      service: 'notify',
      stage: 'prodtest',
      FramesSent: 3,
      WebhookDeliveries: 2,
    });
  });

  it('flushes when the invocation fails too', async () => {
    const { countMetric, SERVICE_METRICS, withMetrics } = await loadMetrics({
      POWERTOOLS_METRICS_NAMESPACE: 'Notify',
      POWERTOOLS_METRICS_DISABLED: 'false',
      NOTIFY_STAGE: 'prodtest',
    });
    const handler = withMetrics(async () => {
      countMetric(SERVICE_METRICS.webhookDeliveryFailures);
      throw new Error('boom');
    });
    const lines = await captureStdout(async () => {
      await expect(handler()).rejects.toThrow('boom');
    });
    expect(lines.join('')).toContain('"WebhookDeliveryFailures":1');
  });

  it('writes nothing without a namespace (local runtime and tests), and forgets the counters', async () => {
    const { countMetric, flushMetrics, SERVICE_METRICS } = await loadMetrics({
      POWERTOOLS_METRICS_NAMESPACE: undefined,
    });
    const lines = await captureStdout(async () => {
      countMetric(SERVICE_METRICS.notificationsCreated);
      flushMetrics();
    });
    expect(lines).toEqual([]);
  });

  it('writes nothing when disabled on AWS (POWERTOOLS_METRICS_DISABLED=true), nor an empty line', async () => {
    const disabled = await loadMetrics({
      POWERTOOLS_METRICS_NAMESPACE: 'Notify',
      POWERTOOLS_METRICS_DISABLED: 'true',
    });
    const enabled = await loadMetrics({
      POWERTOOLS_METRICS_NAMESPACE: 'Notify',
      POWERTOOLS_METRICS_DISABLED: 'false',
    });
    const lines = await captureStdout(async () => {
      disabled.countMetric(disabled.SERVICE_METRICS.notificationsCreated);
      disabled.flushMetrics();
      // An invocation that counted nothing writes no line either.
      enabled.flushMetrics();
    });
    expect(lines).toEqual([]);
  });

  it('starts each invocation from zero', async () => {
    const { countMetric, SERVICE_METRICS, withMetrics } = await loadMetrics({
      POWERTOOLS_METRICS_NAMESPACE: 'Notify',
      POWERTOOLS_METRICS_DISABLED: 'false',
      NOTIFY_STAGE: 'prodtest',
    });
    const handler = withMetrics(async (frames: number) => {
      for (let i = 0; i < frames; i += 1) countMetric(SERVICE_METRICS.framesSent);
    });
    const lines = await captureStdout(async () => {
      await handler(100);
      await handler(2);
    });
    const sums = lines
      .map((line) => JSON.parse(line))
      .filter((entry) => entry._aws)
      .map((entry) => entry.FramesSent);
    expect(sums).toEqual([100, 2]);
  });
});
