import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTION_SHARDS, shardNames, shardOf } from '../../../lambdas/domain/realtime/config';
import { deliverToChannel } from '../../../lambdas/domain/realtime/deliver';
import { openConnection } from '../../../lambdas/domain/realtime/lifecycle';
import {
  aggregateStatus,
  joinRoomPresence,
  scopePresence,
  userPresence,
} from '../../../lambdas/domain/realtime/presence';

import { useDynamoDbLocal } from '../../support/dynamodb';
import { userPrincipal } from '../../support/tokens';

useDynamoDbLocal();

const user = userPrincipal;

describe('presence aggregation', () => {
  it('is offline without connections, busy when any says busy, else online when any is online', () => {
    expect(aggregateStatus([])).toBe('offline');
    expect(aggregateStatus(['away', 'online'])).toBe('online');
    expect(aggregateStatus(['online', 'busy'])).toBe('busy');
    expect(aggregateStatus(['away', 'away'])).toBe('away');
  });
});

describe('connection shards', () => {
  it('spreads connection ids over every shard', () => {
    const shards = new Set(Array.from({ length: 2000 }, (_, index) => shardOf(`conn-${index}`)));
    expect(shards.size).toBe(DEFAULT_CONNECTION_SHARDS);
  });

  it('follows the stage setting (scale.connection_shards), and the sweeper lists the same shards', () => {
    process.env.NOTIFY_CONNECTION_SHARDS = '64';
    try {
      const shards = new Set(Array.from({ length: 5000 }, (_, index) => shardOf(`conn-${index}`)));
      expect(shards.size).toBe(64);
      expect(new Set(shardNames())).toEqual(shards);
    } finally {
      delete process.env.NOTIFY_CONNECTION_SHARDS;
    }
  });
});

describe('on DynamoDB Local', () => {
  it('records an authenticated connection in its user channel and presence', async () => {
    await openConnection('unit-conn-1', user('unit-alice'));
    expect(await userPresence('unit-alice')).toMatchObject({ status: 'online', connections: 1 });
    // The room has no subscribers yet, so the join diff reaches nobody and needs no @connections.
    await joinRoomPresence('room:unit', 'unit-alice', 'unit-conn-1', 'online');
    expect(await scopePresence('room:unit')).toMatchObject({
      members: [{ user_id: 'unit-alice', status: 'online' }],
    });
  });

  it('delivers nothing, and touches no connection, on a channel without members', async () => {
    expect(await deliverToChannel('room:nobody-here', { type: 'custom' })).toEqual({
      delivered: 0,
      gone: [],
    });
  });
});
