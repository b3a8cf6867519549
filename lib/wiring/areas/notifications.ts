import type { HttpRoute, WiringPart } from '../types';
import { realtimeStateQueues, realtimeStateTables } from './realtime';

const HANDLERS = 'lambdas/handlers/http/notifications';
const PREFERENCES = 'lambdas/handlers/http/preferences';

/**
 * A change of feed items' states: it reads the read-all watermark, writes receivers, and sends the change to the
 * user's connections (`notification.state` / `notification.bulk` frames).
 */
const stateChange = (id: string, path: string, file: string, extra: Partial<HttpRoute> = {}): HttpRoute => ({
  id,
  method: 'POST',
  path,
  handler: `${HANDLERS}/${file}`,
  access: { users: 'any' },
  reads: ['feedState'],
  writes: ['receivers', ...realtimeStateTables],
  sendsTo: [...realtimeStateQueues],
  managesConnections: true,
  ...extra,
});

/**
 * Notifications: create (stored once; a few recipients delivered at once, the rest of the fan-out handed to
 * SQS), the fan-out worker, and the in-app feed.
 * Data model and per-operation request costs: docs/notifications.md.
 */
export const notifications: WiringPart = {
  httpRoutes: [
    {
      id: 'notifications.create',
      method: 'POST',
      path: '/notifications',
      handler: `${HANDLERS}/create.ts`,
      access: { users: 'any', services: 'notifications:write' },
      // It delivers a small list of recipients itself (docs/notifications.md), as the fan-out worker does.
      reads: ['topics', 'preferences', 'feedState'],
      // pushes: the delivery counts of the notification's summary (lambdas/domain/push/report.ts).
      // digests: the batches of recipients it delivers a digested notification to (docs/digests.md).
      writes: [
        'notifications',
        'idempotency',
        'receivers',
        'receipts',
        'pushes',
        'digests',
        ...realtimeStateTables,
      ],
      // push.deliver: the pushes of the recipients it delivers, due now; push: those due later
      // (lambdas/domain/push/hand-over.ts).
      sendsTo: ['fanout', 'push', ...realtimeStateQueues],
      invokes: ['push.deliver'],
      schedules: true,
      managesConnections: true,
    },
    {
      id: 'notifications.feed',
      method: 'GET',
      path: '/notifications',
      handler: `${HANDLERS}/feed.ts`,
      access: { users: 'any' },
      reads: ['receivers', 'feedState', 'notifications'],
      cursorKey: true,
    },
    stateChange('notifications.read', '/notifications/{receiver_id}/read', 'read.ts'),
    stateChange('notifications.archive', '/notifications/{receiver_id}/archive', 'archive.ts'),
    stateChange('notifications.unarchive', '/notifications/{receiver_id}/unarchive', 'unarchive.ts'),
    // Its wake-up is a schedule (or, within a second, a delayed message) sending `wake` to `fanout`.
    stateChange('notifications.snooze', '/notifications/{receiver_id}/snooze', 'snooze.ts', {
      sendsTo: ['fanout', ...realtimeStateQueues],
      schedules: true,
    }),
    // A click: it reads the notification's buttons and queues its bus event on `fanout` (published by the worker).
    stateChange('notifications.interact', '/notifications/{receiver_id}/interact', 'interact.ts', {
      reads: ['feedState', 'notifications'],
      sendsTo: ['fanout', ...realtimeStateQueues],
    }),
    stateChange('notifications.seen', '/notifications/seen', 'seen.ts'),
    // Read-all moves the user's watermark; the other bulk changes go item by item.
    stateChange('notifications.readAll', '/notifications/read-all', 'read-all.ts', {
      writes: ['receivers', 'feedState', ...realtimeStateTables],
    }),
    stateChange('notifications.bulk', '/notifications/bulk', 'bulk.ts', {
      writes: ['receivers', 'feedState', ...realtimeStateTables],
    }),
    {
      id: 'notifications.unreadCount',
      method: 'GET',
      path: '/notifications/unread-count',
      handler: `${HANDLERS}/unread-count.ts`,
      access: { users: 'any' },
      reads: ['receivers', 'feedState'],
    },
    {
      id: 'notifications.counts',
      method: 'GET',
      path: '/notifications/counts',
      handler: `${HANDLERS}/counts.ts`,
      access: { users: 'any' },
      reads: ['receivers', 'feedState'],
    },
    {
      id: 'preferences.get',
      method: 'GET',
      path: '/preferences',
      handler: `${PREFERENCES}/get.ts`,
      access: { users: 'any', services: 'notifications:write' },
      reads: ['preferences'],
    },
    {
      id: 'preferences.put',
      method: 'PUT',
      path: '/preferences',
      handler: `${PREFERENCES}/put.ts`,
      access: { users: 'any', services: 'notifications:write' },
      writes: ['preferences'],
    },
    {
      id: 'preferences.defaults.put',
      method: 'PUT',
      path: '/preferences/defaults',
      handler: `${PREFERENCES}/put-defaults.ts`,
      access: { users: 'admin', services: 'notifications:write' },
      writes: ['preferences'],
    },
  ],
  tables: [
    {
      id: 'notifications',
      purpose: 'each notification stored once: content, recipients, topics, status',
      partitionKey: { name: 'id', type: 'S' },
      ttlAttribute: 'ttl',
    },
    {
      id: 'receivers',
      purpose:
        "per-user in-app feed: one small receiver record per (notification, recipient); 'unread' holds the unread ones",
      partitionKey: { name: 'user_id', type: 'S' },
      sortKey: { name: 'receiver_id', type: 'S' },
      ttlAttribute: 'ttl',
      localIndexes: [
        { name: 'unread', sortKey: { name: 'unread_key', type: 'S' }, projection: ['expires_at'] },
      ],
    },
    {
      id: 'receipts',
      purpose:
        'delivery receipts of recipients without an in-app record, so redelivered fan-out sends no frame twice',
      partitionKey: { name: 'notification_id', type: 'S' },
      sortKey: { name: 'user_id', type: 'S' },
      ttlAttribute: 'ttl',
    },
    {
      id: 'preferences',
      purpose:
        "users' preferences (one item per user who set any, key user:<id>) and the service defaults (key defaults)",
      partitionKey: { name: 'owner', type: 'S' },
    },
    {
      id: 'digests',
      purpose:
        "per-user digest batches: the latest batch of each key, each batch's settings and (once closed) its members and items, and each member's record under its batch",
      partitionKey: { name: 'user_id', type: 'S' },
      sortKey: { name: 'entry', type: 'S' },
      ttlAttribute: 'ttl',
    },
    {
      id: 'feedState',
      purpose: 'per-user feed state: the read-all watermark',
      partitionKey: { name: 'user_id', type: 'S' },
    },
    {
      id: 'idempotency',
      purpose: 'Idempotency-Key records: first response per principal and key, kept 24 h',
      partitionKey: { name: 'key', type: 'S' },
      ttlAttribute: 'ttl',
    },
  ],
  queues: [
    {
      id: 'fanout',
      purpose:
        "notification fan-out: plan messages (split a notification into chunks), topic-page messages (a page of a topic's subscribers), chunk messages (deliver), topic-purge messages (a page of a deleted topic's subscriptions to remove), and the feed's wake (a snooze's end) and interaction (a click's bus event) messages",
      maxReceiveCount: 5,
      visibilityTimeoutSecs: 180,
    },
  ],
  workers: [
    {
      id: 'notifications.fanout',
      handler: 'lambdas/handlers/workers/fanout.ts',
      queue: 'fanout',
      batchSize: 10,
      maxBatchingWindowSecs: 0,
      timeoutSecs: 30,
      memoryMb: 512,
      reads: ['feedState', 'preferences'],
      // subscriptions and topics: the purge of a deleted topic (lambdas/domain/topics/deletion.ts); digests and
      // notifications: digest batches and the digests their closes store (docs/digests.md).
      writes: [
        'notifications',
        'receivers',
        'receipts',
        'subscriptions',
        'topics',
        'pushes',
        'digests',
        ...realtimeStateTables,
      ],
      sendsTo: ['fanout', 'push', ...realtimeStateQueues],
      invokes: ['push.deliver'],
      // `notify.notification.interacted`, the bus event of a click on a feed item (notifications/interact.ts).
      putsEvents: true,
      managesConnections: true,
      // The close of a digest batch it opens, and the release of pushes and toasts held by quiet hours (a schedule
      // per held recipient, at its window's end).
      schedules: true,
    },
  ],
  scheduleTargets: [
    {
      id: 'scheduledNotifications',
      targetQueue: 'fanout',
      description:
        'one-time schedules created for notifications with a future scheduled_at, snoozes and digest closes',
    },
  ],
};
