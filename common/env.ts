/**
 * Names of the environment variables a function reads: where its resources are (the CDK stack sets them from
 * real resources, the local runtime to its stand-ins) and its settings. Every name is declared here and read
 * through common/settings.ts or the reader of its area.
 */
const constant = (id: string): string => id.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

export const envNames = {
  tableName: (tableId: string) => `NOTIFY_TABLE_${constant(tableId)}`,
  queueUrl: (queueId: string) => `NOTIFY_QUEUE_${constant(queueId)}_URL`,
  queueArn: (queueId: string) => `NOTIFY_QUEUE_${constant(queueId)}_ARN`,
  /** A worker a function invokes asynchronously (lib/wiring `invokes`): its ARN. */
  functionArn: (functionId: string) => `NOTIFY_FUNCTION_${constant(functionId).replace(/\W/g, '_')}_ARN`,
  busName: 'NOTIFY_BUS_NAME',
  /** Base URL of the WebSocket API's `@connections` management endpoint (`https://{api}/{stage}`). */
  wsCallbackUrl: 'NOTIFY_WS_CALLBACK_URL',
  /** Role EventBridge Scheduler assumes to send to a schedule target queue. */
  schedulerRoleArn: 'NOTIFY_SCHEDULER_ROLE_ARN',
  scheduleGroup: 'NOTIFY_SCHEDULE_GROUP',
  stage: 'NOTIFY_STAGE',
  /** Partitions of the connections' `byShard` index (stage setting `scale.connection_shards`; default 16). */
  connectionShards: 'NOTIFY_CONNECTION_SHARDS',
  /**
   * Rooms whose audience is larger get presence summaries instead of a frame per change (stage setting
   * `scale.presence.announce_max`; default 100), and how often (`scale.presence.summary_secs`; default 30).
   */
  presenceAnnounceMax: 'NOTIFY_PRESENCE_ANNOUNCE_MAX',
  presenceSummarySecs: 'NOTIFY_PRESENCE_SUMMARY_SECS',
  /** Partitions of each webhook's deliveries (stage setting `scale.webhook_delivery_shards`; default 4). */
  webhookDeliveryShards: 'NOTIFY_WEBHOOK_DELIVERY_SHARDS',
  /** KMS key that envelope-encrypts webhook secrets (AWS); locally NOTIFY_WEBHOOK_LOCAL_KEY instead. */
  webhookKmsKeyId: 'NOTIFY_WEBHOOK_KMS_KEY_ID',
  /** Secrets Manager secret holding the HS256 key of a development stage, read at cold start (AWS only). */
  hs256SecretArn: 'NOTIFY_HS256_SECRET_ARN',
  /**
   * Secrets Manager secret holding the client secret for the IdP's token introspection endpoint (stage setting
   * `auth.introspection_client_secret`), read at cold start (AWS only).
   */
  introspectionClientSecretArn: 'NOTIFY_INTROSPECTION_CLIENT_SECRET_ARN',
  /**
   * Secrets Manager secret whose value CloudFront sends in ORIGIN_VERIFY_HEADER when the HTTP API sits behind
   * CloudFront + WAF; HTTP functions then refuse requests without it (AWS only).
   */
  originSecretArn: 'NOTIFY_ORIGIN_SECRET_ARN',
  /** Secrets Manager secret holding the key that signs paging cursors (AWS; lambdas/core/cursor-mac.ts). */
  cursorKeySecretArn: 'NOTIFY_CURSOR_KEY_SECRET_ARN',
  /** The cursor key itself (local runtime only). */
  cursorKey: 'NOTIFY_CURSOR_KEY',
  /**
   * An HTTP route's id and access rule from the declaration (`{"id", "access"}`, JSON), read by its handler's
   * `httpRoute`: the bundle then does not carry the whole declaration (lambdas/core/http/route.ts).
   */
  routeAccess: 'NOTIFY_ROUTE_ACCESS',
  /** Realtime durations shorter than the contract's, for tests and demos (docs/realtime.md). */
  wsAuthTimeoutSecs: 'NOTIFY_WS_AUTH_TIMEOUT_SECS',
  wsIdleTimeoutSecs: 'NOTIFY_WS_IDLE_TIMEOUT_SECS',
  wsSessionTtlSecs: 'NOTIFY_WS_SESSION_TTL_SECS',
  wsHeartbeatIntervalSecs: 'NOTIFY_WS_HEARTBEAT_INTERVAL_SECS',
  /** Webhook delivery settings (docs/webhooks.md); defaults are the production values. */
  webhookRetrySchedule: 'NOTIFY_WEBHOOK_RETRY_SCHEDULE',
  webhookTimeoutMs: 'NOTIFY_WEBHOOK_TIMEOUT_MS',
  webhookAllowLoopback: 'NOTIFY_WEBHOOK_ALLOW_LOOPBACK',
  webhookMaxQueueDelaySecs: 'NOTIFY_WEBHOOK_MAX_QUEUE_DELAY_SECS',
  webhookDisableAfterSecs: 'NOTIFY_WEBHOOK_DISABLE_AFTER_SECS',
  webhookEndpointConcurrency: 'NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY',
  /** The key that seals webhook secrets (local runtime only; AWS uses webhookKmsKeyId). */
  webhookLocalKey: 'NOTIFY_WEBHOOK_LOCAL_KEY',
} as const;

/** The `auth` settings of contract §1 (`SERVICE__AUTH__<KEY>`), in the order their problems are reported. */
export const AUTH_SETTING_KEYS = [
  'ISSUER',
  'AUDIENCE',
  'SERVICE_AUDIENCE',
  'JWKS_URL',
  'JWKS_CACHE_TTL',
  'CLOCK_SKEW_SECS',
  'HS256_SECRET',
  'ADMIN_ROLE',
  'REPLAY_PROTECTION',
  'INTROSPECTION_URL',
  'INTROSPECTION_CLIENT_ID',
  'INTROSPECTION_CLIENT_SECRET',
  'INTROSPECTION_CACHE_TTL',
  'INTROSPECTION_CALLS_PER_SEC',
] as const;
export type AuthSettingKey = (typeof AUTH_SETTING_KEYS)[number];

export const AUTH_SETTING_PREFIX = 'SERVICE__AUTH__';

/** `JWKS_URL` → `SERVICE__AUTH__JWKS_URL`. */
export const authSettingName = (key: AuthSettingKey): string => `${AUTH_SETTING_PREFIX}${key}`;

/** Header CloudFront adds to every request it forwards to the HTTP API (lower case, as API Gateway passes it). */
export const ORIGIN_VERIFY_HEADER = 'x-notify-origin-verify';

/** The push settings (docs/push.md), `SERVICE__PUSH__<KEY>`: the apps' credentials and, locally, the stand-ins. */
export const PUSH_SETTING_KEYS = [
  /** JSON: app id → provider → where its credentials are (`{"secret": name or ARN}`; locally `{"credentials": …}`). */
  'APPS',
  /** The app of devices registered without `app_id`. */
  'DEFAULT_APP',
  /** Base URLs of the providers (default: the real ones); `npm start` points them at its stand-ins. */
  'FCM_URL',
  'FCM_TOKEN_URL',
  'APNS_URL',
  /** A CA certificate (PEM) the APNs connection trusts besides the system's: the local stand-in's. */
  'APNS_CA',
  'EXPO_URL',
] as const;
export type PushSettingKey = (typeof PUSH_SETTING_KEYS)[number];

export const PUSH_SETTING_PREFIX = 'SERVICE__PUSH__';

/** `APPS` → `SERVICE__PUSH__APPS`. */
export const pushSettingName = (key: PushSettingKey): string => `${PUSH_SETTING_PREFIX}${key}`;
