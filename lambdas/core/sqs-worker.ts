import { randomUUID } from 'node:crypto';
import type { Context, EventBridgeEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { beginInvocationLog, logger } from './logger';
import { withMetrics } from './metrics';
import { HeldByOtherReceive, type Receipt } from './receipt';

/** This receive of `record` in this invocation (core/receipt.ts). */
export const messageReceipt = (record: SQSRecord, context: Context): Receipt => ({
  messageId: record.messageId,
  receive: record.attributes.ApproximateReceiveCount,
  deadline: new Date(Date.now() + context.getRemainingTimeInMillis()),
  redeliveredBy: 'queue',
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
    beginInvocationLog(context, { worker: workerId });
    // The records side by side, as Powertools' BatchProcessor did (written here: ≈ 6 KiB less in each worker);
    // the counters of the whole batch go out as one EMF line when it is done.
    return withMetrics(async () => {
      const outcomes = await Promise.allSettled(
        event.Records.map(async (record) => {
          try {
            return await processRecord(record.body, record, context);
          } catch (error) {
            const message = {
              message_id: record.messageId,
              receive_count: record.attributes.ApproximateReceiveCount,
            };
            if (error instanceof HeldByOtherReceive) {
              logger.warn('message held by another receive; retried later', {
                ...message,
                reason: error.message,
              });
            } else logger.error('message failed', { ...message, error: error as Error });
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

/**
 * This invocation of a bus function with an event: held under the request id, which Lambda keeps across its
 * retries of the event (a retry comes a minute or two after the failure, past the holder's deadline); Lambda does
 * not say which attempt this is, so each invocation names its own handling.
 */
export const invocationReceipt = (context: Context): Receipt => ({
  messageId: context.awsRequestId,
  receive: randomUUID(),
  deadline: new Date(Date.now() + context.getRemainingTimeInMillis()),
  redeliveredBy: 'bus',
});

/**
 * A function the bus invokes directly (EventBridge → Lambda, asynchronous): one event per invocation. A failure is
 * logged with the event id and rethrown, so Lambda retries the event (as configured: lib/wiring BusFunction) and then sends
 * its record to the on-failure destination, the function's DLQ (lib/wiring BusFunction).
 */
export const busWorker =
  (workerId: string, processEvent: (event: unknown, receipt: Receipt) => Promise<unknown>) =>
  async (event: EventBridgeEvent<string, unknown>, context: Context): Promise<void> => {
    beginInvocationLog(context, { worker: workerId });
    await withMetrics(async () => {
      try {
        await processEvent(event, invocationReceipt(context));
      } catch (error) {
        if (error instanceof HeldByOtherReceive) {
          logger.warn('event held by another invocation; retried later', {
            event_id: event?.id,
            reason: error.message,
          });
        } else logger.error('event failed', { event_id: event?.id, error: error as Error });
        throw error;
      }
    })();
  };
