import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * The redrive of a bus function's dead-letter queue (`eventFrames-dlq`, `webhookEvents-dlq`; docs/operations.md,
 * "Dead letters of the bus functions"). There is no source queue to move messages back to: each event is put on
 * the bus again, where every rule sees it (a repeated `event` frame keeps its `id`; a webhook delivery is keyed by
 * the event's `detail.id`, so one already made is not made again), and its message is deleted once the bus took it.
 */

/** The EventBridge event in a DLQ message: Lambda's invocation record holds it, EventBridge's own DLQ is it. */
export interface DeadEvent {
  readonly source: string;
  readonly 'detail-type': string;
  readonly detail: unknown;
  readonly resources?: readonly string[];
}

/** The event a dead-letter message carries, or why there is none (left in the queue for a person to look at). */
export const deadEventOf = (body: string): DeadEvent | { readonly unreadable: string } => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { unreadable: 'not JSON' };
  }
  const record = parsed as { requestContext?: unknown; requestPayload?: unknown };
  // Lambda's on-failure record: {version, timestamp, requestContext, requestPayload, responseContext, …}.
  const event = (record?.requestContext !== undefined ? record.requestPayload : parsed) as Partial<DeadEvent>;
  if (
    typeof event?.source !== 'string' ||
    typeof event['detail-type'] !== 'string' ||
    typeof event.detail !== 'object' ||
    event.detail === null
  ) {
    return { unreadable: 'no EventBridge event (source, detail-type, detail) in it' };
  }
  return event as DeadEvent;
};

export interface RedriveSummary {
  /** Put on the bus again and deleted from the queue. */
  readonly republished: number;
  /** Left in the queue: unreadable, or refused by the bus (with the reason). */
  readonly left: readonly { readonly messageId: string; readonly reason: string }[];
}

/** Re-publishes every event of the queue onto `busName`, ten messages at a time, until a receive finds none. */
export const redriveDeadLetters = async (options: {
  readonly sqs: SQSClient;
  readonly eventBridge: EventBridgeClient;
  readonly queueUrl: string;
  readonly busName: string;
  /** How long a received message stays hidden while it is re-published (default 60 s). */
  readonly visibilityTimeoutSecs?: number;
}): Promise<RedriveSummary> => {
  const { sqs, eventBridge, queueUrl, busName } = options;
  let republished = 0;
  const left: { messageId: string; reason: string }[] = [];
  for (;;) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: options.visibilityTimeoutSecs ?? 60,
        // A long poll (any wait): a short poll samples only some SQS servers and may answer empty while
        // messages remain, which would end the redrive early.
        WaitTimeSeconds: 1,
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) break;
    for (const message of messages) {
      const messageId = message.MessageId ?? '';
      const event = deadEventOf(message.Body ?? '');
      if ('unreadable' in event) {
        left.push({ messageId, reason: event.unreadable });
        continue;
      }
      const put = await eventBridge.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: busName,
              Source: event.source,
              DetailType: event['detail-type'],
              Detail: JSON.stringify(event.detail),
              Resources: [...(event.resources ?? [])],
            },
          ],
        }),
      );
      const entry = put.Entries?.[0];
      if (!entry?.EventId) {
        left.push({ messageId, reason: `the bus refused it: ${entry?.ErrorCode ?? 'no answer'}` });
        continue;
      }
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
      republished += 1;
    }
    // What was left stays hidden for the visibility timeout: the next receive sees only messages not yet tried.
  }
  return { republished, left };
};
