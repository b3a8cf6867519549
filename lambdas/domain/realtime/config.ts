import * as envNames from '../../../common/env-names';
import { positiveIntegerSetting, positiveSecondsSetting } from '../../../common/settings';

/**
 * Realtime durations. Contract §4 fixes the defaults; each can be shortened through the environment so
 * that tests of time-dependent rules need not wait real minutes (docs/realtime.md lists them).
 */

export interface RealtimeSettings {
  /** An unauthenticated connection must send `auth` within this (contract: 10 s). */
  readonly authTimeoutSecs: number;
  /** A connection silent this long gets `idle_timeout` and is closed (contract: 45 s). */
  readonly idleTimeoutSecs: number;
  /** A session can be resumed with `reconnect` this long after its connection ended (contract: 120 s). */
  readonly sessionTtlSecs: number;
  /** Told to clients in the `session` frame. */
  readonly heartbeatIntervalMs: number;
}

/** The contract's values, which the environment variables below may shorten. */
export const REALTIME_DEFAULTS: RealtimeSettings = {
  authTimeoutSecs: 10,
  idleTimeoutSecs: 45,
  sessionTtlSecs: 120,
  heartbeatIntervalMs: 20_000,
};

/** Read on every call, so a test can change the environment between cases. */
export const realtimeSettings = (): RealtimeSettings => ({
  authTimeoutSecs: positiveSecondsSetting(envNames.wsAuthTimeoutSecs, REALTIME_DEFAULTS.authTimeoutSecs),
  idleTimeoutSecs: positiveSecondsSetting(envNames.wsIdleTimeoutSecs, REALTIME_DEFAULTS.idleTimeoutSecs),
  sessionTtlSecs: positiveSecondsSetting(envNames.wsSessionTtlSecs, REALTIME_DEFAULTS.sessionTtlSecs),
  heartbeatIntervalMs:
    positiveSecondsSetting(envNames.wsHeartbeatIntervalSecs, REALTIME_DEFAULTS.heartbeatIntervalMs / 1000) *
    1000,
});

/** Most frames a resumed session gets replayed (contract §4). */
export const MAX_REPLAYED_FRAMES = 100;
/** Channels one connection may hold, so one connection cannot grow its item towards 400 KB. */
export const MAX_CHANNELS_PER_CONNECTION = 100;
/**
 * Partitions of the connections' `byShard` index: spreads "every open connection" and the sweeper's reads.
 * A stage setting (`scale.connection_shards`, docs/scale.md); only ever raised, since rows keep their shard.
 */
export const connectionShards = (): number =>
  positiveIntegerSetting(envNames.connectionShards, DEFAULT_CONNECTION_SHARDS);
export const DEFAULT_CONNECTION_SHARDS = 16;

const shardName = (index: number): string => `s${String(index).padStart(2, '0')}`;

/** Every shard of the `byShard` index: what "every open connection" and the sweeper read, one Query each. */
export const shardNames = (): string[] =>
  Array.from({ length: connectionShards() }, (_, index) => shardName(index));

/** A connection's shard: a stable, even spread of connection ids over the shards. */
export const shardOf = (connectionId: string): string => {
  let hash = 0;
  for (let index = 0; index < connectionId.length; index++) {
    hash = (hash * 31 + connectionId.charCodeAt(index)) >>> 0;
  }
  return shardName(hash % connectionShards());
};
/** Longest a connection lives on API Gateway (2 h): bounds every live item's TTL. */
export const MAX_CONNECTION_SECS = 2 * 60 * 60;
