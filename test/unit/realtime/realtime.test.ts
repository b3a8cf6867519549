import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTION_SHARDS, shardNames, shardOf } from '../../../lambdas/domain/realtime/config';
import { deliverToChannel } from '../../../lambdas/domain/realtime/deliver';
import type { PresenceStatus } from '../../../lambdas/domain/realtime/frames';
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
    expect(await scopePresence('room:unit', { limit: 1000 })).toMatchObject({
      members: [{ user_id: 'unit-alice', status: 'online' }],
      next_cursor: null,
    });
  });

  it('pages a room by members: every member once, a user’s connections never split over two pages', async () => {
    const room = `room:paged-${Date.now()}`;
    // Rows are `<user id>#<connection id>`: `pa#a1`, `pa#x#m1`, `pa#z9` — users `pa` and `pa#x` interleave.
    const connections: [string, string, PresenceStatus][] = [
      ['pa', 'a1', 'away'],
      ['pa', 'z9', 'busy'],
      ['pa#x', 'm1', 'online'],
      ['pb', 'c1', 'away'],
      ['pc', 'c1', 'online'],
      ['pc', 'c2', 'away'],
      ['pc', 'c3', 'away'],
      ['pd', 'c1', 'online'],
    ];
    for (const [userId, connectionId, status] of connections)
      await joinRoomPresence(room, userId, connectionId, status);
    const expected = [
      { user_id: 'pa', status: 'busy' },
      { user_id: 'pa#x', status: 'online' },
      { user_id: 'pb', status: 'away' },
      { user_id: 'pc', status: 'online' },
      { user_id: 'pd', status: 'online' },
    ];
    for (const limit of [1, 2, 3, 8, 1000]) {
      const listed: { user_id: string; status: string }[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages += 1) {
        const page = await scopePresence(room, { limit, ...(cursor ? { cursor } : {}) });
        listed.push(...page.members.map(({ user_id, status }) => ({ user_id, status })));
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
      }
      expect(listed, `limit ${limit}`).toEqual(expected);
    }
    await expect(scopePresence(room, { limit: 2, cursor: 'bm90IGEgY3Vyc29y' })).rejects.toMatchObject({
      code: 'validation',
      details: [{ field: 'cursor', issue: 'not a cursor of this listing' }],
    });
  });

  it('delivers nothing, and touches no connection, on a channel without members', async () => {
    expect(await deliverToChannel('room:nobody-here', { type: 'custom' })).toEqual({
      delivered: 0,
      gone: [],
    });
  });
});
