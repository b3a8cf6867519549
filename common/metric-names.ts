/** Names of the service's business counters (lambdas/core/metrics.ts); the stack's alarms and dashboard refer to the same names. */
export const SERVICE_METRICS = {
  notificationsCreated: 'NotificationsCreated',
  receiversWritten: 'ReceiversWritten',
  framesSent: 'FramesSent',
  webhookDeliveries: 'WebhookDeliveries',
  webhookDeliveryFailures: 'WebhookDeliveryFailures',
} as const;

export type ServiceMetric = (typeof SERVICE_METRICS)[keyof typeof SERVICE_METRICS];
