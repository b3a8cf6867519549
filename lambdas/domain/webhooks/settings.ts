import * as envNames from '../../../common/env-names';
import { SQS_MAX_DELAY_SECS } from '../../../common/limits';
import {
  durationListSetting,
  flagSetting,
  positiveNumberSetting,
  positiveSecondsSetting,
} from '../../../common/settings';

/**
 * Webhook delivery settings, read from the environment once per process (names in common/env.ts). Defaults are the production values;
 * tests and demos shorten them (docs/webhooks.md lists every variable).
 */

/** Delays before attempts 2, 3, … (the first attempt is immediate): Standard Webhooks' example schedule. */
export const DEFAULT_RETRY_SCHEDULE_SECS = [5, 300, 1800, 7200, 18000, 36000, 36000] as const;
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Attempts in flight to one webhook at most (per-endpoint concurrency); more wait their turn in the queue. */
export const DEFAULT_ENDPOINT_CONCURRENCY = 10;
/** Partitions of one webhook's deliveries (write sharding, `deliveryShards` in deliveries.ts). */
export const DEFAULT_DELIVERY_SHARDS = 4;
/** Most shards: a re-send finds its delivery with one BatchGetItem (100 keys). */
export const MAX_DELIVERY_SHARDS = 100;
/** A webhook failing this long without one success is disabled. */
export const DEFAULT_DISABLE_AFTER_SECS = 5 * 24 * 3600;

export interface WebhookSettings {
  /** Delay before attempt n+2 is retrySchedule[n]; attempts in all = schedule length + 1. */
  readonly retryScheduleSecs: readonly number[];
  readonly timeoutMs: number;
  /** Local mode: `http://` and loopback addresses are allowed (nothing else private is). */
  readonly allowLoopback: boolean;
  /** Retries later than this go through EventBridge Scheduler instead of SQS DelaySeconds. */
  readonly maxQueueDelaySecs: number;
  readonly disableAfterSecs: number;
  readonly endpointConcurrency: number;
}

export const parseWebhookSettings = (env: Readonly<Record<string, string | undefined>>): WebhookSettings => ({
  retryScheduleSecs: durationListSetting(envNames.webhookRetrySchedule, DEFAULT_RETRY_SCHEDULE_SECS, env),
  timeoutMs: positiveNumberSetting(envNames.webhookTimeoutMs, DEFAULT_TIMEOUT_MS, env),
  allowLoopback: flagSetting(envNames.webhookAllowLoopback, env),
  maxQueueDelaySecs: Math.min(
    SQS_MAX_DELAY_SECS,
    positiveSecondsSetting(envNames.webhookMaxQueueDelaySecs, SQS_MAX_DELAY_SECS, env),
  ),
  disableAfterSecs: positiveSecondsSetting(envNames.webhookDisableAfterSecs, DEFAULT_DISABLE_AFTER_SECS, env),
  endpointConcurrency: Math.ceil(
    positiveNumberSetting(envNames.webhookEndpointConcurrency, DEFAULT_ENDPOINT_CONCURRENCY, env),
  ),
});

let cached: WebhookSettings | undefined;

export const webhookSettings = (): WebhookSettings => {
  cached ??= parseWebhookSettings(process.env);
  return cached;
};
