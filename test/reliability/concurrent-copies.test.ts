import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { FramesHeldByOtherReceive } from '../../lambdas/domain/notifications/delivery';
import { processFanoutMessage } from '../../lambdas/domain/notifications/fanout';
import { AWS_LIKE_ODDS, awsLikeDelivery, type Chooser, type Delivery, newSeed } from '../../local/delivery';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { apiClient, eventually } from '../support/api';
import { handlingOf, queueIdle } from '../support/queues';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

/**
 * SQS standard queues may hand one message to two consumers AT ONCE (a copy on a server that missed the first
 * receive). Both copies carry the same message id, the owner of the recipients' frames. AWS-like delivery does
 * this to ~3 % of receives; here every other receive of the `fanout` queue gets a concurrent copy, and each
 * connection must still see each notification once.
 */
const COPY_ODDS = 0.5;

/** AWS-like delivery with the concurrent copy made likely on `fanout` (the other choices as usual). */
const copiesOnFanout = (seed: number): Delivery => {
  const base = awsLikeDelivery(seed);
  return {
    ...base,
    chooser: (name): Chooser => {
      const chooser = base.chooser(name);
      if (name !== 'sqs:fanout') return chooser;
      return {
        ...chooser,
        chance: (p) => chooser.chance(p === AWS_LIKE_ODDS.duplicateWhileHeld ? COPY_ODDS : p),
      };
    },
  };
};

let runtime: Runtime;
let service: string;
const clients: TestClient[] = [];
const previousTimeScale = process.env[TIME_SCALE_ENV];
const seed = Number(process.env.RELIABILITY_SEED ?? newSeed());

beforeAll(async () => {
  // A copy that finds the frames held by the other returns to the queue after the visibility timeout (180 s):
  // a twentieth of it here.
  process.env[TIME_SCALE_ENV] = '0.05';
  runtime = await startTestRuntime({ delivery: copiesOnFanout(seed) });
  service = await runtime.mintServiceToken('billing', ['notifications:write']);
});
afterAll(async () => {
  for (const client of clients) client.socket.terminate();
  await runtime?.stop();
  if (previousTimeScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = previousTimeScale;
});

const api = apiClient(() => runtime.httpUrl);

const connect = async (userId: string): Promise<TestClient> => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(userId)}`);
  clients.push(client);
  await client.nextOfType('session');
  return client;
};

describe('concurrent copies of one fan-out message', () => {
  it('send each connection one frame per notification', async () => {
    const run = Date.now();
    // More than the 10 recipients a request delivers itself: every recipient goes through `fanout` chunks.
    const users = Array.from({ length: 16 }, (_, index) => `copies${index}-${process.pid}-${run}`);
    const connections: TestClient[] = [];
    for (const userId of users) connections.push(await connect(userId));
    const ids: string[] = [];
    for (let round = 0; round < (LONG ? 12 : 4); round += 1) {
      const created = await api('POST', '/notifications', service, {
        event_type: 'test.copies',
        title: `Copies ${round}`,
        channels: ['in_app', 'realtime'],
        recipient_ids: users,
      });
      expect(created.status).toBe(202);
      ids.push(created.body.id);
    }
    // Every copy, and every return of a copy that found the frames held, has been handled and deleted.
    await eventually(
      () => queueIdle('fanout'),
      (idle) => idle,
      120_000,
    );

    const problems: string[] = [];
    for (const [index, client] of connections.entries()) {
      for (const id of ids) {
        const frames = client.frames.filter(
          (frame) => frame.type === 'notification' && frame.notification_id === id,
        ).length;
        if (frames !== 1) problems.push(`${users[index]}: ${frames} frames of ${id}`);
      }
    }
    expect(problems, `seed ${seed} (repeat with RELIABILITY_SEED=${seed})`).toEqual([]);
  }, 240_000);

  /**
   * The three states a receive can find a recipient's frames in, set on the record as a receive left them, the
   * chunk then handled by this process as the worker would (the runtime's functions share it).
   */
  describe('a receive that finds the frames recorded', () => {
    const prepare = async (name: string) => {
      const userId = `${name}-${process.pid}-${Date.now()}`;
      // Written while the user is offline: a receiver without frames, then the user connects.
      const created = await api('POST', '/notifications', service, {
        event_type: 'test.lease',
        title: 'Lease',
        channels: ['in_app', 'realtime'],
        recipient_ids: [userId],
      });
      expect(created.status).toBe(202);
      const client = await connect(userId);
      const { Items = [] } = await documentClient().send(
        new QueryCommand({
          TableName: tableName('receivers'),
          KeyConditionExpression: 'user_id = :user',
          ExpressionAttributeValues: { ':user': userId },
        }),
      );
      expect(Items).toHaveLength(1);
      const leave = (frames: { pending: string; holder: string; until: number }) =>
        documentClient().send(
          new UpdateCommand({
            TableName: tableName('receivers'),
            Key: { user_id: userId, receiver_id: Items[0]?.receiver_id },
            UpdateExpression: 'SET frames_pending = :pending, frames_holder = :holder, frames_until = :until',
            ExpressionAttributeValues: {
              ':pending': frames.pending,
              ':holder': frames.holder,
              ':until': frames.until,
            },
          }),
        );
      const chunk = (deliveryId?: string) => ({
        kind: 'chunk' as const,
        notification_id: created.body.id as string,
        recipients: [userId],
        ...(deliveryId ? { delivery_id: deliveryId } : {}),
      });
      const frames = () =>
        client.frames.filter(
          (frame) => frame.type === 'notification' && frame.notification_id === created.body.id,
        ).length;
      return { client, leave, chunk, frames, userId, id: created.body.id as string };
    };

    it('left by a receive that died (its lease expired): the redelivery sends them', async () => {
      const { leave, chunk, frames } = await prepare('crashed');
      await leave({ pending: 'message-1', holder: 'message-1', until: Date.now() - 1 });
      expect(await processFanoutMessage(chunk(), handlingOf('message-1'))).toBe('delivered');
      await eventually(frames, (count) => count === 1, 10_000);
    });

    it('held by a live receive of the same message: the copy sends nothing and fails back to the queue', async () => {
      const { leave, chunk, frames } = await prepare('held');
      await leave({ pending: 'message-2', holder: 'message-2', until: Date.now() + 30_000 });
      await expect(processFanoutMessage(chunk(), handlingOf('message-2'))).rejects.toBeInstanceOf(
        FramesHeldByOtherReceive,
      );
      // Once the holder is past its deadline the message, back from the queue, takes them over.
      await leave({ pending: 'message-2', holder: 'message-2', until: Date.now() - 1 });
      expect(await processFanoutMessage(chunk(), handlingOf('message-2'))).toBe('delivered');
      await eventually(frames, (count) => count === 1, 10_000);
    });

    it('held by a live receive of the message a half was split from: the half sends nothing and fails back', async () => {
      const { leave, chunk, frames } = await prepare('split');
      await leave({ pending: 'message-5', holder: 'message-5', until: Date.now() + 30_000 });
      const half = { ...chunk('message-5'), lease_holder: 'message-5' };
      await expect(processFanoutMessage(half, handlingOf('message-6'))).rejects.toBeInstanceOf(
        FramesHeldByOtherReceive,
      );
      // Once that receive is past its deadline the half, back from the queue, takes them over.
      await leave({ pending: 'message-5', holder: 'message-5', until: Date.now() - 1 });
      expect(await processFanoutMessage(half, handlingOf('message-6'))).toBe('delivered');
      await eventually(frames, (count) => count === 1, 10_000);
    });

    it('held by another message of the same delivery: left to it, acknowledged', async () => {
      const { leave, chunk, frames, client, userId, id } = await prepare('other');
      const delivery = `request:${id}`;
      await leave({ pending: delivery, holder: 'message-3', until: Date.now() + 30_000 });
      expect(await processFanoutMessage(chunk(delivery), handlingOf('message-4'))).toBe('delivered');
      // A marker after it on the same connection: had the chunk sent a frame, it would have arrived first.
      const marker = await api('POST', '/notifications', service, {
        event_type: 'test.marker',
        title: 'marker',
        channels: ['realtime'],
        recipient_ids: [userId],
      });
      expect(marker.status).toBe(202);
      await client.next((frame) => frame.notification_id === marker.body.id, 10_000);
      expect(frames()).toBe(0);
    });
  });
});
