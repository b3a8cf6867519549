/**
 * AWS payload limits the service is built for, shared by the CDK stack, the local stand-ins and the handlers
 * so the three cannot drift. Sources and dates: docs/local-standins.md ("Limits").
 */

/**
 * SQS MaximumMessageSize, set explicitly on every queue: 1 MiB, the SQS default and maximum since AWS raised
 * it from 256 KiB (2026-01-29). Counts the body plus the message attributes; also caps a SendMessageBatch.
 */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** SQS DelaySeconds at most (15 minutes); a longer wait goes through an EventBridge Scheduler schedule. */
export const SQS_MAX_DELAY_SECS = 900;

/** EventBridge PutEvents: the entries of one request together (event buses carry 1 MB events since 2026-01-29). */
export const EVENTBRIDGE_MAX_PUT_EVENTS_BYTES = 1_048_576;

/** Lambda `Invoke` with `InvocationType: Event`: the event's bytes (asynchronous invocations carry 1 MB since 2026-01-29). */
export const LAMBDA_MAX_ASYNC_PAYLOAD_BYTES = 1_048_576;

/**
 * API Gateway WebSocket: the largest frame (32 KiB). Notify's own server frames are built to fit one
 * (docs/notifications.md, "Frame size"), and the local gateway splits larger messages into frames of this size.
 */
export const WEBSOCKET_FRAME_MAX_BYTES = 32 * 1024;
