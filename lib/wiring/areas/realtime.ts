import type { HttpRoute, WebSocketRoute, WiringPart } from '../types';

const WS = 'lambdas/handlers/ws';
const STATE = ['wsConnections', 'wsChannels', 'wsSessions', 'presence'] as const;
/** Tables a function touches when it delivers frames (deliverToChannel cleans up closed connections). */
export const realtimeStateTables = STATE;
/**
 * Queues it sends to for that: ending a connection changes presence, and a change in a room above
 * `scale.presence.announce_max` arms the room's summary on `broadcast` (docs/realtime.md).
 */
export const realtimeStateQueues = ['broadcast'] as const;

/** A frame route: every one may touch the connection, its memberships, session and presence, and post frames. */
const frameRoute = (routeKey: string, file: string, extra: Partial<WebSocketRoute> = {}): WebSocketRoute => ({
  routeKey,
  handler: `${WS}/${file}.ts`,
  memoryMb: 256,
  timeoutSecs: 10,
  writes: [...STATE],
  sendsTo: [...realtimeStateQueues],
  managesConnections: true,
  ...extra,
});

const presenceRoute = (id: string, path: string, file: string): HttpRoute => ({
  id,
  method: 'GET',
  path,
  handler: `lambdas/handlers/http/presence/${file}.ts`,
  access: { users: 'any', services: 'any' },
  reads: ['presence'],
  memoryMb: 256,
});

/**
 * Realtime: WebSocket connections, channels, rooms, presence, heartbeat, reconnect with replay, broadcast.
 * Table layout, costs and the timing rules: docs/realtime.md.
 */
export const realtime: WiringPart = {
  webSocketRoutes: [
    frameRoute('$connect', 'connect', {
      sendsTo: ['wsWelcome', 'wsAuthDeadline', ...realtimeStateQueues],
      writes: [...STATE, 'tokenReplay'],
    }),
    frameRoute('$disconnect', 'disconnect'),
    frameRoute('$default', 'default', { writes: [], sendsTo: [], memoryMb: 128 }),
    frameRoute('auth', 'auth', { writes: [...STATE, 'tokenReplay'] }),
    // subscribe and join.topic read the events area's `topics` table (lib/wiring/areas/events.ts).
    frameRoute('subscribe', 'subscribe', { reads: ['topics'] }),
    frameRoute('unsubscribe', 'unsubscribe'),
    frameRoute('join.room', 'join-room'),
    frameRoute('join.topic', 'join-topic', { reads: ['topics'] }),
    frameRoute('presence.update', 'presence-update'),
    frameRoute('reconnect', 'reconnect'),
  ],
  webSocketMockRoutes: [
    {
      routeKey: 'heartbeat',
      reply: { type: 'heartbeat.ack' },
      purpose:
        'answered by API Gateway (no Lambda, no table): silence is judged by the sweep from GetConnection LastActiveAt',
    },
  ],
  httpRoutes: [
    presenceRoute('presence.user', '/presence/{user_id}', 'user'),
    presenceRoute('presence.scope', '/presence', 'scope'),
    {
      id: 'broadcast.send',
      method: 'POST',
      path: '/broadcast',
      handler: 'lambdas/handlers/http/broadcast/send.ts',
      access: { users: 'admin', services: 'broadcast:write' },
      writes: [...STATE],
      sendsTo: ['broadcast'],
      managesConnections: true,
      timeoutSecs: 15,
    },
  ],
  queues: [
    {
      id: 'broadcast',
      purpose:
        'broadcast fan-out: one message per chunk of a large audience (a channel page or a connection shard)',
      maxReceiveCount: 5,
      visibilityTimeoutSecs: 180,
    },
    {
      id: 'wsAuthDeadline',
      purpose:
        'the auth deadline timer: $connect sends a message delayed by the auth timeout for a connection without a token',
      maxReceiveCount: 5,
      visibilityTimeoutSecs: 60,
    },
    {
      id: 'wsSweep',
      purpose:
        'the sweep: one message per byShard shard, sent by ws.sweeper each minute; each sweep queues the next (+20 s, then +40 s, delayed) with the connections it found alive',
      maxReceiveCount: 3,
      visibilityTimeoutSecs: 360,
    },
    {
      id: 'wsWelcome',
      purpose:
        'sends the `session` frame right after $connect (API Gateway forbids posting from the $connect integration)',
      maxReceiveCount: 3,
      visibilityTimeoutSecs: 30,
    },
  ],
  workers: [
    {
      id: 'ws.authDeadline',
      queue: 'wsAuthDeadline',
      handler: 'lambdas/handlers/workers/ws-auth-deadline.ts',
      batchSize: 10,
      maxBatchingWindowSecs: 0,
      timeoutSecs: 10,
      memoryMb: 256,
      writes: [...STATE],
      sendsTo: ['wsAuthDeadline', ...realtimeStateQueues],
      managesConnections: true,
    },
    {
      id: 'broadcast.fanout',
      queue: 'broadcast',
      handler: 'lambdas/handlers/workers/broadcast-fanout.ts',
      batchSize: 1,
      maxBatchingWindowSecs: 0,
      timeoutSecs: 30,
      memoryMb: 512,
      writes: [...STATE],
      sendsTo: ['broadcast'],
      managesConnections: true,
    },
    {
      // One shard per invocation: the shards of one sweep run in parallel, bounded by maxConcurrency.
      id: 'ws.sweepShard',
      queue: 'wsSweep',
      handler: 'lambdas/handlers/workers/ws-sweep-shard.ts',
      batchSize: 1,
      maxBatchingWindowSecs: 0,
      maxConcurrency: 16,
      // A shard's sweep must end before the next one (every 20 s): longer, and connection_shards is too low.
      busyAfterSecs: 20,
      timeoutSecs: 60,
      memoryMb: 128,
      writes: [...STATE],
      // The shard's next sweep of the minute, and what ending a connection changes in presence.
      sendsTo: ['wsSweep', ...realtimeStateQueues],
      managesConnections: true,
    },
    {
      id: 'ws.welcome',
      queue: 'wsWelcome',
      handler: 'lambdas/handlers/workers/ws-welcome.ts',
      batchSize: 10,
      maxBatchingWindowSecs: 0,
      timeoutSecs: 5,
      memoryMb: 256,
      writes: [...STATE],
      sendsTo: [...realtimeStateQueues],
      managesConnections: true,
    },
  ],
  recurringSchedules: [
    {
      id: 'ws.sweeper',
      everyMinutes: 1,
      description:
        'starts the minute of sweeps (now, then +20 s and +40 s queued by each sweep) of every byShard shard with a connection due: auth deadlines, expired tokens, silent connections',
      handler: 'lambdas/handlers/workers/ws-sweeper.ts',
      timeoutSecs: 10,
      memoryMb: 128,
      // Which shards have a connection due this minute (one Limit-1 Query each).
      reads: ['wsConnections'],
      sendsTo: ['wsSweep'],
    },
  ],
  tables: [
    {
      id: 'wsConnections',
      purpose:
        'one item per WebSocket connection (user, session, channels, rooms, status); byShard lists every connection and the sweeper candidates by key',
      partitionKey: { name: 'connection_id', type: 'S' },
      ttlAttribute: 'ttl',
      globalIndexes: [
        {
          name: 'byShard',
          partitionKey: { name: 'shard', type: 'S' },
          sortKey: { name: 'check_at', type: 'N' },
          // What the sweep judges a connection by, so a live one costs no GetItem (docs/realtime.md).
          projection: ['user_id', 'connected_at', 'token_expires_at'],
        },
      ],
    },
    {
      id: 'wsChannels',
      purpose:
        'channel memberships (channel, connection): delivery is one Query per channel; detached rows buffer frames for ended sessions',
      partitionKey: { name: 'channel', type: 'S' },
      sortKey: { name: 'connection_id', type: 'S' },
      ttlAttribute: 'ttl',
    },
    {
      id: 'wsSessions',
      purpose:
        "sessions ('meta': channels, rooms, current connection) and their replay buffer, one item per frame",
      partitionKey: { name: 'session_id', type: 'S' },
      sortKey: { name: 'item', type: 'S' },
      ttlAttribute: 'ttl',
    },
    {
      id: 'presence',
      purpose:
        'presence rows per scope (user:<id> per connection, room:<id> per member connection) and last-seen times',
      partitionKey: { name: 'scope', type: 'S' },
      sortKey: { name: 'member', type: 'S' },
      ttlAttribute: 'ttl',
    },
  ],
};
