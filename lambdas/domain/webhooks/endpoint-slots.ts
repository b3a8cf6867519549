import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';

/**
 * Per-endpoint concurrency: at most `limit` attempts to one webhook are in flight at once, so a slow receiver
 * holds at most that many of the delivery worker's invocations and the others keep flowing. Each in-flight
 * attempt leases one of the webhook's slots — items `<webhook id>#slot#<n>` of the `webhooks` table, outside
 * its listing index — until its invocation's deadline, so a crashed holder frees its slot by itself.
 */

export interface SlotLease {
  readonly key: { readonly id: string };
  readonly holder: string;
}

const slotKey = (webhookId: string, slot: number) => ({ id: `${webhookId}#slot#${slot}` });

/**
 * A slot item expires (the `webhooks` table's TTL) this long after its last lease ran out: slots of a deleted
 * webhook, or above a lowered limit, go by themselves, and a lease in force is never near its item's expiry.
 */
export const SLOT_RETENTION_SECS = 86_400;

/** Takes a free (or expired) slot for `holder` until `until`; undefined when all `limit` slots are busy. */
export const leaseSlot = async (
  webhookId: string,
  limit: number,
  holder: string,
  until: Date,
  now: Date,
): Promise<SlotLease | undefined> => {
  // Random order spreads contending attempts over the slots instead of all racing for slot 0.
  const order = Array.from({ length: limit }, (_, slot) => slot).sort(() => Math.random() - 0.5);
  for (const slot of order) {
    const key = slotKey(webhookId, slot);
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName('webhooks'),
          Key: key,
          UpdateExpression: 'SET holder = :holder, leased_until = :until, #ttl = :ttl',
          ConditionExpression:
            'attribute_not_exists(leased_until) OR leased_until < :now OR holder = :holder',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':holder': holder,
            ':until': until.toISOString(),
            ':now': now.toISOString(),
            ':ttl': Math.ceil(until.getTime() / 1000) + SLOT_RETENTION_SECS,
          },
        }),
      );
      return { key, holder };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
  return undefined;
};

/** Frees the slot if `lease` still holds it (an expired lease may have been taken over meanwhile). */
export const releaseSlot = async (lease: SlotLease): Promise<void> => {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('webhooks'),
        Key: lease.key,
        UpdateExpression: 'REMOVE holder, leased_until',
        ConditionExpression: 'holder = :holder',
        ExpressionAttributeValues: { ':holder': lease.holder },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
};
