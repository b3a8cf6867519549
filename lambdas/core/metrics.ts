import * as envNames from '../../common/env-names';
import type { ServiceMetric } from '../../common/metric-names';

export { SERVICE_METRICS, type ServiceMetric } from '../../common/metric-names';

/**
 * Business metrics of the service as CloudWatch embedded metric format (EMF) log lines, written here: a few
 * counters a line need no library (Powertools metrics was ≈ 10 KiB of every bundle). The CDK stack sets
 * POWERTOOLS_METRICS_NAMESPACE; without it (local runtime, tests), or with POWERTOOLS_METRICS_DISABLED=true,
 * nothing is written, so local logs stay readable. Dimensions: `service` and `stage`, so stages sharing an
 * account keep their own series.
 */
const namespace = process.env.POWERTOOLS_METRICS_NAMESPACE;
const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'notify';
const stage = process.env[envNames.stage];
const disabled = process.env.POWERTOOLS_METRICS_DISABLED?.toLowerCase() === 'true';

/**
 * This invocation's counters, summed: a fan-out counting per recipient logs one sum, not an array of hundreds
 * of values.
 */
const pendingCounts = new Map<ServiceMetric, number>();

/** Adds `count` to a counter of this invocation; flushed by flushMetrics at the end of the invocation. */
export const countMetric = (name: ServiceMetric, count = 1): void => {
  if (count > 0) pendingCounts.set(name, (pendingCounts.get(name) ?? 0) + count);
};

/** Whether counters are written out: a namespace is configured and metrics are not disabled. */
export const metricsEnabled = (): boolean => namespace !== undefined && !disabled;

/** One EMF line: the counters as members of a JSON object whose `_aws` block tells CloudWatch what they are. */
const emfLine = (counts: ReadonlyMap<ServiceMetric, number>): string => {
  const dimensions = stage ? { service: serviceName, stage } : { service: serviceName };
  return JSON.stringify({
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [Object.keys(dimensions)],
          Metrics: [...counts.keys()].map((name) => ({ Name: name, Unit: 'Count' })),
        },
      ],
    },
    ...dimensions,
    ...Object.fromEntries(counts),
  });
};

/**
 * Writes this invocation's counters as one EMF line (or drops them when metrics are off). Called by the shared
 * wrappers (httpRoute, sqsWorker, withMetrics) when an invocation ends, whether it succeeded or not. Straight
 * to stdout, as one line: the Lambda runtime's `console` would prefix it, and CloudWatch reads EMF only from
 * a line that is the JSON object alone.
 */
export const flushMetrics = (): void => {
  if (pendingCounts.size > 0 && metricsEnabled()) process.stdout.write(`${emfLine(pendingCounts)}\n`);
  pendingCounts.clear();
};

/** Wraps a Lambda handler so that its counters are flushed when each invocation ends. */
export const withMetrics =
  <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    try {
      return await handler(...args);
    } finally {
      flushMetrics();
    }
  };
