import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { forEachLimited } from '../../../lambdas/core/concurrency';
import { countQuery, type QueryInput, queryAll, queryOnce, queryPages } from '../../../lambdas/core/paging';
import { wiring } from '../../../lib/wiring';
import { useDynamoDbLocal } from '../../support/dynamodb';

useDynamoDbLocal(wiring.tables.filter((table) => table.id === 'presence'));

const ROWS = 23;
/** One partition of 23 rows, every third one `odd`, read 5 at a time so that every helper needs several reads. */
const scope = (filter?: 'odd'): QueryInput => ({
  TableName: tableName('presence'),
  KeyConditionExpression: '#scope = :scope',
  ExpressionAttributeNames: { '#scope': 'scope', ...(filter ? { '#kind': 'kind' } : {}) },
  ExpressionAttributeValues: { ':scope': 'room:paging', ...(filter ? { ':kind': filter } : {}) },
  ...(filter ? { FilterExpression: '#kind = :kind' } : {}),
  Limit: 5,
});

beforeAll(async () => {
  const rows = Array.from({ length: ROWS }, (_, index) => ({
    scope: 'room:paging',
    member: `m${String(index).padStart(2, '0')}`,
    kind: index % 3 === 0 ? 'odd' : 'even',
  }));
  for (let start = 0; start < rows.length; start += 25) {
    await documentClient().send(
      new BatchWriteCommand({
        RequestItems: {
          [tableName('presence')]: rows.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })),
        },
      }),
    );
  }
});

describe('Query paging (core/paging.ts)', () => {
  it('queryAll reads every page, in key order', async () => {
    const items = await queryAll<{ member: string }>(scope());
    expect(items.map((item) => item.member)).toEqual(
      Array.from({ length: ROWS }, (_, index) => `m${String(index).padStart(2, '0')}`),
    );
  });

  it('queryPages hands out each page as it is read', async () => {
    const sizes: number[] = [];
    for await (const page of queryPages(scope())) sizes.push(page.length);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(ROWS);
    expect(sizes.length).toBeGreaterThanOrEqual(5);
  });

  it('countQuery counts past the first page, and after a filter', async () => {
    expect(await countQuery(scope())).toBe(ROWS);
    expect(await countQuery(scope('odd'))).toBe(8);
  });

  it('queryOnce continues a chain from the key the last read gave', async () => {
    const first = await queryOnce<{ member: string }>(scope());
    expect(first.items.map((item) => item.member)).toEqual(['m00', 'm01', 'm02', 'm03', 'm04']);
    const second = await queryOnce<{ member: string }>(scope(), first.nextKey);
    expect(second.items[0]?.member).toBe('m05');
  });
});

describe('forEachLimited', () => {
  it('does every item, never more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await forEachLimited([...Array(20).keys()], 3, async (item) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      done.push(item);
      running -= 1;
    });
    expect(done.sort((a, b) => a - b)).toEqual([...Array(20).keys()]);
    expect(most).toBe(3);
  });
});
