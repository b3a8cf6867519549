import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { notFound, validationError } from '../../core/errors';
import { newId } from '../../core/ids';
import { queryAll } from '../../core/paging';
import type * as z from '../../core/zod';
import { AddressRefused } from './address-policy';
import type { webhookSchema } from './responses';
import type { CreateWebhookInput } from './schema';
import { type SealedSecret, sealSecret } from './secret-box';
import { webhookSettings } from './settings';
import { checkWebhookUrl } from './url-policy';

/** The one value of the byList index's partition key: every webhook, newest first. */
const LIST_KEY = 'all';

export interface WebhookRecord {
  readonly id: string;
  readonly list: typeof LIST_KEY;
  readonly name: string;
  readonly url: string;
  readonly event_filters: readonly string[];
  readonly created_at: string;
  readonly enabled: boolean;
  readonly disabled_reason?: string;
  readonly disabled_at?: string;
  readonly secret: SealedSecret;
  /** Time of the first failed attempt since the last success; cleared by a success. */
  readonly failing_since?: string;
}

/** What the webhook routes answer (the schema is the API documents' too). */
export type WebhookView = z.output<typeof webhookSchema>;

export const toView = (record: Omit<WebhookRecord, 'secret' | 'list'>): WebhookView => ({
  id: record.id,
  name: record.name,
  url: record.url,
  event_filters: [...record.event_filters],
  created_at: record.created_at,
  enabled: record.enabled,
  ...(record.disabled_reason ? { disabled_reason: record.disabled_reason } : {}),
});

const filterItem = (filter: string, webhookId: string) => ({ filter, webhook_id: webhookId });

export const createWebhook = async (input: CreateWebhookInput, now = new Date()): Promise<WebhookView> => {
  try {
    await checkWebhookUrl(input.url, webhookSettings().allowLoopback);
  } catch (error) {
    if (error instanceof AddressRefused) {
      throw validationError('Invalid request body', [{ field: 'url', issue: error.message }]);
    }
    throw error;
  }
  const id = newId();
  const record: WebhookRecord = {
    id,
    list: LIST_KEY,
    name: input.name,
    url: input.url,
    event_filters: input.event_filters,
    created_at: now.toISOString(),
    enabled: true,
    secret: await sealSecret(input.secret, id),
  };
  // The webhook and its filter index entries appear together or not at all (≤ 1 + 50 actions of 100).
  await documentClient().send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: tableName('webhooks'),
            Item: record,
            ConditionExpression: 'attribute_not_exists(id)',
          },
        },
        ...input.event_filters.map((filter) => ({
          Put: { TableName: tableName('webhookFilters'), Item: filterItem(filter, id) },
        })),
      ],
    }),
  );
  return toView(record);
};

export const getWebhook = async (id: string): Promise<WebhookRecord | undefined> => {
  const out = await documentClient().send(
    new GetCommand({ TableName: tableName('webhooks'), Key: { id }, ConsistentRead: true }),
  );
  return out.Item as WebhookRecord | undefined;
};

export const requireWebhook = async (id: string): Promise<WebhookRecord> => {
  const record = await getWebhook(id);
  if (!record) throw notFound('No such webhook');
  return record;
};

/** Every webhook, newest first (the byList index; no Scan). */
export const listWebhooks = async (): Promise<WebhookView[]> => {
  const items = await queryAll<WebhookRecord>({
    TableName: tableName('webhooks'),
    IndexName: 'byList',
    KeyConditionExpression: '#list = :list',
    ExpressionAttributeNames: { '#list': 'list' },
    ExpressionAttributeValues: { ':list': LIST_KEY },
    ScanIndexForward: false,
  });
  return items.map(toView);
};

const isConditionFailure = (error: unknown) =>
  error instanceof TransactionCanceledException &&
  (error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed');

/** Transaction items removing a webhook's entries from the filter index, so the matcher no longer finds it. */
const filterDeletes = (record: WebhookRecord) =>
  record.event_filters.map((filter) => ({
    Delete: { TableName: tableName('webhookFilters'), Key: filterItem(filter, record.id) },
  }));

export const deleteWebhook = async (id: string): Promise<void> => {
  const record = await requireWebhook(id);
  try {
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Delete: {
              TableName: tableName('webhooks'),
              Key: { id },
              ConditionExpression: 'attribute_exists(id)',
            },
          },
          ...filterDeletes(record),
        ],
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw notFound('No such webhook');
    throw error;
  }
};

/**
 * Disables a webhook (410 Gone, or failing for too long): it stays listed with the reason, and its filter
 * entries go, so the matcher stops creating deliveries for it. Disabling twice is harmless.
 */
export const disableWebhook = async (
  record: WebhookRecord,
  reason: string,
  now = new Date(),
): Promise<void> => {
  try {
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName('webhooks'),
              Key: { id: record.id },
              UpdateExpression: 'SET enabled = :false, disabled_reason = :reason, disabled_at = :now',
              ConditionExpression: 'enabled = :true',
              ExpressionAttributeValues: {
                ':false': false,
                ':true': true,
                ':reason': reason,
                ':now': now.toISOString(),
              },
            },
          },
          ...filterDeletes(record),
        ],
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

/** Notes a failure: the first one since the last success starts the failing period. Returns its start. */
export const noteFailure = async (record: WebhookRecord, now: Date): Promise<string> => {
  if (record.failing_since) return record.failing_since;
  const since = now.toISOString();
  await documentClient()
    .send(
      new UpdateCommand({
        TableName: tableName('webhooks'),
        Key: { id: record.id },
        UpdateExpression: 'SET failing_since = :since',
        ConditionExpression: 'attribute_exists(id) AND attribute_not_exists(failing_since)',
        ExpressionAttributeValues: { ':since': since },
      }),
    )
    .catch((error: unknown) => {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    });
  return since;
};

/** A success ends the failing period (one write, only when one was running). */
export const noteSuccess = async (record: WebhookRecord): Promise<void> => {
  if (!record.failing_since) return;
  await documentClient()
    .send(
      new UpdateCommand({
        TableName: tableName('webhooks'),
        Key: { id: record.id },
        UpdateExpression: 'REMOVE failing_since',
        ConditionExpression: 'attribute_exists(id)',
      }),
    )
    .catch((error: unknown) => {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    });
};
