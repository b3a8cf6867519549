import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { envNames } from '../../lib/wiring';

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
