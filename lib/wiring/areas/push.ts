import type { WiringPart } from '../types';

const HTTP = 'lambdas/handlers/http/push';
const WORKERS = 'lambdas/handlers/workers';

/**
 * Push to registered devices: the `push` queue (the pushes of delivered recipients, later attempts, dead letters),
 * its worker (claims, sends through the providers, outcomes, pruning) and the push records. Choices: docs/push-delivery.md.
 */
export const push: WiringPart = {
  httpRoutes: [
    {
      id: 'push.summary',
      method: 'GET',
      path: '/sent-notifications/{notification_id}',
      handler: `${HTTP}/summary.ts`,
      access: { users: 'any', services: 'any' },
      reads: ['notifications', 'pushes'],
    },
    {
      id: 'push.records',
      method: 'GET',
      path: '/sent-notifications/{notification_id}/pushes',
      handler: `${HTTP}/records.ts`,
      access: { users: 'any', services: 'any' },
      reads: ['notifications', 'pushes'],
    },
  ],
  tables: [
    {
      id: 'pushes',
      purpose:
        "per notification: one record per recipient holding its devices' pushes (the claim that makes each push exactly-once, each status, provider id or reason, attempts) and a `summary` item of delivery counts; kept 30 days",
      partitionKey: { name: 'notification_id', type: 'S' },
      sortKey: { name: 'record_key', type: 'S' },
      ttlAttribute: 'ttl',
    },
  ],
  queues: [
    {
      id: 'push',
      purpose:
        "pushes that wait (a fallback step such as `unread` routing: a message per chunk of up to 100, delayed), later attempts after a retry answer, and dead letters of pushes failed for good; its DLQ is also where the push worker's asynchronous invocations end when they fail for good",
      maxReceiveCount: 5,
      visibilityTimeoutSecs: 180,
    },
  ],
  workers: [
    {
      id: 'push.deliver',
      queue: 'push',
      handler: `${WORKERS}/push-deliver.ts`,
      batchSize: 10,
      maxBatchingWindowSecs: 0,
      // A message of 100 recipients sends 20 at a time (in about a second); an invocation cut off by a provider
      // stalling is safe: each push's claim is taken over once its deadline has passed.
      timeoutSecs: 30,
      memoryMb: 256,
      // notifications: the content; receivers and feedState: fallback steps (`unread` routing) and the badge (the
      // unread count). preferences: steps and later attempts decide on the preferences of sending time.
      reads: ['notifications', 'receivers', 'feedState', 'preferences'],
      // devices: pruned when a provider calls a token dead. receipts: a step's throttle counter.
      writes: ['pushes', 'devices', 'receipts'],
      // fanout: a `toast` step after a `push` step (docs/delivery-rules.md, "Fallback").
      sendsTo: ['push', 'fanout'],
      schedules: true,
      putsEvents: true,
      push: { readsCredentials: ['fcm', 'apns', 'webpush', 'expo'] },
      // The first attempts of pushes due now come by asynchronous invocation, a message per chunk (no SQS
      // request: docs/push.md, "Costs"); Lambda retries a failed one twice (1 and 2 minutes later), then its
      // record goes to `push-dlq`. Six hours covers a throttled backlog; older, Lambda drops it (alarmed).
      invokedAsync: { retryAttempts: 2, maxEventAgeSecs: 6 * 3600 },
    },
  ],
  scheduleTargets: [
    {
      id: 'pushWaits',
      targetQueue: 'push',
      description:
        'one-time schedules for push waits past SQS’s 15-minute DelaySeconds limit (fallback steps, long Retry-After)',
    },
  ],
};
