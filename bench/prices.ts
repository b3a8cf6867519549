/**
 * AWS list prices, us-east-1, on-demand, without free tiers, from the AWS pricing pages of each service as
 * published late 2026. Update `asOf` with the figures.
 */
export const PRICES = {
  asOf: '2026-12-01',
  region: 'us-east-1',
  source: 'AWS pricing pages, late 2026',
  /** HTTP API, first 300 M requests a month. */
  httpApiPerMillionRequests: 1.0,
  /** WebSocket API: messages sent and received, in 32 KB units. */
  webSocketPerMillionMessages: 1.0,
  webSocketPerMillionConnectionMinutes: 0.25,
  lambdaPerMillionRequests: 0.2,
  /** arm64 (the stack's architecture); INIT duration billed too since August 2025. */
  lambdaArmPerGbSecond: 0.0000133334,
  dynamoDbPerMillionWriteUnits: 0.625,
  dynamoDbPerMillionReadUnits: 0.125,
  /** SQS standard queues: each 64 KB chunk of a request is a request. */
  sqsPerMillionRequests: 0.4,
  /** EventBridge custom events, 64 KB chunks. */
  eventBridgePerMillionEvents: 1.0,
  schedulerPerMillionInvocations: 1.0,
} as const;

/**
 * Monthly prices of what a deployment costs while nobody uses it (us-east-1 list prices, free tiers ignored;
 * AWS bills them prorated by the hour). From the CloudWatch, KMS, Secrets Manager and WAF pricing pages.
 */
export const MONTHLY_PRICES = {
  /** Standard-resolution alarm, per metric it evaluates (a metric-math alarm pays for each metric). */
  alarmPerMetric: 0.1,
  /** High-resolution alarm (period under 60 s), per metric. */
  highResolutionAlarmPerMetric: 0.3,
  compositeAlarm: 0.5,
  dashboard: 3.0,
  /** Customer managed KMS key (AWS managed keys are free). */
  kmsKey: 1.0,
  secret: 0.4,
  webAcl: 5.0,
  /** Each rule of a web ACL, a managed rule group counting as one. */
  webAclRule: 1.0,
  /**
   * Empty receives of an idle SQS event source mapping: Lambda keeps about 5 pollers long-polling (20 s) each
   * queue, ≈ 5 × 3 receives a minute, billed as SQS requests.
   */
  idleSqsReceivesPerMonth: 5 * 3 * 60 * 730,
  hoursPerMonth: 730,
} as const;
