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
