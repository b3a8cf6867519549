import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import type { Receipt } from '../../lambdas/core/receipt';
import { envNames, wiring } from '../../lib/wiring';
import type { InvokeFunction } from '../../local/lambda/types';
import { LocalSqs } from '../../local/sqs/local-sqs';

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

/**
 * The declared queues on the real SQS stand-in, without workers: the test plays the workers itself, and the bus
 * functions (Lambda's asynchronous queues hand their events to `invoke`).
 */
export const startQueuesWithoutWorkers = async (
  invoke: InvokeFunction = () => Promise.reject(new Error('no functions in this test')),
): Promise<LocalSqs> => {
  const sqs = new LocalSqs({
    queues: wiring.queues,
    workers: [],
    busFunctions: wiring.busFunctions ?? [],
    invoke,
  });
  await sqs.start();
  return sqs;
};

/**
 * For one test file: the queues without workers, this process's SDK pointed at them (with the `fanout` queue's
 * URL set, as the stack sets it for functions), and a client to read them.
 */
export const useQueuesWithoutWorkers = (): {
  readonly sqs: () => LocalSqs;
  readonly client: () => SQSClient;
} => {
  let sqs: LocalSqs | undefined;
  let client: SQSClient | undefined;
  beforeAll(async () => {
    sqs = await startQueuesWithoutWorkers();
    process.env[envNames.queueUrl('fanout')] = sqs.queueUrl('fanout');
    process.env.AWS_ENDPOINT_URL_SQS = sqs.endpoint;
    client = new SQSClient({ endpoint: sqs.endpoint });
  });
  afterAll(async () => {
    client?.destroy();
    await sqs?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the queues are not started yet');
    return value;
  };
  return { sqs: () => started(sqs), client: () => started(client) };
};

/** A worker's receipt of queue message `messageId` in an invocation that may run 30 s (the workers' timeout). */
export const receiptOf = (messageId: string): Receipt => ({
  messageId,
  receive: '1',
  deadline: new Date(Date.now() + 30_000),
  redeliveredBy: 'queue',
});
