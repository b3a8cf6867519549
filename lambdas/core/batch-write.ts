import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './clients';

/** BatchWriteItem takes at most 25 requests per call. */
const REQUESTS_PER_CALL = 25;
const MAX_ATTEMPTS = 5;

/**
 * Deletes the items of `keys` from one table with BatchWriteItem: 25 keys per call, unprocessed ones retried
 * with a backoff (DynamoDB returns them under load), and an error if some stay unprocessed, so the caller's own
 * retry (a queue redelivery) takes over. Deleting an item that is gone already changes nothing.
 */
export const batchDeleteAll = async (
  table: string,
  keys: readonly Record<string, unknown>[],
): Promise<void> => {
  for (let start = 0; start < keys.length; start += REQUESTS_PER_CALL) {
    let pending: unknown[] = keys
      .slice(start, start + REQUESTS_PER_CALL)
      .map((key) => ({ DeleteRequest: { Key: key } }));
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt >= MAX_ATTEMPTS)
        throw new Error(`BatchWriteItem left ${pending.length} deletes unprocessed`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result = await documentClient().send(
        new BatchWriteCommand({ RequestItems: { [table]: pending as never } }),
      );
      pending = result.UnprocessedItems?.[table] ?? [];
    }
  }
};
