import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from './logger';
import { withMetrics } from './metrics';
import type { Receipt } from './receipt';

/** This receive of `record` in this invocation (core/receipt.ts). */
export const messageReceipt = (record: SQSRecord, context: Context): Receipt => ({
  messageId: record.messageId,
  receiveCount: Number(record.attributes.ApproximateReceiveCount),
  deadline: new Date(Date.now() + context.getRemainingTimeInMillis()),
});

/**
 * A queue-fed worker: each record is processed on its own and a failure is reported per message
 * (`batchItemFailures`), so one poison message neither blocks nor repeats its batch-mates. Failures are
 * logged with the message id and receive count; after maxReceiveCount SQS moves the message to the DLQ.
 */
export const sqsWorker =
  (
    workerId: string,
    processRecord: (body: string, record: SQSRecord, context: Context) => Promise<unknown>,
  ) =>
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    logger.resetKeys();
    logger.appendKeys({ worker: workerId, aws_request_id: context.awsRequestId });
    // The records side by side, as Powertools' BatchProcessor did (written here: ≈ 6 KiB less in each worker);
    // the counters of the whole batch go out as one EMF line when it is done.
    return withMetrics(async () => {
      const outcomes = await Promise.allSettled(
        event.Records.map(async (record) => {
          try {
            return await processRecord(record.body, record, context);
          } catch (error) {
            logger.error('message failed', {
              message_id: record.messageId,
              receive_count: record.attributes.ApproximateReceiveCount,
              error: error as Error,
            });
            throw error;
          }
        }),
      );
      return {
        batchItemFailures: event.Records.filter((_, index) => outcomes[index]?.status === 'rejected').map(
          (record) => ({ itemIdentifier: record.messageId }),
        ),
      };
    })();
  };
