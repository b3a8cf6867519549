import { envNames } from '../../../common/env';
import { SQS_MAX_DELAY_SECS } from '../../../common/limits';
import { flagSetting } from '../../../common/settings';

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

const ENV = {
  retrySchedule: envNames.webhookRetrySchedule,
  timeoutMs: envNames.webhookTimeoutMs,
  maxQueueDelaySecs: envNames.webhookMaxQueueDelaySecs,
  disableAfterSecs: envNames.webhookDisableAfterSecs,
  endpointConcurrency: envNames.webhookEndpointConcurrency,
};

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

const UNIT_SECS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** `5s`, `300ms`, `5m`, `2h`, `1d`, or plain seconds → seconds. */
export const parseDuration = (text: string, name: string): number => {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/i.exec(text.trim());
  if (!match?.[1]) throw new Error(`${name}: expected a duration like 5s, 5m or 2h, got "${text}"`);
  return Number(match[1]) * (UNIT_SECS[(match[2] ?? 's').toLowerCase()] ?? 1);
};

const positiveNumber = (raw: string, name: string): number => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name}: expected a positive number, got "${raw}"`);
  return value;
};

export const parseWebhookSettings = (env: Record<string, string | undefined>): WebhookSettings => {
  const schedule = env[ENV.retrySchedule]?.trim();
  const retryScheduleSecs = schedule
    ? schedule.split(',').map((part) => parseDuration(part, ENV.retrySchedule))
    : [...DEFAULT_RETRY_SCHEDULE_SECS];
  const timeout = env[ENV.timeoutMs]?.trim();
  const maxDelay = env[ENV.maxQueueDelaySecs]?.trim();
  const disableAfter = env[ENV.disableAfterSecs]?.trim();
  const endpointConcurrency = env[ENV.endpointConcurrency]?.trim();
  return {
    retryScheduleSecs,
    timeoutMs: timeout ? positiveNumber(timeout, ENV.timeoutMs) : DEFAULT_TIMEOUT_MS,
    allowLoopback: flagSetting(envNames.webhookAllowLoopback, env),
    maxQueueDelaySecs: Math.min(
      SQS_MAX_DELAY_SECS,
      maxDelay ? positiveNumber(maxDelay, ENV.maxQueueDelaySecs) : SQS_MAX_DELAY_SECS,
    ),
    disableAfterSecs: disableAfter
      ? positiveNumber(disableAfter, ENV.disableAfterSecs)
      : DEFAULT_DISABLE_AFTER_SECS,
    endpointConcurrency: endpointConcurrency
      ? Math.ceil(positiveNumber(endpointConcurrency, ENV.endpointConcurrency))
      : DEFAULT_ENDPOINT_CONCURRENCY,
  };
};

let cached: WebhookSettings | undefined;

export const webhookSettings = (): WebhookSettings => {
  cached ??= parseWebhookSettings(process.env);
  return cached;
};
