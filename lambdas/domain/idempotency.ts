import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../core/clients';
import { conflict, validationError } from '../core/errors';
import { newId } from '../core/ids';
import type { Principal } from '../core/principal';

/** Contract §3: keys up to 128 characters, remembered 24 h per principal. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 128;
const RETENTION_SECS = 24 * 3600;

export interface StoredResponse {
  readonly status: number;
  readonly body: unknown;
}

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
};

export const requestHash = (request: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(canonical(request)))
    .digest('hex');

/**
 * Runs `operation` at most once per (principal, Idempotency-Key): a repeat with the same body returns the first
 * response; a different body is a 409. The record reserves the resource id before the operation runs, so a
 * retry after a failure resumes with the same id (the operation must be safe to run twice for one id).
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
  let reservedId = newId();
  try {
    await documentClient().send(
      new PutCommand({
        TableName: table,
        Item: {
          key,
          request_hash: hash,
          reserved_id: reservedId,
          ttl: Math.floor(Date.now() / 1000) + RETENTION_SECS,
        },
        ConditionExpression: 'attribute_not_exists(#key)',
        ExpressionAttributeNames: { '#key': 'key' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    const existing = unmarshall(error.Item) as {
      request_hash: string;
      reserved_id: string;
      response?: StoredResponse;
    };
    if (existing.request_hash !== hash) {
      throw conflict('This Idempotency-Key was already used with a different request body');
    }
    if (existing.response) return existing.response;
    reservedId = existing.reserved_id; // an earlier attempt did not finish: resume it with the same id
  }
  const response = await operation(reservedId);
  await documentClient().send(
    new UpdateCommand({
      TableName: table,
      Key: { key },
      UpdateExpression: 'SET #response = :response',
      ExpressionAttributeNames: { '#response': 'response' },
      ExpressionAttributeValues: { ':response': response },
    }),
  );
  return response;
};
