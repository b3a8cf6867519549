import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { queueUrl } from '../../core/clients';
import { sqs } from '../../core/clients-sqs';
import { logger } from '../../core/logger';
import { withMetrics } from '../../core/metrics';
import { type BroadcastChunk, runChunk } from '../../domain/realtime/broadcast';

/** One broadcast chunk per message: deliver a page, then enqueue the rest of the audience as the next chunk. */
export const handler = withMetrics(async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const batchItemFailures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    try {
      const next = await runChunk(JSON.parse(record.body) as BroadcastChunk);
      if (next) {
        await sqs().send(
          new SendMessageCommand({ QueueUrl: queueUrl('broadcast'), MessageBody: JSON.stringify(next) }),
        );
      }
    } catch (error) {
      logger.error('broadcast chunk failed', { error: error as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
});
