import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { SQS_MAX_DELAY_SECS, SQS_MAX_MESSAGE_BYTES } from '../../common/limits';
import { queueUrl } from './clients';
import { sqs } from './clients-sqs';
import { type MessageQueue, messageBody } from './message-queue';

/** SQS limits per SendMessageBatch request: 10 entries, and the queues' MaximumMessageSize for all bodies. */
const MAX_ENTRIES = 10;
const MAX_BATCH_BYTES = SQS_MAX_MESSAGE_BYTES;

/** Groups bodies into the fewest batches AWS accepts (each body must fit alone). */
export const batchesOf = (bodies: readonly string[]): string[][] => {
  const batches: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const body of bodies) {
    const size = Buffer.byteLength(body);
    if (size > MAX_BATCH_BYTES)
      throw new Error(`An SQS message of ${size} bytes is over the ${MAX_BATCH_BYTES}-byte SQS limit`);
    if (current.length === MAX_ENTRIES || bytes + size > MAX_BATCH_BYTES) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(body);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
};

/**
 * Sends every body to the queue with SendMessageBatch, retrying entries SQS reports as failed once;
 * throws if any still fails, so the caller's own retry (an SQS redelivery or a client retry) takes over.
 */
const sendAll = async (queueUrl: string, bodies: readonly string[], delaySeconds?: number): Promise<void> => {
  await Promise.all(
    batchesOf(bodies).map(async (batch) => {
      let entries = batch.map((body, index) => ({
        Id: String(index),
        MessageBody: body,
        DelaySeconds: delaySeconds,
      }));
      for (let attempt = 0; entries.length > 0; attempt += 1) {
        const result = await sqs().send(
          new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }),
        );
        const failed = new Set((result.Failed ?? []).map((failure) => failure.Id));
        if (failed.size === 0) return;
        if (attempt === 1) {
          const reasons = (result.Failed ?? [])
            .map((failure) => `${failure.Code}: ${failure.Message}`)
            .join('; ');
          throw new Error(`SQS rejected ${failed.size} message(s): ${reasons}`);
        }
        entries = entries.filter((entry) => failed.has(entry.Id));
      }
    }),
  );
};

/**
 * Sends messages to `queue`, each checked against the queue's schema and serialized (message-queue.ts), after
 * `delaySeconds` (SQS DelaySeconds, at most 900) when given. A message its schema refuses throws before any is sent.
 */
export const enqueue = async <T>(
  queue: MessageQueue<T>,
  messages: readonly T[],
  delaySeconds?: number,
): Promise<void> => {
  const bodies = messages.map((message) => messageBody(queue, message));
  await sendAll(queueUrl(queue.id), bodies, delaySeconds);
};

/** SQS DelaySeconds for a wait: whole seconds rounded up (never early), within 0–900. */
export const queueDelaySecs = (delaySecs: number): number =>
  Math.max(0, Math.min(SQS_MAX_DELAY_SECS, Math.ceil(delaySecs)));

/**
 * Sends messages to `queue` after a wait of any length: by SQS DelaySeconds up to `longest` (at most 900 s); a
 * longer wait is queued for that long with the rest in each message (`rest_secs`), which its worker waits out when
 * it arrives (schedule-send.ts, `waitOutRest`). Only that worker schedules: a sender carries no Scheduler client.
 */
export const enqueueAfter = async <T extends { readonly rest_secs?: number | undefined }>(
  queue: MessageQueue<T>,
  messages: readonly T[],
  delaySecs: number,
  longest: number = SQS_MAX_DELAY_SECS,
): Promise<void> => {
  if (messages.length === 0) return;
  if (delaySecs <= longest) return enqueue(queue, messages, queueDelaySecs(delaySecs));
  const queued = Math.floor(longest);
  await enqueue(
    queue,
    messages.map((message) => ({ ...message, rest_secs: delaySecs - queued })),
    queued,
  );
};
