import { InvokeCommand } from '@aws-sdk/client-lambda';
import { LAMBDA_MAX_ASYNC_PAYLOAD_BYTES } from '../../common/limits';
import { functionArn } from './clients';
import { lambda } from './clients-lambda';
import { type MessageQueue, messageBody } from './message-queue';

/** What Lambda answers an asynchronous `Invoke` it accepted: the event is then kept in its queue, durably. */
const ACCEPTED = 202;

/**
 * Hands messages of `queue` to its worker `workerId` by asynchronous invocations (Lambda `Invoke`,
 * `InvocationType: Event`; the worker declares `invokedAsync` and the caller `invokes` it in lib/wiring), one
 * invocation per message, each checked against the queue's schema first (message-queue.ts), as `enqueue` checks
 * what it sends. Resolves once Lambda accepted every one (202): Lambda then keeps, retries and, failing, sends it
 * to the queue's DLQ. Throws otherwise, so the caller's own retry takes over, as after a failed SendMessage.
 */
export const invokeWorker = async <T>(
  workerId: string,
  queue: MessageQueue<T>,
  messages: readonly T[],
): Promise<void> => {
  const payloads = messages.map((message) => messageBody(queue, message));
  await Promise.all(
    payloads.map(async (payload) => {
      const bytes = new TextEncoder().encode(payload);
      if (bytes.byteLength > LAMBDA_MAX_ASYNC_PAYLOAD_BYTES) {
        throw new Error(
          `An asynchronous invocation of ${bytes.byteLength} bytes is over Lambda's ${LAMBDA_MAX_ASYNC_PAYLOAD_BYTES}-byte limit`,
        );
      }
      const answer = await lambda().send(
        new InvokeCommand({ FunctionName: functionArn(workerId), InvocationType: 'Event', Payload: bytes }),
      );
      if (answer.StatusCode !== ACCEPTED) {
        throw new Error(`Lambda answered ${answer.StatusCode} to the asynchronous invocation of ${workerId}`);
      }
    }),
  );
};
