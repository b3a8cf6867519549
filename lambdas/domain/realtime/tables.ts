import { tableName } from '../../core/clients';
import { MAX_CONNECTION_SECS } from './config';

/**
 * Realtime tables (declared in lib/wiring/areas/realtime.ts; layout in docs/realtime.md).
 * Every item carries `ttl` (epoch seconds) and every read filters it, since DynamoDB deletes late.
 */
export const TABLE = {
  /** One item per WebSocket connection, keyed `connection_id`; index `byShard` (shard, check_at). */
  connections: 'wsConnections',
  /** Channel memberships: `channel` + `connection_id`, so delivery is one Query on the channel. */
  channels: 'wsChannels',
  /** Sessions: `session_id` + `item` (`meta`, or `f#<uuid v7>` for each buffered frame). */
  sessions: 'wsSessions',
  /** Presence rows: `scope` (`user:<id>` or `room:<id>`) + `member`. */
  presence: 'presence',
  /** Declared by the events area: `name` → topic. */
  topics: 'topics',
} as const;

export const BY_SHARD_INDEX = 'byShard';
export const SESSION_META = 'meta';
export const FRAME_PREFIX = 'f#';
export const LAST_SEEN_MEMBER = '~last_seen';

export const table = (id: keyof typeof TABLE): string => tableName(TABLE[id]);

export const nowSecs = (): number => Math.floor(Date.now() / 1000);

/** What a live item's TTL keeps beyond the longest connection, so DynamoDB never drops one under it. */
const LIVE_TTL_MARGIN_SECS = 600;

/**
 * The TTL of an item that lives while its connection does (the connection, its memberships, its presence rows,
 * its session's meta): API Gateway's 2-hour connection limit plus a margin.
 */
export const liveItemTtl = (): number => nowSecs() + MAX_CONNECTION_SECS + LIVE_TTL_MARGIN_SECS;

/** Filter for reads: items whose TTL has passed are gone even if DynamoDB has not deleted them yet. */
export const NOT_EXPIRED = '#ttl > :now';
export const notExpiredNames = { '#ttl': 'ttl' } as const;
