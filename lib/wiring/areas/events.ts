import type { HttpRoute, WiringPart } from '../types';
import { realtimeStateQueues, realtimeStateTables } from './realtime';

const HTTP = 'lambdas/handlers/http';

/** Events go onto the bus as `detail` = { id, version, data, priority, archive } (lambdas/domain/events/publish.ts). */
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];

/**
 * What POST /events puts on the bus, as an EventBridge pattern: other publishers of the bus (none yet) do not
 * reach the `event` frame worker by accident.
 */
export const PUBLISHED_EVENT_PATTERN = {
  detail: {
    id: [{ exists: true }],
    version: [{ numeric: ['>=', 1] }],
    priority: PRIORITIES,
  },
} as const;

/** The archive keeps only events published with `archive: true` (the CDK archive and the local stand-in's). */
export const EVENT_ARCHIVE_PATTERN = { detail: { archive: [true] } } as const;

const route = (route: HttpRoute): HttpRoute => ({ memoryMb: 256, ...route });

/**
 * Lambda's asynchronous retries of the bus functions: both (1 and 2 minutes after a failure), and the events kept
 * for the longest Lambda allows, 6 hours, before they go to the on-failure destination unprocessed.
 */
export const BUS_FUNCTION_RETRIES = { retryAttempts: 2, maxEventAgeSecs: 21_600 } as const;

/**
 * Events onto the bus (and from it to `topic:<event_type>` WebSocket subscribers), topics, subscriptions
 * and device tokens. Data model, choices and request costs: docs/events-topics-devices.md.
 */
export const events: WiringPart = {
  httpRoutes: [
    route({
      id: 'events.publish',
      method: 'POST',
      path: '/events',
      handler: `${HTTP}/events/publish.ts`,
      access: { services: 'events:publish' },
      writes: ['idempotency'],
      putsEvents: true,
    }),
    route({
      id: 'topics.create',
      method: 'POST',
      path: '/topics',
      handler: `${HTTP}/topics/create.ts`,
      access: { users: 'admin', services: 'any' },
      writes: ['topics'],
    }),
    route({
      id: 'topics.list',
      method: 'GET',
      path: '/topics',
      handler: `${HTTP}/topics/list.ts`,
      access: { users: 'admin', services: 'any' },
      reads: ['topics'],
    }),
    route({
      id: 'topics.delete',
      method: 'DELETE',
      path: '/topics/{name}',
      handler: `${HTTP}/topics/delete.ts`,
      access: { users: 'admin', services: 'any' },
      writes: ['topics'],
      // The purge runs in the fan-out worker (lambdas/domain/topics/deletion.ts says why).
      sendsTo: ['fanout'],
    }),
    route({
      id: 'topics.get',
      method: 'GET',
      path: '/topics/{name}',
      handler: `${HTTP}/topics/get.ts`,
      access: { users: 'any', services: 'any' },
      reads: ['topics'],
    }),
    route({
      id: 'subscriptions.create',
      method: 'POST',
      path: '/subscriptions',
      handler: `${HTTP}/subscriptions/create.ts`,
      access: { users: 'any', services: 'notifications:write' },
      writes: ['topics', 'subscriptions'],
    }),
    route({
      id: 'subscriptions.list',
      method: 'GET',
      path: '/subscriptions',
      handler: `${HTTP}/subscriptions/list.ts`,
      access: { users: 'any' },
      reads: ['subscriptions'],
    }),
    route({
      id: 'subscriptions.delete',
      method: 'DELETE',
      path: '/subscriptions/{id}',
      handler: `${HTTP}/subscriptions/delete.ts`,
      access: { users: 'any', services: 'notifications:write' },
      writes: ['topics', 'subscriptions'],
    }),
    route({
      id: 'devices.register',
      method: 'POST',
      path: '/devices',
      handler: `${HTTP}/devices/register.ts`,
      access: { users: 'any' },
      writes: ['devices'],
      // The configured apps and their providers (registration checks app_id); no credentials.
      push: { readsCredentials: [] },
    }),
    route({
      id: 'devices.delete',
      method: 'DELETE',
      path: '/devices',
      handler: `${HTTP}/devices/delete.ts`,
      access: { users: 'any' },
      writes: ['devices'],
    }),
    route({
      id: 'devices.list',
      method: 'GET',
      path: '/devices',
      handler: `${HTTP}/devices/list.ts`,
      access: { users: 'any' },
      reads: ['devices'],
    }),
    route({
      // What a browser subscribes with (docs/push.md): any app's users and services may read it.
      id: 'push.vapidPublicKey',
      method: 'GET',
      path: '/push/vapid-public-key',
      handler: `${HTTP}/push/vapid-public-key.ts`,
      access: { users: 'any', services: 'any' },
      push: { readsCredentials: ['webpush'] },
    }),
  ],
  tables: [
    {
      // Keyed by `name` under the id `topics`: realtime reads it to check that `topic:<name>` channels exist.
      id: 'topics',
      purpose: 'topics by name, with an exact subscriber_count kept in the same transaction as (un)subscribe',
      partitionKey: { name: 'name', type: 'S' },
    },
    {
      id: 'subscriptions',
      purpose:
        "one item per (topic, user): notification fan-out pages a topic's subscribers by key; byUser lists a user's own",
      partitionKey: { name: 'topic', type: 'S' },
      sortKey: { name: 'user_id', type: 'S' },
      globalIndexes: [
        {
          name: 'byUser',
          partitionKey: { name: 'user_id', type: 'S' },
          sortKey: { name: 'topic', type: 'S' },
          projection: 'all',
        },
      ],
    },
    {
      id: 'devices',
      purpose: 'push device tokens, one owner per token (keyed by its SHA-256); byUser lists a user’s own',
      partitionKey: { name: 'token_hash', type: 'S' },
      globalIndexes: [
        {
          name: 'byUser',
          partitionKey: { name: 'user_id', type: 'S' },
          sortKey: { name: 'token_hash', type: 'S' },
          projection: 'all',
        },
      ],
    },
  ],
  busFunctions: [
    {
      // Invoked by the bus directly, one event per invocation: no queue hop (docs/performance.md, (d)).
      id: 'events.frames',
      purpose: 'events from the bus to `topic:<event_type>` WebSocket subscribers as `event` frames',
      handler: 'lambdas/handlers/workers/event-frames.ts',
      timeoutSecs: 30,
      memoryMb: 256,
      ...BUS_FUNCTION_RETRIES,
      // Its on-failure destination keeps the name of the DLQ of the queue it replaced.
      deadLetterQueue: 'eventFrames',
      writes: [...realtimeStateTables],
      sendsTo: [...realtimeStateQueues],
      managesConnections: true,
    },
  ],
  busRules: [
    {
      id: 'events.toTopicSubscribers',
      description: 'events published through POST /events, to the function that sends `event` frames',
      pattern: PUBLISHED_EVENT_PATTERN,
      targetFunction: 'events.frames',
    },
  ],
};
