/**
 * Hot key of a large room (docs/scale.md): its memberships are one partition, read page after page by one chain
 * of chunks. Large channels are split into segments (ranges of connection ids) delivered in parallel; these
 * tests check on DynamoDB Local that the segments together reach every member exactly once, whatever its id.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import {
  connectionRanges,
  MAX_SEGMENTS,
  planBroadcast,
  runChunk,
} from '../../../lambdas/domain/realtime/broadcast';
import type { BroadcastChunk } from '../../../lambdas/domain/realtime/broadcast-queue';
import { MEMBERS_PAGE } from '../../../lambdas/domain/realtime/deliver';
import { envNames } from '../../../lib/wiring';
import { apiGatewayId } from '../../../local/gateway/ids';
import { type LiveConnectionsEndpoint, startLiveConnectionsEndpoint } from '../../../local/metering';
import { useDynamoDbLocal } from '../../support/dynamodb';

/** DynamoDB orders string keys by their UTF-8 bytes. */
const inRange = (id: string, range: { from: string; to: string }) =>
  Buffer.compare(Buffer.from(id), Buffer.from(range.from)) >= 0 &&
  Buffer.compare(Buffer.from(id), Buffer.from(range.to)) <= 0;

/** Ids API Gateway would not hand out, at the edges of every range. */
const ODD_IDS = ['!first', '~last', 'ümlaut-id', '0', 'z', 'A', '=', '+plus', '-dash', '_under', '\u{1F600}'];

describe('connection id ranges', () => {
  it('put every id in exactly one range, for any number of segments', () => {
    const ids = [...Array.from({ length: 2000 }, apiGatewayId), ...ODD_IDS];
    for (const segments of [2, 3, 7, 20, MAX_SEGMENTS, 1000]) {
      const ranges = connectionRanges(segments);
      expect(ranges.length).toBeGreaterThan(1);
      for (const id of ids)
        expect(
          ranges.filter((range) => inRange(id, range)),
          id,
        ).toHaveLength(1);
    }
    expect(connectionRanges(1)).toEqual([]);
  });

  it('spread API Gateway ids evenly', () => {
    const ids = Array.from({ length: 20_000 }, apiGatewayId);
    const ranges = connectionRanges(20);
    const counts = ranges.map((range) => ids.filter((id) => inRange(id, range)).length);
    const mean = ids.length / ranges.length;
    for (const count of counts) {
      expect(count).toBeGreaterThan(mean / 2);
      expect(count).toBeLessThan(mean * 2);
    }
  });
});

describe('a room larger than one segment, on DynamoDB Local', () => {
  useDynamoDbLocal();
  const room = 'room:segments';
  // Segments of 400 instead of SEGMENT_MEMBERS (5,000) keep the test short; the split is the same code.
  const segmentMembers = 400;
  const members = 3 * segmentMembers + 150;
  const posts = new Map<string, number>();
  let endpoint: LiveConnectionsEndpoint | undefined;
  let ids: string[] = [];

  beforeAll(async () => {
    endpoint = await startLiveConnectionsEndpoint((call, connectionId) => {
      if (call === 'post') posts.set(connectionId, (posts.get(connectionId) ?? 0) + 1);
    });
    process.env[envNames.wsCallbackUrl] = endpoint.url;
    ids = [...Array.from({ length: members - ODD_IDS.length }, apiGatewayId), ...ODD_IDS];
    const ttl = Math.floor(Date.now() / 1000) + 3600;
    for (let start = 0; start < ids.length; start += 25) {
      await documentClient().send(
        new BatchWriteCommand({
          RequestItems: {
            [tableName('wsChannels')]: ids.slice(start, start + 25).map((id, index) => ({
              PutRequest: {
                Item: {
                  channel: room,
                  connection_id: id,
                  user_id: `u${start + index}`,
                  session_id: 's',
                  ttl,
                },
              },
            })),
          },
        }),
      );
    }
  }, 120_000);
  afterAll(async () => {
    await endpoint?.stop();
  });

  it('is planned as parallel segments whose chains post to every member exactly once', async () => {
    const frame = { type: 'announcement', text: 'to everyone in the room' };
    const plan = await planBroadcast(room, frame, segmentMembers);
    expect(plan.recipients).toBe(members);
    expect(plan.chunks).toHaveLength(Math.ceil(members / segmentMembers));
    // Each chain as the broadcast worker runs it: a chunk hands on the next until its segment is done.
    let pending: BroadcastChunk[] = plan.chunks;
    let rounds = 0;
    while (pending.length > 0) {
      rounds += 1;
      const next = await Promise.all(pending.map((chunk) => runChunk(chunk)));
      pending = next.filter((chunk) => chunk !== undefined);
    }
    expect(posts.size).toBe(members);
    expect([...posts.values()].every((count) => count === 1)).toBe(true);
    for (const id of ODD_IDS) expect(posts.get(id), id).toBe(1);
    // In parallel: fewer rounds than one chain of the whole room would need.
    expect(rounds).toBeLessThan(Math.ceil(members / MEMBERS_PAGE));
  }, 120_000);
});
