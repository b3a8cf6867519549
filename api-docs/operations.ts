/**
 * What the API description says about each HTTP route beyond its declaration (lib/wiring) and its request
 * schemas (read from the handler): a summary, the success responses with their schemas, and the route's own
 * error conditions. Errors every route shares (auth, body checks, rate limit, 5xx) are added by openapi.ts.
 */
import type { ErrorCode } from '../lambdas/core/errors';
import { describeBound } from '../lambdas/core/identifiers';
import type * as z from '../lambdas/core/zod';
import { deviceListSchema, deviceSchema } from '../lambdas/domain/devices/responses';
import { MAX_DEVICES_PER_USER } from '../lambdas/domain/devices/schema';
import { eventAcceptedSchema } from '../lambdas/domain/events/responses';
import { healthSchema, liveSchema, readySchema } from '../lambdas/domain/health/responses';
import {
  bulkChangeSchema,
  feedCountsSchema,
  feedPageSchema,
  itemStateSchema,
  markedReadSchema,
  markedSeenSchema,
  notificationAcceptedSchema,
  readAllSchema,
  receiverSchema,
  unreadCountSchema,
} from '../lambdas/domain/notifications/responses';
import { defaultsSchema, preferencesSchema } from '../lambdas/domain/preferences/responses';
import { MAX_RULES } from '../lambdas/domain/preferences/schema';
import { notificationSummarySchema, pushPageSchema } from '../lambdas/domain/push/responses';
import { vapidPublicKeySchema } from '../lambdas/domain/push/vapid-schema';
import {
  broadcastAcceptedSchema,
  scopePresenceSchema,
  userPresenceSchema,
} from '../lambdas/domain/realtime/responses';
import {
  subscriptionListSchema,
  subscriptionSchema,
  topicDeletionSchema,
  topicListSchema,
  topicSchema,
} from '../lambdas/domain/topics/responses';
import {
  deliveryPageSchema,
  retryAcceptedSchema,
  webhookListSchema,
  webhookSchema,
} from '../lambdas/domain/webhooks/responses';

export interface SuccessDoc {
  readonly description: string;
  /** A JSON body; absent for 204 and for text bodies. */
  readonly schema?: z.core.$ZodType;
  /** A non-JSON body: its media type. */
  readonly mediaType?: string;
}

/** The groups of operations, in the document's order. */
export const TAGS = {
  health: 'Health, metrics and this description (no authentication)',
  notifications: 'Creating notifications and the in-app feed',
  preferences:
    'What reaches a user: per event type and channel, topic mutes, service defaults and required types',
  events: 'Domain events onto the bus (to `topic:<event_type>` WebSocket subscribers and webhooks)',
  topics: 'Topics and their subscriptions (a notification naming a topic reaches every subscriber)',
  devices: 'Push device tokens',
  presence: 'Who is online, per user and per room',
  realtime: 'Frames to WebSocket connections',
  webhooks: 'Webhook endpoints, deliveries and dead letters (Standard Webhooks)',
} as const;

export interface OperationDoc {
  readonly tag: keyof typeof TAGS;
  readonly summary: string;
  readonly description?: string;
  readonly success: Readonly<Record<number, SuccessDoc>>;
  /** Route-specific error conditions (besides the ones openapi.ts adds to every route of its kind). */
  readonly errors?: Partial<Record<ErrorCode, string>>;
  /** Whether the route honours an `Idempotency-Key` header. */
  readonly idempotent?: boolean;
}

/** Component names of the shared response schemas in the OpenAPI document. */
export const RESPONSE_COMPONENTS: Readonly<Record<string, z.core.$ZodType>> = {
  NotificationAccepted: notificationAcceptedSchema,
  Receiver: receiverSchema,
  FeedPage: feedPageSchema,
  MarkedRead: markedReadSchema,
  ItemState: itemStateSchema,
  MarkedSeen: markedSeenSchema,
  BulkChange: bulkChangeSchema,
  ReadAll: readAllSchema,
  UnreadCount: unreadCountSchema,
  FeedCounts: feedCountsSchema,
  NotificationSummary: notificationSummarySchema,
  PushPage: pushPageSchema,
  Preferences: preferencesSchema,
  PreferenceDefaults: defaultsSchema,
  EventAccepted: eventAcceptedSchema,
  Topic: topicSchema,
  TopicList: topicListSchema,
  TopicDeletion: topicDeletionSchema,
  Subscription: subscriptionSchema,
  VapidPublicKey: vapidPublicKeySchema,
  SubscriptionList: subscriptionListSchema,
  Device: deviceSchema,
  DeviceList: deviceListSchema,
  Webhook: webhookSchema,
  WebhookList: webhookListSchema,
  DeliveryPage: deliveryPageSchema,
  RetryAccepted: retryAcceptedSchema,
  UserPresence: userPresenceSchema,
  ScopePresence: scopePresenceSchema,
  BroadcastAccepted: broadcastAcceptedSchema,
  Live: liveSchema,
  Health: healthSchema,
  Ready: readySchema,
};

const IDEMPOTENCY =
  'An `Idempotency-Key` header (at most 128 characters) makes retries safe: the same key from the same ' +
  'principal within 24 h returns the first response and does the work once.';

export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'health.live': {
    tag: 'health',
    summary: 'Process liveness',
    success: { 200: { description: 'The process answers', schema: liveSchema } },
  },
  'health.ready': {
    tag: 'health',
    summary: 'Dependency readiness',
    success: {
      200: { description: 'Every dependency answers', schema: readySchema },
      503: { description: 'A dependency does not answer (body names it)', schema: readySchema },
    },
  },
  'health.health': {
    tag: 'health',
    summary: 'Aggregate health',
    success: {
      200: { description: '`ok`, or `degraded` when a dependency check fails', schema: healthSchema },
    },
  },
  'health.metrics': {
    tag: 'health',
    summary: 'Prometheus scrape endpoint',
    description: 'Unauthenticated; restrict it at the ingress in production.',
    success: { 200: { description: 'Prometheus text format 0.0.4', mediaType: 'text/plain' } },
  },
  'platform.openapi': {
    tag: 'health',
    summary: 'This OpenAPI document',
    success: {
      200: { description: 'The OpenAPI 3.1 description of the REST API', mediaType: 'application/json' },
    },
  },
  'notifications.create': {
    tag: 'notifications',
    summary: 'Create a notification and hand its fan-out to the queue',
    description:
      '`in_app` writes one receiver record per recipient into their feed; `toast` and `realtime` send a ' +
      '`notification` frame to each recipient’s open connections. A scheduled notification does all of this at ' +
      '`scheduled_at`; an expired one is no longer listed, counted or delivered. A service names its audience: ' +
      '`recipient_ids`, or `topics` (every subscriber of those topics, each user once), or both. A user token ' +
      'notifies only its own user, who need not be named: without `recipient_ids` the recipient is the caller. ' +
      'Also checked: ' +
      '`data` at most 16 KiB serialized, `expires_at` after now and after `scheduled_at`, `scheduled_at` at most ' +
      `365 days ahead, no duplicates in \`channels\`, \`recipient_ids\` or \`topics\`. ${IDEMPOTENCY}`,
    success: {
      202: {
        description: 'Accepted: stored, fan-out queued or scheduled',
        schema: notificationAcceptedSchema,
      },
    },
    errors: {
      validation: 'neither `recipient_ids` nor `topics`',
      forbidden:
        'a user naming recipients other than itself, or naming topics; a `source` that is not the caller’s own',
      not_found: 'a named topic does not exist',
      conflict: 'the Idempotency-Key was used with a different body',
    },
    idempotent: true,
  },
  'notifications.feed': {
    tag: 'notifications',
    summary: 'The caller’s in-app feed, newest first',
    description:
      'The cursor is opaque; pass `next_cursor` back to get the next page (with the same `state`). Without ' +
      '`state`, the default feed: items neither archived nor snoozed. `state=unseen`, `unread` or `read` narrow ' +
      'it; `archived` lists the archived items, `snoozed` the snoozed ones, `all` every item not snoozed.',
    success: { 200: { description: 'A page of the feed', schema: feedPageSchema } },
    errors: { validation: 'a cursor this feed did not issue; an unknown `state`' },
  },
  'notifications.read': {
    tag: 'notifications',
    summary: 'Mark one feed item read',
    description:
      'Idempotent: a second call keeps the first `read_at`. The user’s connections get a `notification.state` frame.',
    success: { 200: { description: 'The item is read', schema: markedReadSchema } },
    errors: { not_found: 'an unknown or expired receiver id, or another user’s' },
  },
  'notifications.archive': {
    tag: 'notifications',
    summary: 'Archive one feed item',
    description:
      'It leaves the default feed and the unread count; `GET /notifications?state=archived` lists it. ' +
      'Idempotent: a second call keeps the first `archived_at`. The user’s connections get a ' +
      '`notification.state` frame.',
    success: { 200: { description: 'The item’s states', schema: itemStateSchema } },
    errors: { not_found: 'an unknown or expired receiver id, or another user’s' },
  },
  'notifications.unarchive': {
    tag: 'notifications',
    summary: 'Bring an archived item back to the feed',
    description:
      'Back with the read state it had (an unread item counts as unread again). Idempotent. The user’s ' +
      'connections get a `notification.state` frame.',
    success: { 200: { description: 'The item’s states', schema: itemStateSchema } },
    errors: { not_found: 'an unknown or expired receiver id, or another user’s' },
  },
  'notifications.snooze': {
    tag: 'notifications',
    summary: 'Hide one feed item until a time',
    description:
      'Until `until` it is listed only by `GET /notifications?state=snoozed` and not counted. Then it wakes up: ' +
      'back in the default feed (also out of the archive), unread and unseen, and the user’s connections get a ' +
      '`notification.state` frame with `change: woken`. Snoozing again moves the time (the earlier wake-up does ' +
      'nothing); the same time again changes nothing. The user’s connections get a `notification.state` frame.',
    success: { 200: { description: 'The item’s states', schema: itemStateSchema } },
    errors: { not_found: 'an unknown or expired receiver id, or another user’s' },
  },
  'notifications.interact': {
    tag: 'notifications',
    summary: 'Record a click on a feed item or one of its buttons',
    description:
      'The first click is recorded (`interacted_at`, and `interacted_action`: the button’s id, null for the item ' +
      'itself); later ones change nothing and answer the first. A click also marks the item seen and read. The ' +
      'first click is published once on the bus as `notify.notification.interacted` (source `notify`; `data`: ' +
      '`notification_id`, `receiver_id`, `user_id`, `action_id`, `event_type`, `category`, `interacted_at`), so ' +
      'the sender and its webhooks learn of it; a 200 means it will be. The user’s connections get a ' +
      '`notification.state` frame with `change: interacted`.',
    success: { 200: { description: 'The item’s states', schema: itemStateSchema } },
    errors: {
      validation: '`action_id` is not the id of one of the notification’s actions',
      not_found: 'an unknown or expired receiver id, or another user’s',
    },
  },
  'notifications.seen': {
    tag: 'notifications',
    summary: 'Mark feed items seen (shown to the user)',
    description:
      'Up to 100 items in one call; each keeps its first `seen_at`. Every id must be the caller’s, else 404 and ' +
      'none is marked. The user’s connections get one `notification.bulk` frame naming them.',
    success: { 200: { description: 'The items’ states, in the order asked', schema: markedSeenSchema } },
    errors: { not_found: 'an unknown or expired receiver id, or another user’s' },
  },
  'notifications.readAll': {
    tag: 'notifications',
    summary: 'Mark the whole feed read',
    description:
      'Every unread item of the default feed present when the call starts (one that arrives meanwhile stays ' +
      'unread; archived and snoozed items keep their state). The user’s connections get a `notification.bulk` ' +
      'frame. The same as `POST /notifications/bulk` with `action: mark_read`.',
    success: { 200: { description: 'How many items became read', schema: readAllSchema } },
  },
  'notifications.bulk': {
    tag: 'notifications',
    summary: 'Mark seen, mark read or archive many feed items at once',
    description:
      'Every item of the default feed present when the call starts, or only those older than `before` (a ' +
      'receiver id), and only those of `category` when given. An item that arrives during the call, or comes ' +
      'back into the default feed during it (unarchived, woken), is left as it is. The user’s connections get ' +
      'one `notification.bulk` frame.',
    success: { 200: { description: 'How many items changed', schema: bulkChangeSchema } },
    errors: { not_found: '`before` is an unknown or expired receiver id, or another user’s' },
  },
  'notifications.unreadCount': {
    tag: 'notifications',
    summary: 'Unread, unexpired items in the caller’s default feed',
    description:
      'Equals the items `GET /notifications?state=unread` lists: archived and snoozed items are not counted.',
    success: { 200: { description: 'The count', schema: unreadCountSchema } },
  },
  'notifications.counts': {
    tag: 'notifications',
    summary: 'Unseen, unread and total items of the caller’s default feed, overall and per category',
    description:
      'Over the default feed (not archived, not snoozed, not expired), exactly what `GET /notifications` lists ' +
      'with `state=unseen`, `state=unread` and no state, and with `category=` for each category. `unread` equals ' +
      '`GET /notifications/unread-count`. A category appears while it has items in the default feed; items ' +
      'without a category count only in the overall figures.',
    success: { 200: { description: 'The counts', schema: feedCountsSchema } },
  },
  'preferences.get': {
    tag: 'preferences',
    summary: 'A user’s preferences',
    description:
      'A user reads its own (`user_id` left out or its own id); a service with `notifications:write` names the user in `user_id`. A user who set nothing gets empty lists and `updated_at: null`. `defaults` are the service defaults and required types the user’s rules apply over.',
    success: { 200: { description: 'The preferences', schema: preferencesSchema } },
    errors: { forbidden: 'a user naming another user', validation: 'a service token without `user_id`' },
  },
  'preferences.put': {
    tag: 'preferences',
    summary: 'Replace a user’s preferences',
    description:
      'Rules per event-type pattern (exact type, `prefix.*` or `*`) switch channels on or off; the most specific rule that sets a channel wins, then the service defaults, else on. `muted_topics` stops what reaches the user through those topics. Applies to notifications delivered after the change.',
    success: { 200: { description: 'The stored preferences', schema: preferencesSchema } },
    errors: {
      validation: `unknown channels, malformed patterns, repeated patterns, more than ${MAX_RULES} rules; a rule turning a channel off for types a required default covers (details name the rules)`,
      forbidden: 'a user naming another user',
    },
  },
  'preferences.defaults.put': {
    tag: 'preferences',
    summary: 'Replace the service defaults',
    description:
      'Services with `notifications:write` (or admin users) set, per event-type pattern, channels on or off for users without a rule of their own, and mark types `required` (users cannot turn them off; mutes do not stop them). Applies to notifications created after the change.',
    success: { 200: { description: 'The stored defaults', schema: defaultsSchema } },
    errors: { validation: `unknown channels, malformed patterns, more than ${MAX_RULES} rules` },
  },
  'events.publish': {
    tag: 'events',
    summary: 'Publish a domain event onto the bus',
    description:
      'An accepted event is pushed as an `event` frame to WebSocket subscribers of `topic:<event_type>` and ' +
      `delivered to every webhook whose filters match; \`archive: true\` keeps it for replay. ${IDEMPOTENCY}`,
    success: { 202: { description: 'On the bus', schema: eventAcceptedSchema } },
    errors: {
      forbidden: 'a `source` that is not the calling service’s name or a dotted sub-source of it',
      conflict: 'the Idempotency-Key was used with a different body',
    },
    idempotent: true,
  },
  'topics.create': {
    tag: 'topics',
    summary: 'Create a topic (a service token or an admin)',
    success: { 201: { description: 'Created', schema: topicSchema } },
    errors: { conflict: 'a topic of that name exists' },
  },
  'topics.list': {
    tag: 'topics',
    summary: 'The topics with their subscriber counts (a service token or an admin)',
    description:
      'A page at a time, in an order that is stable from page to page (not by name); `cursor` is the ' +
      '`next_cursor` of the previous page. A topic being deleted is not listed.',
    success: { 200: { description: 'A page of the topics', schema: topicListSchema } },
  },
  'topics.delete': {
    tag: 'topics',
    summary: 'Delete a topic and its subscriptions (a service token or an admin)',
    description:
      'From the 202 on the topic is gone for every route (404; nobody can subscribe to it or notify it); its ' +
      'subscriptions are removed in the background, 1,000 at a time, then the topic, whose name can then be ' +
      'created again (409 until then). Repeating the request while that runs is answered 202 again.',
    success: { 202: { description: 'Accepted: the topic is being deleted', schema: topicDeletionSchema } },
    errors: { not_found: 'no such topic' },
  },
  'topics.get': {
    tag: 'topics',
    summary: 'A topic with its subscriber count',
    success: { 200: { description: 'The topic', schema: topicSchema } },
    errors: { not_found: 'no such topic' },
  },
  'subscriptions.create': {
    tag: 'topics',
    summary: 'Subscribe a user to a topic',
    description:
      'A user subscribes itself; naming another `user_id` needs a service token with `notifications:write` ' +
      '(which must name it). Subscribing twice returns the existing subscription with 200.',
    success: {
      201: { description: 'Subscribed', schema: subscriptionSchema },
      200: { description: 'Already subscribed: the existing subscription', schema: subscriptionSchema },
    },
    errors: {
      forbidden: 'a user naming another user',
      validation: 'a service token without `user_id`',
      not_found: 'no such topic',
    },
  },
  'subscriptions.list': {
    tag: 'topics',
    summary: 'The caller’s subscriptions',
    success: { 200: { description: 'The subscriptions', schema: subscriptionListSchema } },
  },
  'subscriptions.delete': {
    tag: 'topics',
    summary: 'Unsubscribe',
    description: 'A user removes its own subscriptions; a service with `notifications:write` any.',
    success: { 204: { description: 'Unsubscribed' } },
    errors: { not_found: 'no such subscription, or another user’s' },
  },
  'devices.register': {
    tag: 'devices',
    summary: 'Register a push device token',
    description:
      'Registering a token again updates it; one owner per token (another user takes it over). What each ' +
      'provider needs (docs/push.md): `provider` defaults from the platform (ios → apns, android → fcm, web → ' +
      'webpush); a Web Push device sends the browser’s `PushSubscription.toJSON()` as `subscription` (its ' +
      'endpoint is the token). The Web Push `auth` secret is never answered.',
    success: { 201: { description: 'Registered', schema: deviceSchema } },
    errors: {
      validation:
        '`app_id` is not an app configured for push on this stage; a `provider` that does not reach the ' +
        '`platform`, or whose credentials the app lacks; `apns_environment` on a device not on APNs; a Web Push ' +
        'device without `subscription`, or one whose `p256dh` is not an uncompressed P-256 point on the curve, ' +
        'whose `auth` is not 16 bytes, or whose `endpoint` breaks the webhook address policy (https, no ' +
        'private, loopback, link-local or metadata address)',
      conflict: `the user already has ${MAX_DEVICES_PER_USER} devices (the most allowed)`,
    },
  },
  'devices.delete': {
    tag: 'devices',
    summary: 'Remove one of the caller’s device tokens',
    success: { 204: { description: 'Removed' } },
    errors: { not_found: 'no such token among the caller’s' },
  },
  'devices.list': {
    tag: 'devices',
    summary: 'The caller’s device tokens',
    success: { 200: { description: 'A page of the devices', schema: deviceListSchema } },
    errors: { validation: 'a cursor this listing did not issue' },
  },
  'push.vapidPublicKey': {
    tag: 'devices',
    summary: 'The VAPID public key browsers subscribe with',
    description:
      'The `applicationServerKey` of `pushManager.subscribe()` for the app’s Web Push devices (base64url of the ' +
      'uncompressed P-256 point). `app_id` absent: the stage’s default app.',
    success: { 200: { description: 'The key', schema: vapidPublicKeySchema } },
    errors: {
      validation: '`app_id` is not an app configured for push on this stage',
      not_found: 'the app has no Web Push credentials (or push is not configured)',
    },
  },
  'push.summary': {
    tag: 'notifications',
    summary: 'What happened to a notification the caller created, per channel',
    description:
      'Recipients, feed items written, frames sent, and pushes per status; kept 30 days. Only the creator (the ' +
      'service, or the user that notified itself) reads it.',
    success: { 200: { description: 'The summary', schema: notificationSummarySchema } },
    errors: { not_found: 'no such notification created by the caller' },
  },
  'push.records': {
    tag: 'notifications',
    summary: 'The push records of a notification, one per device',
    description:
      'The creator reads every record; any other user its own (an empty page when it has none). Kept 30 days.',
    success: { 200: { description: 'A page of push records', schema: pushPageSchema } },
    errors: {
      not_found: 'a service that did not create the notification',
      validation: 'a cursor this listing did not issue',
    },
  },
  'presence.user': {
    tag: 'presence',
    summary: 'Presence of one user',
    success: {
      200: {
        description: 'The user’s presence (`offline` without a live connection)',
        schema: userPresenceSchema,
      },
    },
    errors: { validation: `a \`user_id\` that is not ${describeBound('userId')}` },
  },
  'presence.scope': {
    tag: 'presence',
    summary: 'Members of a room',
    success: { 200: { description: 'Users with a connection in the room', schema: scopePresenceSchema } },
    errors: { validation: 'a cursor this listing did not issue' },
  },
  'broadcast.send': {
    tag: 'realtime',
    summary: 'Send a frame to a channel, or to every open connection',
    description: '`payload` is delivered as the frame itself. Large audiences are fanned out by a worker.',
    success: { 202: { description: 'Queued for delivery', schema: broadcastAcceptedSchema } },
  },
  'webhooks.create': {
    tag: 'webhooks',
    summary: 'Create a webhook',
    description:
      '`url` must be `https://` (plain `http://` only for loopback on the local runtime); on AWS, hosts that ' +
      'resolve to private, loopback, link-local or metadata addresses are refused. The secret is never ' +
      'returned; a `whsec_<base64>` secret must be standard base64 decoding to at least 16 bytes. Deliveries ' +
      'follow Standard Webhooks (docs/webhooks.md).',
    success: { 201: { description: 'Created', schema: webhookSchema } },
    errors: {
      validation:
        'a `url` that is not https (loopback http on the local runtime), carries credentials, or (on AWS) resolves to a refused address; a malformed `whsec_` secret',
    },
  },
  'webhooks.list': {
    tag: 'webhooks',
    summary: 'Every webhook',
    success: { 200: { description: 'The webhooks', schema: webhookListSchema } },
  },
  'webhooks.delete': {
    tag: 'webhooks',
    summary: 'Delete a webhook',
    success: { 204: { description: 'Deleted' } },
    errors: { not_found: 'no such webhook' },
  },
  'webhooks.deliveries': {
    tag: 'webhooks',
    summary: 'A webhook’s deliveries with their attempts, newest first',
    description: '`status=dead_letter` lists the dead-letter store.',
    success: { 200: { description: 'A page of deliveries', schema: deliveryPageSchema } },
    errors: { not_found: 'no such webhook', validation: 'a cursor this listing did not issue' },
  },
  'webhooks.retry': {
    tag: 'webhooks',
    summary: 'Re-send a dead-lettered delivery',
    success: { 202: { description: 'Queued again', schema: retryAcceptedSchema } },
    errors: {
      not_found: 'no such webhook or delivery',
      conflict: 'the delivery is not dead-lettered, changed meanwhile, or the webhook is disabled',
    },
  },
};
