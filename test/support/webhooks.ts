import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { newId } from '../../lambdas/core/ids';
import { sealSecret } from '../../lambdas/domain/webhooks/secret-box';

/**
 * A webhook written straight into the tables, past the API's checks: one stored before a rule existed (or
 * before a DNS change), which the workers must still treat safely. Its id.
 */
export const storeWebhook = async (webhook: {
  url: string;
  filter: string;
  secret?: string;
  id?: string;
}): Promise<string> => {
  const id = webhook.id ?? newId();
  await documentClient().send(
    new PutCommand({
      TableName: tableName('webhooks'),
      Item: {
        id,
        list: 'all',
        name: 'stored',
        url: webhook.url,
        event_filters: [webhook.filter],
        created_at: new Date().toISOString(),
        enabled: true,
        ...(webhook.secret === undefined ? {} : { secret: await sealSecret(webhook.secret, id) }),
      },
    }),
  );
  await documentClient().send(
    new PutCommand({
      TableName: tableName('webhookFilters'),
      Item: { filter: webhook.filter, webhook_id: id },
    }),
  );
  return id;
};
