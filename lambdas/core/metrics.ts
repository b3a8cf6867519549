import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { envNames } from '../../lib/wiring/env';

/**
 * Business metrics of the service as CloudWatch embedded metric format (EMF) log lines. The CDK stack sets
 * POWERTOOLS_METRICS_NAMESPACE; without it (local runtime, tests) nothing is emitted, so local logs stay
 * readable. Dimensions: `service` and `stage`, so stages sharing an account keep their own series.
 */
const namespace = process.env.POWERTOOLS_METRICS_NAMESPACE;
const stage = process.env[envNames.stage];

export const metrics = new Metrics({
  namespace,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'notify',
  defaultDimensions: stage ? { stage } : undefined,
});

/** Names of the counters; the stack's alarms and dashboard refer to the same names. */
export const SERVICE_METRICS = {
  notificationsCreated: 'NotificationsCreated',
  receiversWritten: 'ReceiversWritten',
  framesSent: 'FramesSent',
  webhookDeliveries: 'WebhookDeliveries',
  webhookDeliveryFailures: 'WebhookDeliveryFailures',
} as const;

export type ServiceMetric = (typeof SERVICE_METRICS)[keyof typeof SERVICE_METRICS];

/**
 * This invocation's counters, summed here: Powertools keeps every addMetric value, so a fan-out counting per
 * recipient would log an array of hundreds of values where one sum carries the same information.
 */
const pendingCounts = new Map<ServiceMetric, number>();

/** Adds `count` to a counter of this invocation; flushed by flushMetrics at the end of the invocation. */
export const countMetric = (name: ServiceMetric, count = 1): void => {
  if (count > 0) pendingCounts.set(name, (pendingCounts.get(name) ?? 0) + count);
};

/** Whether counters are written out: a namespace is configured (Powertools also honours POWERTOOLS_METRICS_DISABLED). */
export const metricsEnabled = (): boolean => namespace !== undefined;

/**
 * Writes this invocation's counters as one EMF line (or drops them when metrics are off). Called by the shared
 * wrappers (httpRoute, sqsWorker, withMetrics) when an invocation ends, whether it succeeded or not.
 */
export const flushMetrics = (): void => {
  for (const [name, count] of pendingCounts) metrics.addMetric(name, MetricUnit.Count, count);
  pendingCounts.clear();
  if (!metrics.hasStoredMetrics()) return;
  if (metricsEnabled()) metrics.publishStoredMetrics();
  else metrics.clearMetrics();
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
