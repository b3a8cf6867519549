import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './clients';

/** BatchGetItem takes at most 100 keys per request. */
const KEYS_PER_REQUEST = 100;
const MAX_ATTEMPTS = 5;

/**
 * Reads the items of `keys` from one table with BatchGetItem: 100 keys per request, unprocessed keys retried
 * with a backoff (DynamoDB returns them under load), and an error if some stay unprocessed. Missing items
 * are simply absent from the result.
 */
export const batchGetAll = async (
  table: string,
  keys: readonly Record<string, unknown>[],
  options: {
    readonly projection?: string;
    readonly names?: Record<string, string>;
    readonly consistent?: boolean;
  } = {},
): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  for (let start = 0; start < keys.length; start += KEYS_PER_REQUEST) {
    let pending = keys.slice(start, start + KEYS_PER_REQUEST);
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result = await documentClient().send(
        new BatchGetCommand({
          RequestItems: {
            [table]: {
              Keys: pending,
              ProjectionExpression: options.projection,
              ExpressionAttributeNames: options.names,
              ConsistentRead: options.consistent,
            },
          },
        }),
      );
      items.push(...(result.Responses?.[table] ?? []));
      pending = result.UnprocessedKeys?.[table]?.Keys ?? [];
    }
  }
  return items;
};
