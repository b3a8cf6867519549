import {
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { documentClient } from './clients';

/**
 * Paging of DynamoDB Query (and Scan), the one place that passes `LastEvaluatedKey` on as `ExclusiveStartKey`: a Query
 * returns at most 1 MB (or `Limit` items) at a time, and every caller that read only its first page would
 * silently miss the rest once a partition grows.
 */
export type ItemKey = Record<string, unknown>;

/** A Query without its paging fields: the helpers below set them. */
export type QueryInput = Omit<QueryCommandInput, 'ExclusiveStartKey'>;

export interface QueryRead<T> {
  readonly items: T[];
  /** Items this read matched (with `Select: 'COUNT'`, where `items` is empty). */
  readonly count: number;
  /** Where the next read starts; undefined when the query has nothing more. */
  readonly nextKey: ItemKey | undefined;
}

/**
 * One Query from `startKey`: a page of a chain that goes on in another invocation (a queue message, a
 * cursor), so the caller keeps `nextKey` itself.
 */
export const queryOnce = async <T>(query: QueryInput, startKey?: ItemKey): Promise<QueryRead<T>> => {
  const out = await documentClient().send(new QueryCommand({ ...query, ExclusiveStartKey: startKey }));
  return { items: (out.Items ?? []) as T[], count: out.Count ?? 0, nextKey: out.LastEvaluatedKey };
};

/** Every page of a Query, in order, for callers that handle a page at a time (memory stays bounded). */
export async function* queryPages<T>(query: QueryInput): AsyncGenerator<T[]> {
  let startKey: ItemKey | undefined;
  do {
    const read = await queryOnce<T>(query, startKey);
    yield read.items;
    startKey = read.nextKey;
  } while (startKey);
}

/** Every item a Query matches (for partitions known to be small: a user's subscriptions, a scope's rows). */
export const queryAll = async <T>(query: QueryInput): Promise<T[]> => {
  const items: T[] = [];
  for await (const page of queryPages<T>(query)) items.push(...page);
  return items;
};

/** Items a Query matches, every page counted (`Select: COUNT`: no item is returned). */
export const countQuery = async (query: QueryInput): Promise<number> => {
  let count = 0;
  let startKey: ItemKey | undefined;
  do {
    const read = await queryOnce(query.Select === 'COUNT' ? query : { ...query, Select: 'COUNT' }, startKey);
    count += read.count;
    startKey = read.nextKey;
  } while (startKey);
  return count;
};

export interface PageOptions<T> {
  readonly limit: number;
  readonly startKey?: ItemKey | undefined;
  /** The table's (or index's) key of an item: where the next page starts after it. */
  readonly keyOf: (item: T) => ItemKey;
  readonly maxReads?: number;
}

/**
 * One page of a listing: up to `limit` items after `startKey`, and the key to start the next page after —
 * undefined when nothing follows. It asks for one item more than it returns, so a full last page says "no
 * more" instead of handing out a cursor to an empty page. A FilterExpression can thin what a Query returns: it
 * reads on until the page is full, the partition ends, or `maxReads` Queries were made (then the next page
 * starts where the reading stopped).
 */
export const queryPage = <T extends ItemKey>(
  query: Omit<QueryInput, 'Limit'>,
  options: PageOptions<T>,
): Promise<{ items: T[]; nextKey: ItemKey | undefined }> =>
  readPage((limit, startKey) => queryOnce<T>({ ...query, Limit: limit }, startKey), options);

/** A Scan without its paging fields. */
export type ScanInput = Omit<ScanCommandInput, 'ExclusiveStartKey' | 'Limit'>;

/**
 * One page of a whole table, as queryPage pages a partition: for a table keyed by a partition key alone, whose
 * listing has no partition to query. The order is the table's (by hash), stable from page to page; a read costs
 * what it returns, never the table.
 */
export const scanPage = <T extends ItemKey>(
  scan: ScanInput,
  options: PageOptions<T>,
): Promise<{ items: T[]; nextKey: ItemKey | undefined }> =>
  readPage(async (limit, startKey) => {
    const out = await documentClient().send(
      new ScanCommand({ ...scan, Limit: limit, ExclusiveStartKey: startKey }),
    );
    return { items: (out.Items ?? []) as T[], count: out.Count ?? 0, nextKey: out.LastEvaluatedKey };
  }, options);

const readPage = async <T extends ItemKey>(
  readOnce: (limit: number, startKey: ItemKey | undefined) => Promise<QueryRead<T>>,
  options: PageOptions<T>,
): Promise<{ items: T[]; nextKey: ItemKey | undefined }> => {
  const items: T[] = [];
  let startKey = options.startKey;
  const maxReads = options.maxReads ?? Number.POSITIVE_INFINITY;
  for (let reads = 0; reads < maxReads; reads += 1) {
    const read = await readOnce(options.limit - items.length + 1, startKey);
    items.push(...read.items);
    startKey = read.nextKey;
    if (items.length > options.limit || !startKey) break;
  }
  if (items.length > options.limit) {
    const page = items.slice(0, options.limit);
    return { items: page, nextKey: options.keyOf(page.at(-1) as T) };
  }
  // Here every item up to startKey was read: the next page starts there, or nothing follows.
  return { items, nextKey: startKey };
};

/**
 * One page of a listing spread over partitions that share one sort order (write sharding: a hot partition
 * split into several keys): the same page read from each partition, from the same position, merged in the
 * listing's order. `positionOf` is an item's place in that order (its sort key), the same in every partition,
 * so one position is where every partition's next page starts (`startKeyAt`). When a partition's reading
 * stopped short (its `maxReads` with a filter), nothing beyond where it stopped is listed yet: the page ends
 * there and the next one starts from it, so no item is skipped.
 */
export const queryPageAcross = async <T extends ItemKey>(
  queries: readonly Omit<QueryInput, 'Limit'>[],
  options: {
    readonly limit: number;
    /** Where the page starts (after this position); undefined for the first page. */
    readonly after?: string | undefined;
    readonly startKeyAt: (partition: number, position: string) => ItemKey;
    readonly positionOf: (itemOrKey: ItemKey) => string;
    readonly keyOf: (item: T) => ItemKey;
    readonly order: 'ascending' | 'descending';
    readonly maxReads?: number;
  },
): Promise<{ items: T[]; after: string | undefined }> => {
  const pages = await Promise.all(
    queries.map((query, partition) =>
      queryPage<T>(
        { ...query, ScanIndexForward: options.order === 'ascending' },
        {
          limit: options.limit,
          startKey: options.after === undefined ? undefined : options.startKeyAt(partition, options.after),
          keyOf: options.keyOf,
          ...(options.maxReads === undefined ? {} : { maxReads: options.maxReads }),
        },
      ),
    ),
  );
  const sign = options.order === 'ascending' ? 1 : -1;
  const compare = (a: string, b: string) => sign * (a < b ? -1 : a > b ? 1 : 0);
  // Each partition is read up to its nextKey: the listing is complete only up to the earliest of them.
  const stops = pages.flatMap((page) => (page.nextKey ? [options.positionOf(page.nextKey)] : []));
  const stop = stops.sort(compare)[0];
  const merged = pages
    .flatMap((page) => page.items)
    .filter((item) => stop === undefined || compare(options.positionOf(item), stop) <= 0)
    .sort((a, b) => compare(options.positionOf(a), options.positionOf(b)));
  if (merged.length > options.limit) {
    const items = merged.slice(0, options.limit);
    return { items, after: options.positionOf(items.at(-1) as T) };
  }
  return { items: merged, after: stop };
};
