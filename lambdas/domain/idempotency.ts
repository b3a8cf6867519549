import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { canonical } from '../core/canonical-json';
import { documentClient, tableName } from '../core/clients';
import { conflict, ServiceError, validationError } from '../core/errors';
import { IDENTIFIER_CHARACTERS } from '../core/identifiers';
import { newId } from '../core/ids';
import type { Principal } from '../core/principal';

/** Contract §3: keys up to 128 characters, remembered 24 h per principal. */
const MAX_IDEMPOTENCY_KEY_LENGTH = IDENTIFIER_CHARACTERS.idempotencyKey;
const RETENTION_SECS = 24 * 3600;

export interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
}

export const requestHash = (request: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(request)))
    .digest('hex');

/**
 * How long an attempt holds its key: longer than any HTTP route may run (API Gateway's integration limit is
 * 30 s), so a lease that ran out belongs to an attempt that died without releasing it.
 */
export const IDEMPOTENCY_LEASE_MS = 30_000;
/** How long a concurrent request waits for the running attempt's response before answering 409 (under the
 * HTTP functions' 10 s timeout). */
const WAIT_FOR_RUNNING_MS = 8_000;
/** Polls start fast (the operation usually takes tens of ms) and back off to this. */
const MAX_POLL_MS = 250;

/**
 * A response as kept: the body as its JSON text, since a DynamoDB map does not keep the order of its keys and
 * a repeat must answer the identical body. (`body`: a map, as records written before kept it.)
 */
interface KeptResponse {
  readonly status: number;
  readonly body_json?: string;
  readonly body?: unknown;
}

const kept = (response: StoredResponse): KeptResponse => ({
  status: response.status,
  body_json: JSON.stringify(response.body),
});

const fromKept = (response: KeptResponse): StoredResponse => ({
  status: response.status,
  body: response.body_json === undefined ? response.body : JSON.parse(response.body_json),
});

interface IdempotencyRecord {
  readonly key: string;
  readonly request_hash: string;
  readonly reserved_id: string;
  /** Epoch ms until which an attempt runs the operation; absent when none does. */
  readonly running_until?: number;
  readonly response?: KeptResponse;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reserves the key for a new attempt; the record that was there when another attempt has it. */
const reserve = async (
  table: string,
  key: string,
  hash: string,
): Promise<{ reservedId: string } | { existing: IdempotencyRecord }> => {
  const reservedId = newId();
  try {
    await documentClient().send(
      new PutCommand({
        TableName: table,
        Item: {
          key,
          request_hash: hash,
          reserved_id: reservedId,
          running_until: Date.now() + IDEMPOTENCY_LEASE_MS,
          ttl: Math.floor(Date.now() / 1000) + RETENTION_SECS,
        },
        // A record past its ttl is gone for the contract (24 h) though TTL removes it only within days.
        ConditionExpression: 'attribute_not_exists(#key) OR #ttl < :now',
        ExpressionAttributeNames: { '#key': 'key', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': Math.floor(Date.now() / 1000) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { reservedId };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    return { existing: unmarshall(error.Item) as IdempotencyRecord };
  }
};

/** Takes the key over from an attempt that failed or died: true when this request now runs the operation. */
const takeOver = async (table: string, key: string): Promise<boolean> => {
  const now = Date.now();
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: { key },
        UpdateExpression: 'SET running_until = :until',
        // attribute_exists: an update would otherwise recreate a record TTL removed since it was read.
        ConditionExpression:
          'attribute_exists(#key) AND attribute_not_exists(#response) AND ' +
          '(attribute_not_exists(running_until) OR running_until < :now)',
        ExpressionAttributeNames: { '#key': 'key', '#response': 'response' },
        ExpressionAttributeValues: { ':until': now + IDEMPOTENCY_LEASE_MS, ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

const current = async (table: string, key: string): Promise<IdempotencyRecord | undefined> =>
  (await documentClient().send(new GetCommand({ TableName: table, Key: { key }, ConsistentRead: true })))
    .Item as IdempotencyRecord | undefined;

/**
 * Runs `operation` at most once at a time per (principal, Idempotency-Key): a repeat with the same body returns
 * the first response; a different body is a 409. The record reserves the resource id before the operation
 * runs and holds a lease while it runs: a concurrent request waits for that response (409 if it takes longer
 * than a few seconds), and a retry after a failure or a crash takes the lease over and resumes with the same
 * id (so the operation must be safe to run again for one id, but never runs twice at once).
 */
export const withIdempotency = async (
  scope: { readonly operation: string; readonly principal: Principal; readonly key: string | undefined },
  request: unknown,
  operation: (reservedId: string) => Promise<StoredResponse>,
): Promise<StoredResponse> => {
  if (scope.key === undefined) return operation(newId());
  if (scope.key.length === 0 || scope.key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw validationError('Invalid Idempotency-Key header', [
      { field: 'Idempotency-Key', issue: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters` },
    ]);
  }
  const key = `${scope.operation}\n${scope.principal.kind}:${scope.principal.id}\n${scope.key}`;
  const hash = requestHash(request);
  const table = tableName('idempotency');
  const reservation = await reserve(table, key, hash);
  let reservedId: string;
  if ('reservedId' in reservation) reservedId = reservation.reservedId;
  else {
    const outcome = await joinEarlier(table, key, hash, reservation.existing);
    if ('response' in outcome) return outcome.response;
    reservedId = outcome.reservedId;
  }
  let response: StoredResponse;
  try {
    response = await operation(reservedId);
  } catch (error) {
    // Release the lease so that the client's retry resumes at once instead of waiting for it to run out.
    await documentClient()
      .send(new UpdateCommand({ TableName: table, Key: { key }, UpdateExpression: 'REMOVE running_until' }))
      .catch(() => undefined);
    throw error;
  }
  await documentClient().send(
    new UpdateCommand({
      TableName: table,
      Key: { key },
      UpdateExpression: 'SET #response = :response REMOVE running_until',
      ExpressionAttributeNames: { '#response': 'response' },
      ExpressionAttributeValues: { ':response': kept(response) },
    }),
  );
  return response;
};

/**
 * A request that found the key taken: the stored response, or the lease of an attempt that failed or died,
 * or — while the earlier attempt still runs — its response once written (409 if that takes too long).
 */
const joinEarlier = async (
  table: string,
  key: string,
  hash: string,
  found: IdempotencyRecord,
): Promise<{ response: StoredResponse } | { reservedId: string }> => {
  const deadline = Date.now() + WAIT_FOR_RUNNING_MS;
  let pollMs = 20;
  let record: IdempotencyRecord | undefined = found;
  for (;;) {
    if (!record) throw new Error(`idempotency record ${key} vanished`);
    if (record.request_hash !== hash) {
      throw conflict('This Idempotency-Key was already used with a different request body');
    }
    if (record.response) return { response: fromKept(record.response) };
    const running = record.running_until !== undefined && record.running_until >= Date.now();
    if (!running && (await takeOver(table, key))) return { reservedId: record.reserved_id };
    if (Date.now() > deadline) {
      throw new ServiceError(
        'conflict',
        'A request with this Idempotency-Key is still being processed; retry later',
        undefined,
        { 'Retry-After': '1' },
      );
    }
    await sleep(pollMs);
    pollMs = Math.min(MAX_POLL_MS, pollMs * 2);
    record = await current(table, key);
  }
};
