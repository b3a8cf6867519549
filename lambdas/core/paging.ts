import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './clients';

export type ItemKey = Record<string, unknown>;

/**
 * One page of a DynamoDB Query, the one way every listing pages: up to `limit` items after `startKey`, and the
 * key to start the next page after — undefined when nothing follows. It asks for one item more than it returns,
 * so a full last page says "no more" instead of handing out a cursor to an empty page. A FilterExpression can
 * thin what a Query returns: it reads on until the page is full, the partition ends, or `maxReads` Queries
 * were made (then the next page starts where the reading stopped).
 */
export const queryPage = async <T extends ItemKey>(
  query: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>,
  options: {
    readonly limit: number;
    readonly startKey?: ItemKey | undefined;
    /** The table's (or index's) key of an item: where the next page starts after it. */
    readonly keyOf: (item: T) => ItemKey;
    readonly maxReads?: number;
  },
): Promise<{ items: T[]; nextKey: ItemKey | undefined }> => {
  const items: T[] = [];
  let startKey = options.startKey;
  const maxReads = options.maxReads ?? Number.POSITIVE_INFINITY;
  for (let reads = 0; reads < maxReads; reads += 1) {
    const out = await documentClient().send(
      new QueryCommand({ ...query, Limit: options.limit - items.length + 1, ExclusiveStartKey: startKey }),
    );
    items.push(...((out.Items ?? []) as T[]));
    startKey = out.LastEvaluatedKey;
    if (items.length > options.limit || !startKey) break;
  }
  if (items.length > options.limit) {
    const page = items.slice(0, options.limit);
    return { items: page, nextKey: options.keyOf(page.at(-1) as T) };
  }
  // Here every item up to startKey was read: the next page starts there, or nothing follows.
  return { items, nextKey: startKey };
};
