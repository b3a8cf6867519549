import type { HttpRoute, WiringPart } from '../types';
import { BUS_FUNCTION_RETRIES, PUBLISHED_EVENT_PATTERN } from './events';

const HTTP = 'lambdas/handlers/http/webhooks';
const WORKERS = 'lambdas/handlers/workers';

const route = (route: HttpRoute): HttpRoute => ({ memoryMb: 256, ...route });

/**
 * Webhooks: managed endpoints, the matcher (bus → one delivery per matching webhook) and the delivery worker
 * (signed POST, retries through SQS delays and one-time schedules, dead letters). Choices: docs/webhooks.md.
 */
export const webhooks: WiringPart = {
  httpRoutes: [
    route({
      id: 'webhooks.create',
      method: 'POST',
      path: '/webhooks',
      handler: `${HTTP}/create.ts`,
      access: { services: 'webhooks:admin' },
      writes: ['webhooks', 'webhookFilters'],
      webhookSecretKey: 'encrypt',
    }),
    route({
      id: 'webhooks.list',
      method: 'GET',
      path: '/webhooks',
      handler: `${HTTP}/list.ts`,
      access: { services: 'webhooks:admin' },
      reads: ['webhooks'],
    }),
    route({
      id: 'webhooks.delete',
      method: 'DELETE',
      path: '/webhooks/{id}',
      handler: `${HTTP}/delete.ts`,
      access: { services: 'webhooks:admin' },
      writes: ['webhooks', 'webhookFilters'],
    }),
    route({
      id: 'webhooks.deliveries',
      method: 'GET',
      path: '/webhooks/{id}/deliveries',
      handler: `${HTTP}/deliveries.ts`,
      access: { services: 'webhooks:admin' },
      reads: ['webhooks', 'webhookDeliveries'],
    }),
    route({
      id: 'webhooks.retry',
      method: 'POST',
      path: '/webhooks/{id}/deliveries/{delivery_id}/retry',
      handler: `${HTTP}/retry.ts`,
      access: { services: 'webhooks:admin' },
      reads: ['webhooks'],
      writes: ['webhookDeliveries'],
      sendsTo: ['webhookDeliveries'],
    }),
  ],
  tables: [
    {
      id: 'webhooks',
      purpose:
        'webhook endpoints by id (secret envelope-encrypted); byList lists them all by key, newest first; their endpoint slots (`<id>#slot#<n>`, expiring by TTL)',
      partitionKey: { name: 'id', type: 'S' },
      ttlAttribute: 'ttl',
      globalIndexes: [
        {
          name: 'byList',
          partitionKey: { name: 'list', type: 'S' },
          sortKey: { name: 'id', type: 'S' },
          projection: ['name', 'url', 'event_filters', 'created_at', 'enabled', 'disabled_reason'],
        },
      ],
    },
    {
      id: 'webhookFilters',
      purpose:
        'one item per (filter, enabled webhook): an event looks up its type, each `prefix.*` of it and `*` by key',
      partitionKey: { name: 'filter', type: 'S' },
      sortKey: { name: 'webhook_id', type: 'S' },
    },
    {
      id: 'webhookDeliveries',
      purpose:
        'one item per (webhook, event): the claim that makes delivery exactly-once, its attempts, and dead letters; a webhook’s deliveries are spread over `<webhook id>#k` partitions (write sharding, docs/webhooks.md)',
      partitionKey: { name: 'webhook_id', type: 'S' },
      sortKey: { name: 'delivery_id', type: 'S' },
      ttlAttribute: 'ttl',
    },
  ],
  queues: [
    {
      id: 'webhookDeliveries',
      purpose:
        'delivery attempts after the first (made by the matcher): short retries by DelaySeconds, long ones by DelaySeconds and then a schedule for the rest, attempts waiting for a busy endpoint, re-sends',
      maxReceiveCount: 5,
      visibilityTimeoutSecs: 180,
    },
  ],
  busFunctions: [
    {
      id: 'webhooks.match',
      purpose: 'events from the bus to the webhooks whose filters match, each first attempt made at once',
      handler: `${WORKERS}/webhook-match.ts`,
      // Invoked by the bus directly, one event per invocation; makes each delivery's first attempt itself (a
      // POST of up to 15 s), so a queue hop is saved twice over (docs/performance.md, (d)).
      timeoutSecs: 30,
      ...BUS_FUNCTION_RETRIES,
      // One on-failure destination for both bus functions: each record names its function (npm run redrive).
      deadLetterQueue: 'busFunctions',
      memoryMb: 256,
      reads: ['webhookFilters'],
      // As webhooks.deliver: the first attempt may lease an endpoint slot, disable a webhook and queue a retry,
      // and opens the webhook's secret. It schedules nothing: a wait past SQS's longest delay is queued with its
      // rest, which webhooks.deliver schedules (docs/webhooks.md).
      writes: ['webhooks', 'webhookFilters', 'webhookDeliveries'],
      sendsTo: ['webhookDeliveries'],
      webhookSecretKey: 'decrypt',
    },
  ],
  workers: [
    {
      id: 'webhooks.deliver',
      queue: 'webhookDeliveries',
      handler: `${WORKERS}/webhook-deliver.ts`,
      // Each POST may take its 15 s timeout; a small batch keeps one slow receiver from holding many messages.
      batchSize: 5,
      maxBatchingWindowSecs: 0,
      timeoutSecs: 30,
      // A slow endpoint holds at most NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY (10) invocations of these 50; the
      // rest keep delivering to other endpoints (docs/webhooks.md, "Concurrency").
      maxConcurrency: 50,
      memoryMb: 256,
      writes: ['webhooks', 'webhookFilters', 'webhookDeliveries'],
      sendsTo: ['webhookDeliveries'],
      schedules: true,
      webhookSecretKey: 'decrypt',
    },
  ],
  busRules: [
    {
      id: 'webhooks.toMatcher',
      description: 'events published through POST /events, to the webhook matcher',
      pattern: PUBLISHED_EVENT_PATTERN,
      targetFunction: 'webhooks.match',
    },
  ],
  scheduleTargets: [
    {
      id: 'webhookRetries',
      targetQueue: 'webhookDeliveries',
      description: 'one-time schedules for webhook retries later than SQS’s 15-minute DelaySeconds limit',
    },
  ],
};
