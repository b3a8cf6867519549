import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { ServiceError } from '../../lambdas/core/errors';
import type { Principal } from '../../lambdas/core/principal';
import { requestHash, type StoredResponse, withIdempotency } from '../../lambdas/domain/idempotency';
import { useDynamoDbLocal } from '../support/dynamodb';

useDynamoDbLocal();

const principal: Principal = { kind: 'service', id: 'billing', scopes: [], expiresAt: 0 };
let seq = 0;
const scope = () => {
  seq += 1;
  return { operation: 'test.op', principal, key: `key-${Date.now()}-${seq}` };
};

const slowly = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('withIdempotency', () => {
  it('runs the operation once for 20 concurrent requests with one key, and all get its response', async () => {
    const keyScope = scope();
    const runs: string[] = [];
    const operation = async (id: string): Promise<StoredResponse> => {
      runs.push(id);
      await slowly(300); // long enough for every other request to find the reservation
      return { status: 202, body: { id } };
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => withIdempotency(keyScope, { a: 1 }, operation)),
    );
    expect(runs).toHaveLength(1);
    for (const answer of answers) expect(answer).toEqual({ status: 202, body: { id: runs[0] } });
  });

  it('lets a retry resume with the same id after the first attempt failed', async () => {
    const keyScope = scope();
    const ids: string[] = [];
    const failing = withIdempotency(keyScope, { a: 1 }, async (id) => {
      ids.push(id);
      throw new Error('bus down');
    });
    await expect(failing).rejects.toThrow('bus down');
    const retried = await withIdempotency(keyScope, { a: 1 }, async (id) => {
      ids.push(id);
      return { status: 202, body: { id } };
    });
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]);
    expect(retried.body).toEqual({ id: ids[0] });
  });

  it('takes over an attempt whose lease ran out (it crashed) with its reserved id', async () => {
    const keyScope = scope();
    const key = `${keyScope.operation}\nservice:billing\n${keyScope.key}`;
    await documentClient().send(
      new PutCommand({
        TableName: tableName('idempotency'),
        Item: {
          key,
          request_hash: requestHash({ a: 1 }),
          reserved_id: 'reserved-1',
          running_until: Date.now() - 1,
          ttl: Math.floor(Date.now() / 1000) + 3600,
        },
      }),
    );
    const answer = await withIdempotency(keyScope, { a: 1 }, async (id) => ({ status: 202, body: { id } }));
    expect(answer.body).toEqual({ id: 'reserved-1' });
  });

  it('answers 409 for the same key with another body, running nothing', async () => {
    const keyScope = scope();
    await withIdempotency(keyScope, { a: 1 }, async (id) => ({ status: 202, body: { id } }));
    const error = await withIdempotency(keyScope, { a: 2 }, async () => {
      throw new Error('must not run');
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('conflict');
  });
});
