/**
 * Names of the environment variables a function reads: where its resources are (the CDK stack sets them from
 * real resources, the local runtime to its stand-ins) and its settings. Every name is declared here or in
 * common/env.ts and read through common/settings.ts or the reader of its area. Function code imports this module
 * as a namespace (`import * as envNames from …`): esbuild then bundles only the names a function reads, where an
 * object of them all would ride in every bundle.
 */
const constant = (id: string): string => id.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

export const tableName = (tableId: string) => `NOTIFY_TABLE_${constant(tableId)}`;
export const queueUrl = (queueId: string) => `NOTIFY_QUEUE_${constant(queueId)}_URL`;
export const queueArn = (queueId: string) => `NOTIFY_QUEUE_${constant(queueId)}_ARN`;
/** A worker a function invokes asynchronously (lib/wiring `invokes`): its ARN. */
export const functionArn = (functionId: string) =>
  `NOTIFY_FUNCTION_${constant(functionId).replace(/\W/g, '_')}_ARN`;
export const busName = 'NOTIFY_BUS_NAME';
/** Base URL of the WebSocket API's `@connections` management endpoint (`https://{api}/{stage}`). */
export const wsCallbackUrl = 'NOTIFY_WS_CALLBACK_URL';
/** Role EventBridge Scheduler assumes to send to a schedule target queue. */
export const schedulerRoleArn = 'NOTIFY_SCHEDULER_ROLE_ARN';
export const scheduleGroup = 'NOTIFY_SCHEDULE_GROUP';
export const stage = 'NOTIFY_STAGE';
/** Partitions of the connections' `byShard` index (stage setting `scale.connection_shards`; default 16). */
export const connectionShards = 'NOTIFY_CONNECTION_SHARDS';
/**
 * Rooms whose audience is larger get presence summaries instead of a frame per change (stage setting
 * `scale.presence.announce_max`; default 100), and how often (`scale.presence.summary_secs`; default 30).
 */
export const presenceAnnounceMax = 'NOTIFY_PRESENCE_ANNOUNCE_MAX';
export const presenceSummarySecs = 'NOTIFY_PRESENCE_SUMMARY_SECS';
/** Partitions of each webhook's deliveries (stage setting `scale.webhook_delivery_shards`; default 4). */
export const webhookDeliveryShards = 'NOTIFY_WEBHOOK_DELIVERY_SHARDS';
/** KMS key that envelope-encrypts webhook secrets (AWS); locally NOTIFY_WEBHOOK_LOCAL_KEY instead. */
export const webhookKmsKeyId = 'NOTIFY_WEBHOOK_KMS_KEY_ID';
/** Secrets Manager secret holding the HS256 key of a development stage, read at cold start (AWS only). */
export const hs256SecretArn = 'NOTIFY_HS256_SECRET_ARN';
/**
 * Secrets Manager secret holding the client secret for the IdP's token introspection endpoint (stage setting
 * `auth.introspection_client_secret`), read at cold start (AWS only).
 */
export const introspectionClientSecretArn = 'NOTIFY_INTROSPECTION_CLIENT_SECRET_ARN';
/**
 * Secrets Manager secret whose value CloudFront sends in ORIGIN_VERIFY_HEADER when the HTTP API sits behind
 * CloudFront + WAF; HTTP functions then refuse requests without it (AWS only).
 */
export const originSecretArn = 'NOTIFY_ORIGIN_SECRET_ARN';
/** Secrets Manager secret holding the key that signs paging cursors (AWS; lambdas/core/cursor-mac.ts). */
export const cursorKeySecretArn = 'NOTIFY_CURSOR_KEY_SECRET_ARN';
/** The cursor key itself (local runtime only). */
export const cursorKey = 'NOTIFY_CURSOR_KEY';
/**
 * An HTTP route's id and access rule from the declaration (`{"id", "access"}`, JSON), read by its handler's
 * `httpRoute`: the bundle then does not carry the whole declaration (lambdas/core/http/route.ts).
 */
export const routeAccess = 'NOTIFY_ROUTE_ACCESS';
/** Realtime durations shorter than the contract's, for tests and demos (docs/realtime.md). */
export const wsAuthTimeoutSecs = 'NOTIFY_WS_AUTH_TIMEOUT_SECS';
export const wsIdleTimeoutSecs = 'NOTIFY_WS_IDLE_TIMEOUT_SECS';
export const wsSessionTtlSecs = 'NOTIFY_WS_SESSION_TTL_SECS';
export const wsHeartbeatIntervalSecs = 'NOTIFY_WS_HEARTBEAT_INTERVAL_SECS';
/** Webhook delivery settings (docs/webhooks.md); defaults are the production values. */
export const webhookRetrySchedule = 'NOTIFY_WEBHOOK_RETRY_SCHEDULE';
export const webhookTimeoutMs = 'NOTIFY_WEBHOOK_TIMEOUT_MS';
export const webhookAllowLoopback = 'NOTIFY_WEBHOOK_ALLOW_LOOPBACK';
export const webhookMaxQueueDelaySecs = 'NOTIFY_WEBHOOK_MAX_QUEUE_DELAY_SECS';
export const webhookDisableAfterSecs = 'NOTIFY_WEBHOOK_DISABLE_AFTER_SECS';
export const webhookEndpointConcurrency = 'NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY';
/** The key that seals webhook secrets (local runtime only; AWS uses webhookKmsKeyId). */
export const webhookLocalKey = 'NOTIFY_WEBHOOK_LOCAL_KEY';
