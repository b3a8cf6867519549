import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll } from 'vitest';
import type { MessageHandling } from '../../lambdas/core/message-handling';
import { type MessageQueue, messageBody, readMessage } from '../../lambdas/core/message-queue';
import { envNames, wiring } from '../../lib/wiring';
import { LocalLambda } from '../../local/lambda/local-lambda';
import type { InvokeFunction } from '../../local/lambda/types';
import { LocalSqs } from '../../local/sqs/local-sqs';
import { waitUntil } from './await';

/**
 * Whether a declared queue of the running local runtime holds no message, visible or in flight: the work
 * it feeds is done (poll it with `eventually`).
 */
export const queueIdle = async (queueId: string): Promise<boolean> => {
  const sqs = new SQSClient({});
  try {
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: process.env[envNames.queueUrl(queueId)],
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      attributes.Attributes?.ApproximateNumberOfMessages === '0' &&
      attributes.Attributes?.ApproximateNumberOfMessagesNotVisible === '0'
    );
  } finally {
    sqs.destroy();
  }
};

/** A message handed to a worker by asynchronous invocation (lib/wiring `invokedAsync`), as the worker got it. */
export interface InvokedMessage {
  readonly functionId: string;
  readonly event: unknown;
  readonly requestId: string | undefined;
}

/** The SQS stand-in and Lambda's beside it, with what stops both (Lambda's first, as the runtime does). */
export interface QueuesWithoutWorkers {
  readonly sqs: LocalSqs;
  readonly lambda: LocalLambda;
  /** The messages Lambda invoked the workers with so far (the test plays those workers on them). */
  readonly invoked: InvokedMessage[];
  stop(): Promise<void>;
}

/** The workers that Lambda also invokes asynchronously, as functions with an asynchronous queue only. */
const invokedWorkers = wiring.workers
  .filter((worker) => worker.invokedAsync)
  .map((worker) => ({
    ...worker,
    ...worker.invokedAsync,
    retryAttempts: worker.invokedAsync?.retryAttempts ?? 0,
    maxEventAgeSecs: worker.invokedAsync?.maxEventAgeSecs ?? 60,
    deadLetterQueue: worker.queue,
    purpose: `worker ${worker.id}, invoked`,
  }));

/**
 * The declared queues on the real SQS stand-in, without workers: the test plays the workers itself, and the bus
 * functions (Lambda's asynchronous queues hand their events to `invoke`). A message handed to a worker by
 * asynchronous invocation is recorded in `invoked` (and accepted), for the test to play the worker on.
 */
export const startQueuesWithoutWorkers = async (
  invoke: InvokeFunction = () => Promise.reject(new Error('no functions in this test')),
): Promise<QueuesWithoutWorkers> => {
  const sqs = new LocalSqs({ queues: wiring.queues });
  const invoked: InvokedMessage[] = [];
  const lambda = new LocalLambda({
    sqs,
    workers: [],
    busFunctions: [...(wiring.busFunctions ?? []), ...invokedWorkers],
    invoke: async (fn, event, options) => {
      if (!invokedWorkers.some((worker) => worker.id === fn.id)) return invoke(fn, event, options);
      invoked.push({ functionId: fn.id, event, requestId: options?.requestId });
      return null;
    },
  });
  await sqs.start();
  await lambda.start();
  return {
    sqs,
    lambda,
    invoked,
    stop: async () => {
      await lambda.stop();
      await sqs.stop();
    },
  };
};

/**
 * For one test file: the queues without workers, this process's SDK pointed at them (with the `fanout` and `push`
 * queues' URLs and the invoked workers' ARNs set, as the stack sets them for functions), and a client to read them.
 */
export const useQueuesWithoutWorkers = (): {
  readonly sqs: () => LocalSqs;
  readonly client: () => SQSClient;
  /**
   * The messages handed to workers by asynchronous invocation since the last call, taken once Lambda's
   * asynchronous queues are empty (every event accepted so far has been invoked).
   */
  readonly takeInvoked: () => Promise<InvokedMessage[]>;
  /**
   * Takes every message visible on `queue` now, each received once and deleted, as its worker reads it (a malformed
   * one fails the test); the test plays the worker on them.
   */
  readonly take: <T>(queue: MessageQueue<T>) => Promise<{ message: T; messageId: string }[]>;
} => {
  let queues: QueuesWithoutWorkers | undefined;
  let sqs: LocalSqs | undefined;
  let client: SQSClient | undefined;
  beforeAll(async () => {
    queues = await startQueuesWithoutWorkers();
    sqs = queues.sqs;
    // Delivery sends to `fanout` and, for the `push` channel, invokes `push.deliver` or sends to `push`.
    for (const queueId of ['fanout', 'push']) process.env[envNames.queueUrl(queueId)] = sqs.queueUrl(queueId);
    for (const worker of invokedWorkers) {
      process.env[envNames.functionArn(worker.id)] = queues.lambda.asyncFunctionArn(worker.id);
    }
    process.env.AWS_ENDPOINT_URL_SQS = sqs.endpoint;
    process.env.AWS_ENDPOINT_URL_LAMBDA = queues.lambda.endpoint;
    client = new SQSClient({ endpoint: sqs.endpoint });
  });
  afterAll(async () => {
    client?.destroy();
    await queues?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the queues are not started yet');
    return value;
  };
  return {
    sqs: () => started(sqs),
    client: () => started(client),
    takeInvoked: async () => {
      const { lambda, invoked } = started(queues);
      await waitUntil(() => lambda.asyncBacklog() === 0);
      return invoked.splice(0);
    },
    take: async <T>(queue: MessageQueue<T>) => {
      const queueUrl = started(sqs).queueUrl(queue.id);
      const taken: { message: T; messageId: string }[] = [];
      for (;;) {
        const { Messages = [] } = await started(client).send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }),
        );
        if (Messages.length === 0) return taken;
        for (const received of Messages) {
          taken.push({ message: messageOf(queue, received.Body), messageId: received.MessageId ?? '' });
          await started(client).send(
            new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: received.ReceiptHandle }),
          );
        }
      }
    },
  };
};

/** A worker's handling of queue message `messageId` in an invocation that may run 30 s (the workers' timeout). */
export const handlingOf = (messageId: string): MessageHandling => ({
  messageId,
  receive: '1',
  deadline: new Date(Date.now() + 30_000),
  redeliveredBy: 'queue',
});

/** A body read as a message of `queue`, as its worker reads it; a malformed one fails the test. */
export const messageOf = <T>(queue: MessageQueue<T>, body: string | undefined): T => {
  const read = readMessage(queue, body ?? '');
  if (!read.ok) throw new Error(`not a ${queue.id} message: ${read.reason}`);
  return read.message;
};

/** A message as its worker gets it after `enqueue` sent it: checked, serialized and read back. */
export const throughQueue = <T>(queue: MessageQueue<T>, message: T): T =>
  messageOf(queue, messageBody(queue, message));

/** An SQS record as Lambda's event source mapping hands it to a worker, on its `receiveCount`th receive. */
export const sqsRecord = (messageId: string, body: string, receiveCount = 1): SQSRecord =>
  ({
    messageId,
    receiptHandle: `handle-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: String(receiveCount) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:test',
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;

/** A worker invocation's context: `awsRequestId` and 30 s left (the workers' timeout). */
export const workerContext = {
  awsRequestId: 'request-1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;
