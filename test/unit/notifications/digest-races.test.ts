import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import type { Principal } from '../../../lambdas/core/principal';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { createNotification } from '../../../lambdas/domain/notifications/create';
import { processFanoutMessage } from '../../../lambdas/domain/notifications/fanout';
import { type FanoutMessage, fanoutQueue } from '../../../lambdas/domain/notifications/fanout-messages';
import { createNotificationSchema } from '../../../lambdas/domain/notifications/schema';
import { digestRecords } from '../../support/digest-records';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { handlingOf, useQueuesWithoutWorkers } from '../../support/queues';

/**
 * Joins and closes of one user's digest batches at once, each request and each close run twice (a retried
 * request, a close message handed out twice), closes run the moment their message shows (docs/digests.md
 * "Exactly once"): every notification ends up in exactly one digest, each digest is delivered once, and the
 * digests' counts add up to the notifications sent.
 */
useDynamoDbLocal();
const queues = useQueuesWithoutWorkers();

const service: Principal = { kind: 'service', id: 'forum', scopes: ['notifications:write'], expiresAt: 0 };
const MEMBERS = 60;

describe('digest batches under concurrency and duplicates', () => {
  it('puts every notification into exactly one delivered digest, whatever joins and closes race', async () => {
    const userId = `digest-race-${Date.now()}`;
    const body = parseOrThrow(createNotificationSchema, {
      event_type: 'comment.created',
      title: 'Comment',
      recipient_ids: [userId],
      digest: { key: 'post-1', window_secs: 1, max_items: 50 },
    });
    let sending = true;
    const closes: FanoutMessage[] = [];
    // Closes run as soon as their (1 s delayed) message shows, twice each, while members keep joining.
    const closer = (async () => {
      while (sending) {
        for (const { message, messageId } of await queues.take(fanoutQueue)) {
          closes.push(message);
          await Promise.all([
            processFanoutMessage(message, handlingOf(messageId), Number.MAX_SAFE_INTEGER),
            processFanoutMessage(message, handlingOf(messageId), Number.MAX_SAFE_INTEGER),
          ]);
        }
      }
    })();
    const ids = Array.from({ length: MEMBERS }, (_, index) => `race-${userId}-${index}`);
    for (let start = 0; start < ids.length; start += 6) {
      // Six at a time, each sent twice at once (the same id: a retried request).
      await Promise.all(
        ids
          .slice(start, start + 6)
          .flatMap((id) => [createNotification(service, body, id), createNotification(service, body, id)]),
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    // The last batch's close is a delayed message: wait until every opened batch is closed.
    for (;;) {
      const batches = await digestRecords(userId, 'window#');
      if (batches.length > 0 && batches.every((batch) => batch.state === 'closed')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    sending = false;
    await closer;

    const batches = await digestRecords(userId, 'window#');
    expect(batches.every((batch) => batch.state === 'closed')).toBe(true);
    // Every notification is a member of exactly one batch (the closed batches' member lists are the final word).
    const members = batches.flatMap((batch) => batch.members as string[]);
    expect(members.sort()).toEqual([...ids].sort());
    expect(batches.reduce((sum, batch) => sum + (batch.count as number), 0)).toBe(MEMBERS);
    // Each batch counts exactly its members, and lists them (max_items 50 > any batch here).
    for (const batch of batches) {
      expect(batch.count).toBe((batch.members as string[]).length);
      expect(
        (batch.items as { notification_id: string }[]).map((item) => item.notification_id).sort(),
      ).toEqual([...(batch.members as string[])].sort());
    }
    expect(batches.length).toBeGreaterThan(1); // the race happened: members joined more than one batch
    // One feed item per batch: the digest, delivered once.
    const feed = await documentClient().send(
      new QueryCommand({
        TableName: tableName('receivers'),
        KeyConditionExpression: 'user_id = :user',
        ExpressionAttributeValues: { ':user': userId },
        ConsistentRead: true,
      }),
    );
    expect(feed.Items).toHaveLength(batches.length);
    let total = 0;
    for (const receiver of feed.Items ?? []) {
      const notification = await documentClient().send(
        new GetCommand({ TableName: tableName('notifications'), Key: { id: receiver.notification_id } }),
      );
      total += (notification.Item?.data as { digest: { count: number } } | undefined)?.digest.count ?? 0;
    }
    expect(total).toBe(MEMBERS);
    expect(closes.length).toBeGreaterThanOrEqual(batches.length);
  }, 120_000);
});
