import { randomUUID } from 'node:crypto';
import type { Context, EventBridgeEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { beginInvocationLog, logger } from './logger';
import { HeldByOtherReceive, type MessageHandling } from './message-handling';
import {
  checkMessage,
  invokedMessageBody,
  MalformedMessage,
  type MessageQueue,
  readMessage,
} from './message-queue';
import { withMetrics } from './metrics';

/** This receive of `record` in this invocation (core/message-handling.ts). */
export const messageHandling = (record: SQSRecord, context: Context): MessageHandling => ({
  messageId: record.messageId,
  receive: record.attributes.ApproximateReceiveCount,
  deadline: new Date(Date.now() + context.getRemainingTimeInMillis()),
  redeliveredBy: 'queue',
});

/**
 * Logs why a piece of work failed and throws the error on, so that it comes back: a hold of another handling as
 * a warning (by design, no fault), anything else as an error with its stack.
 */
const logFailure = (what: 'message' | 'event', about: Record<string, unknown>, error: unknown): never => {
  if (error instanceof HeldByOtherReceive) {
    logger.warn(`${what} held by another ${what === 'message' ? 'receive' : 'invocation'}; retried later`, {
      ...about,
      reason: error.message,
    });
  } else logger.error(`${what} failed`, { ...about, error: error as Error });
  throw error;
};

/**
 * A queue-fed worker: each record is read as a message of `queue` (its schema, message-queue.ts) and processed on
 * its own, and a failure is reported per message (`batchItemFailures`), so one poison message neither blocks nor
 * repeats its batch-mates. A failure is logged with the message id and receive count, a malformed message with
 * the reason it is none (it never reaches `processMessage`); after maxReceiveCount SQS moves the message to the DLQ.
 */
export const sqsWorker =
  <T>(
    workerId: string,
    queue: MessageQueue<T>,
    processMessage: (message: T, record: SQSRecord, context: Context) => Promise<unknown>,
  ) =>
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    beginInvocationLog(context, { worker: workerId });
    // The records side by side, as Powertools' BatchProcessor did (written here: ≈ 6 KiB less in each worker);
    // the counters of the whole batch go out as one EMF line when it is done.
    return withMetrics(async () => {
      const outcomes = await Promise.allSettled(
        event.Records.map(async (record) => {
          const about = {
            message_id: record.messageId,
            receive_count: record.attributes.ApproximateReceiveCount,
          };
          const read = readMessage(queue, record.body);
          if (!read.ok) {
            // Failed like any other message, so it ends in the DLQ for a look; no stack: the reason says it all.
            logger.error('malformed message', { ...about, queue: queue.id, reason: read.reason });
            throw new MalformedMessage(queue.id, read.reason);
          }
          try {
            return await processMessage(read.message, record, context);
          } catch (error) {
            logFailure('message', about, error);
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
export const invocationHandling = (context: Context): MessageHandling => ({
  messageId: context.awsRequestId,
  receive: randomUUID(),
  deadline: new Date(Date.now() + context.getRemainingTimeInMillis()),
  redeliveredBy: 'lambda',
});

/**
 * A function the bus invokes directly (EventBridge → Lambda, asynchronous): one event per invocation. A failure is
 * logged with the event id and rethrown, so Lambda retries the event (as configured: lib/wiring BusFunction) and then sends
 * its record to the on-failure destination, the function's DLQ (lib/wiring BusFunction).
 */
export const busWorker =
  (workerId: string, processEvent: (event: unknown, handling: MessageHandling) => Promise<unknown>) =>
  async (event: EventBridgeEvent<string, unknown>, context: Context): Promise<void> => {
    beginInvocationLog(context, { worker: workerId });
    await withMetrics(async () => {
      try {
        await processEvent(event, invocationHandling(context));
      } catch (error) {
        logFailure('event', { event_id: event?.id }, error);
      }
    })();
  };

const isSqsEvent = (event: unknown): event is SQSEvent =>
  typeof event === 'object' && event !== null && Array.isArray((event as SQSEvent).Records);

/**
 * A queue's worker that Lambda also invokes asynchronously with one message of the queue as the event (lib/wiring
 * `invokedAsync`: a hand-off without an SQS request). Both arrive through here and are read with the queue's one
 * schema: a batch from the queue as `sqsWorker` reads it (a redriven on-failure record as the message it holds), an invoked message as a bus function's event, held
 * under the invocation's request id (Lambda keeps it across its retries). A failed invocation is logged with what
 * `about` says of its message and rethrown, so Lambda retries it and then sends its record to the queue's DLQ; a malformed one
 * is logged with the reason and fails the same way, never reaching `processMessage`.
 */
export const queueAndInvokedWorker = <T>(
  workerId: string,
  queue: MessageQueue<T>,
  processMessage: (message: T, handling: MessageHandling) => Promise<unknown>,
  /** What an invoked message's failure is logged with besides the request id (it has no message id). */
  about: (message: T) => Readonly<Record<string, unknown>>,
) => {
  const fromQueue = sqsWorker(workerId, queue, (message, record, context) =>
    processMessage(message, messageHandling(record, context)),
  );
  return async (event: SQSEvent | unknown, context: Context): Promise<SQSBatchResponse | undefined> => {
    if (isSqsEvent(event)) {
      // A record moved back from the queue's DLQ may be Lambda's on-failure record of an invocation.
      const records = event.Records.map((record) => ({ ...record, body: invokedMessageBody(record.body) }));
      return fromQueue({ Records: records }, context);
    }
    beginInvocationLog(context, { worker: workerId });
    await withMetrics(async () => {
      const read = checkMessage(queue, event);
      if (!read.ok) {
        logger.error('malformed message', { queue: queue.id, reason: read.reason });
        throw new MalformedMessage(queue.id, read.reason);
      }
      try {
        await processMessage(read.message, invocationHandling(context));
      } catch (error) {
        logFailure('message', about(read.message), error);
      }
    })();
    return undefined;
  };
};
