import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { ServiceError, toServiceError } from '../../lambdas/core/errors';
import type { Principal } from '../../lambdas/core/principal';
import { requestHash, type StoredResponse, withIdempotency } from '../../lambdas/domain/idempotency';
import { useDynamoDbLocal, useDynamoDbOutage } from '../support/dynamodb';

useDynamoDbLocal();
const outage = useDynamoDbOutage();

const principal: Principal = { kind: 'service', id: 'billing', scopes: [], expiresAt: 0 };
let seq = 0;
const scope = () => {
  seq += 1;
  return { operation: 'test.op', principal, key: `key-${Date.now()}-${seq}` };
};

const slowly = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type KeyScope = ReturnType<typeof scope>;

/** An attempt whose operation fails (the bus is down) after the key reserved its id, which goes to `ids`. */
const failedAttempt = async (keyScope: KeyScope, ids: string[]) => {
  const failing = withIdempotency(keyScope, { a: 1 }, async (id) => {
    ids.push(id);
    throw new Error('bus down');
  });
  await expect(failing).rejects.toThrow('bus down');
};

/** An attempt whose operation succeeds with the id it was given (pushed to `ids`). */
const succeedingAttempt = (keyScope: KeyScope, ids: string[]) =>
  withIdempotency(keyScope, { a: 1 }, async (id) => {
    ids.push(id);
    return { status: 202, body: { id } };
  });

/** An attempt while the store fails every `operation` on the idempotency table: what it threw (it must not run). */
const attemptWhileFailing = async (keyScope: KeyScope, operation: 'PutItem' | 'UpdateItem') => {
  outage.fail((called, request) => called === operation && request.TableName === tableName('idempotency'));
  try {
    return await withIdempotency(keyScope, { a: 1 }, async () => {
      throw new Error('must not run');
    }).catch((caught: unknown) => caught);
  } finally {
    outage.heal();
  }
};

/**
 * An attempt whose operation runs until `release()`, returned once it holds the key (its operation started). A
 * repeat started after a fixed pause instead could reserve the key first on a loaded machine.
 */
const attemptHoldingTheKey = async (keyScope: KeyScope) => {
  let release = () => {};
  let started = () => {};
  const holding = new Promise<void>((resolve) => {
    started = resolve;
  });
  const running = withIdempotency(keyScope, { a: 1 }, async (id): Promise<StoredResponse> => {
    started();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    return { status: 202, body: { id } };
  });
  await holding;
  return { running, release: () => release() };
};

/** The key a record of `keyScope` is stored under, for the billing service's calls. */
const storedKey = (keyScope: KeyScope) => `${keyScope.operation}\nservice:billing\n${keyScope.key}`;

/** The record an earlier attempt left: reserved an id and held the key until `runningUntil`, no response. */
const leaveAttempt = (keyScope: KeyScope, reservedId: string, runningUntil: number) =>
  documentClient().send(
    new PutCommand({
      TableName: tableName('idempotency'),
      Item: {
        key: storedKey(keyScope),
        request_hash: requestHash({ a: 1 }),
        reserved_id: reservedId,
        running_until: runningUntil,
        ttl: Math.floor(Date.now() / 1000) + 3600,
      },
    }),
  );

/**
 * Deletes `keyScope`'s record just before the first `operation` on the idempotency table reaches the store (as
 * TTL could); whether it has happened yet.
 */
const removeRecordBeforeFirst = (keyScope: KeyScope, operation: 'GetItem' | 'UpdateItem') => {
  const table = tableName('idempotency');
  let removed = false;
  outage.interpose(async (called, request) => {
    if (called !== operation || request.TableName !== table || removed) return;
    removed = true;
    await documentClient().send(new DeleteCommand({ TableName: table, Key: { key: storedKey(keyScope) } }));
  });
  return () => removed;
};

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
    await failedAttempt(keyScope, ids);
    const retried = await succeedingAttempt(keyScope, ids);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]);
    expect(retried.body).toEqual({ id: ids[0] });
  });

  it('takes over an attempt whose lease ran out (it crashed) with its reserved id', async () => {
    const keyScope = scope();
    await leaveAttempt(keyScope, 'reserved-1', Date.now() - 1);
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

  it("keeps each caller's key apart: another principal with the same key gets its own response", async () => {
    const { key } = scope();
    const callers: Principal[] = [
      principal,
      { kind: 'service', id: 'shipping', scopes: [], expiresAt: 0 },
      { kind: 'user', id: 'billing', roles: [], isAdmin: false, expiresAt: 0, acceptedUntil: 0 },
    ];
    const answers = [];
    for (const caller of callers) {
      answers.push(
        await withIdempotency({ operation: 'test.op', principal: caller, key }, { a: 1 }, async (id) => ({
          status: 202,
          body: { id, caller: `${caller.kind}:${caller.id}` },
        })),
      );
    }
    expect(answers.map((answer) => answer.body)).toEqual([
      { id: expect.any(String), caller: 'service:billing' },
      { id: expect.any(String), caller: 'service:shipping' },
      { id: expect.any(String), caller: 'user:billing' },
    ]);
    expect(new Set(answers.map((answer) => (answer.body as { id: string }).id)).size).toBe(3);
  });

  it('keeps operations apart: the same key on another operation runs it', async () => {
    const { key } = scope();
    const first = await withIdempotency({ operation: 'a.create', principal, key }, { a: 1 }, async (id) => ({
      status: 202,
      body: { id },
    }));
    const other = await withIdempotency({ operation: 'b.create', principal, key }, { a: 1 }, async (id) => ({
      status: 201,
      body: { id },
    }));
    expect(other.status).toBe(201);
    expect(other.body).not.toEqual(first.body);
  });

  it("returns the stored status and body to a repeat, whatever the order of the body's keys", async () => {
    const keyScope = scope();
    let runs = 0;
    const operation = async (id: string): Promise<StoredResponse> => {
      runs += 1;
      return { status: 201, body: { id, run: runs } };
    };
    const first = await withIdempotency(keyScope, { b: [1, { y: 2, x: 1 }], a: 'x' }, operation);
    const repeat = await withIdempotency(keyScope, { a: 'x', b: [1, { x: 1, y: 2 }] }, operation);
    expect(repeat).toEqual(first);
    expect(first.status).toBe(201);
    expect(runs).toBe(1);
  });

  it.each([
    ['another array order', { a: 'x', b: [{ x: 1, y: 2 }, 1] }],
    ['another nested value', { a: 'x', b: [1, { x: 1, y: 3 }] }],
    ['a missing field', { b: [1, { x: 1, y: 2 }] }],
    ["an object with the list's entries", { a: 'x', b: { 0: 1, 1: { x: 1, y: 2 } } }],
  ])('answers 409 to %s under the same key', async (_what, body) => {
    const keyScope = scope();
    await withIdempotency(keyScope, { a: 'x', b: [1, { x: 1, y: 2 }] }, async (id) => ({
      status: 202,
      body: { id },
    }));
    const error = await withIdempotency(keyScope, body, async () => {
      throw new Error('must not run');
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      status: 409,
      code: 'conflict',
      message: 'This Idempotency-Key was already used with a different request body',
    });
  });

  it.each([
    ['empty', ''],
    ['129 characters long', 'k'.repeat(129)],
  ])('refuses an Idempotency-Key that is %s, naming the header', async (_what, key) => {
    const error = await withIdempotency({ operation: 'test.op', principal, key }, {}, async () => {
      throw new Error('must not run');
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      status: 400,
      code: 'validation',
      message: 'Invalid Idempotency-Key header',
      details: [{ field: 'Idempotency-Key', issue: 'must be 1 to 128 characters' }],
    });
  });

  it('takes a 128-character key and remembers it for 24 hours', async () => {
    const key = `${Date.now()}-`.padEnd(128, 'k');
    const answer = await withIdempotency({ operation: 'test.op', principal, key }, {}, async (id) => ({
      status: 202,
      body: { id },
    }));
    expect(answer.status).toBe(202);
    const stored = await documentClient().send(
      new GetCommand({
        TableName: tableName('idempotency'),
        Key: { key: `test.op\nservice:billing\n${key}` },
      }),
    );
    const dayFromNow = Math.floor(Date.now() / 1000) + 24 * 3600;
    expect(stored.Item?.ttl).toBeGreaterThan(dayFromNow - 60);
    expect(stored.Item?.ttl).toBeLessThanOrEqual(dayFromNow);
  });

  it('treats a key whose 24 hours have passed as new, though DynamoDB has not yet removed its expired record', async () => {
    // TTL deletes an expired item within days, not at once: until then it is still read, and must not answer.
    const keyScope = scope();
    await documentClient().send(
      new PutCommand({
        TableName: tableName('idempotency'),
        Item: {
          key: storedKey(keyScope),
          request_hash: requestHash({ a: 0 }),
          reserved_id: 'reserved-yesterday',
          response: { status: 202, body: { id: 'reserved-yesterday' } },
          ttl: Math.floor(Date.now() / 1000) - 60,
        },
      }),
    );
    const ids: string[] = [];
    const answer = await succeedingAttempt(keyScope, ids);
    expect(ids).toHaveLength(1);
    expect(ids[0]).not.toBe('reserved-yesterday');
    expect(answer).toEqual({ status: 202, body: { id: ids[0] } });
    // And it is remembered for the next 24 hours like any new key.
    expect(await succeedingAttempt(keyScope, ids)).toEqual(answer);
    expect(ids).toHaveLength(1);
  });

  it('without a key, runs the operation every time with a new id', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      await withIdempotency({ operation: 'test.op', principal, key: undefined }, { a: 1 }, async (id) => {
        ids.push(id);
        return { status: 202, body: { id } };
      });
    }
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('answers 409 with Retry-After while another attempt still holds the key, running nothing', async () => {
    const keyScope = scope();
    await leaveAttempt(keyScope, 'reserved-2', Date.now() + 60_000);
    const error = await withIdempotency(keyScope, { a: 1 }, async () => {
      throw new Error('must not run');
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      status: 409,
      code: 'conflict',
      message: 'A request with this Idempotency-Key is still being processed; retry later',
      headers: { 'Retry-After': '1' },
    });
  });

  it("answers a repeat that waited for the running attempt with that attempt's response", async () => {
    const keyScope = scope();
    const { running, release } = await attemptHoldingTheKey(keyScope);
    const table = tableName('idempotency');
    let polled = () => {};
    const repeatPolled = new Promise<void>((resolve) => {
      polled = resolve;
    });
    outage.interpose(async (operation, request) => {
      if (operation === 'GetItem' && request.TableName === table) polled();
    });
    const waiting = withIdempotency(keyScope, { a: 1 }, async () => {
      throw new Error('must not run');
    });
    // The first attempt answers once the repeat waits for it (its first read of the record).
    await repeatPolled;
    release();
    expect(await waiting).toEqual(await running);
  });

  it('fails loudly when the record it waits on disappears', async () => {
    const keyScope = scope();
    const { running, release } = await attemptHoldingTheKey(keyScope);
    // Removed just before the repeat's first read of it, after its reservation found it taken.
    const removed = removeRecordBeforeFirst(keyScope, 'GetItem');
    const waiting = withIdempotency(keyScope, { a: 1 }, async () => ({ status: 202, body: {} })).catch(
      (caught: unknown) => caught,
    );
    expect(await waiting).toMatchObject({ message: expect.stringContaining('vanished') });
    expect(removed()).toBe(true);
    release();
    await running;
  });

  it('does not recreate a record removed (by TTL) between its read and the takeover of its lease', async () => {
    const keyScope = scope();
    await leaveAttempt(keyScope, 'reserved-removed', Date.now() - 1);
    const removed = removeRecordBeforeFirst(keyScope, 'UpdateItem');
    const error = await withIdempotency(keyScope, { a: 1 }, async () => {
      throw new Error('must not run');
    }).catch((caught: unknown) => caught);
    expect(removed()).toBe(true);
    expect(error).toMatchObject({ message: expect.stringContaining('vanished') });
    const left = await documentClient().send(
      new GetCommand({
        TableName: tableName('idempotency'),
        Key: { key: storedKey(keyScope) },
        ConsistentRead: true,
      }),
    );
    expect(left.Item).toBeUndefined();
  });

  it('lets exactly one of several concurrent retries take over a crashed attempt', async () => {
    const keyScope = scope();
    await leaveAttempt(keyScope, 'reserved-3', Date.now() - 1);
    // The race made certain: every takeover write waits until all five retries have read the expired lease and
    // sent theirs, so four of them lose the conditional write (on a quiet machine they could run one by one).
    const table = tableName('idempotency');
    let arrived = 0;
    let allArrived = () => {};
    const barrier = new Promise<void>((resolve) => {
      allArrived = resolve;
    });
    outage.interpose(async (operation, request) => {
      if (
        operation !== 'UpdateItem' ||
        request.TableName !== table ||
        request.UpdateExpression !== 'SET running_until = :until'
      )
        return;
      arrived += 1;
      if (arrived === 5) allArrived();
      await barrier;
    });
    let runs = 0;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        withIdempotency(keyScope, { a: 1 }, async (id) => {
          runs += 1;
          await slowly(300);
          return { status: 202, body: { id } };
        }),
      ),
    );
    expect(arrived).toBe(5);
    expect(runs).toBe(1);
    for (const answer of answers) expect(answer).toEqual({ status: 202, body: { id: 'reserved-3' } });
  });

  it('answers 503 when the store fails as a retry takes the key over, and a later retry resumes with the same id', async () => {
    const keyScope = scope();
    const ids: string[] = [];
    await failedAttempt(keyScope, ids);
    // The retry finds the released key and tries to take it over: that write fails.
    const error = await attemptWhileFailing(keyScope, 'UpdateItem');
    // What the client gets: 503 "try again", not a 409 that says another attempt is still running.
    expect(toServiceError(error)).toMatchObject({
      status: 503,
      code: 'unavailable',
      headers: { 'Retry-After': '1' },
    });
    const retried = await succeedingAttempt(keyScope, ids);
    expect(ids).toEqual([ids[0], ids[0]]);
    expect(retried).toEqual({ status: 202, body: { id: ids[0] } });
  });

  it('answers 503 when the store fails as a first request reserves its key, running nothing', async () => {
    const keyScope = scope();
    const error = await attemptWhileFailing(keyScope, 'PutItem');
    expect(toServiceError(error)).toMatchObject({ status: 503, code: 'unavailable' });
    const ids: string[] = [];
    expect(await succeedingAttempt(keyScope, ids)).toEqual({ status: 202, body: { id: ids[0] } });
  });
});
