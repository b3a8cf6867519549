import type { SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { DEFAULT_FUNCTION, type Worker } from '../../lib/wiring';
import type { LocalQueue, StoredMessage } from '../sqs/queue';
import { HOLDS_PAST_DEADLINE_MS, InFlightInvocations } from './in-flight';
import { LambdaTimeoutError } from './runner';
import type { InvokeFunction } from './types';

/**
 * The Lambda event source mapping of one worker, as AWS runs it for an SQS queue with
 * ReportBatchItemFailures: poll, gather up to batchSize messages for at most the batching window,
 * invoke, delete what succeeded, leave the rest to come back after the visibility timeout (and to reach
 * the DLQ through the queue's redrive policy). At most maxConcurrency batches run at once.
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 */

/** Lambda's synchronous invocation payload limit; a batch never outgrows it. */
const MAX_BATCH_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** AWS starts SQS pollers at five concurrent batches; without a declared cap we stay there. */
export const DEFAULT_MAX_CONCURRENCY = 5;

export interface EventSourceMappingOptions {
  readonly worker: Worker;
  readonly queue: LocalQueue;
  readonly invoke: InvokeFunction;
  readonly region: string;
  readonly timeScale: number;
  /** Resolves once every change of the queues so far (these receives) is on disk. */
  readonly durable: () => Promise<void>;
  readonly log: (line: string) => void;
}

const toMessageAttributes = (message: StoredMessage): SQSMessageAttributes => {
  const attributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.attributes)) {
    attributes[name] = {
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: value.BinaryValue } : {}),
      stringListValues: [],
      binaryListValues: [],
      dataType: value.DataType,
    };
  }
  return attributes;
};

export const toSqsRecord = (message: StoredMessage, queue: LocalQueue, region: string): SQSRecord => ({
  messageId: message.id,
  receiptHandle: message.receiptHandle ?? '',
  body: message.body,
  attributes: {
    ApproximateReceiveCount: String(message.receiveCount),
    SentTimestamp: String(message.sentAt),
    SenderId: message.senderId,
    ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
  },
  messageAttributes: toMessageAttributes(message),
  ...(message.md5OfMessageAttributes ? { md5OfMessageAttributes: message.md5OfMessageAttributes } : {}),
  md5OfBody: message.md5OfBody,
  eventSource: 'aws:sqs',
  eventSourceARN: queue.arn,
  awsRegion: region,
});

/**
 * Which messages of a batch failed, per Lambda's rules for partial batch responses: no response, a null or
 * empty `batchItemFailures` → all succeeded; a malformed entry or an id not in the batch → all failed.
 */
export const failedMessageIds = (
  result: unknown,
  batchIds: ReadonlySet<string>,
): { readonly failed: ReadonlySet<string> } | { readonly wholeBatchFailed: string } => {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return { failed: new Set() };
  const failures = (result as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return { failed: new Set() };
  if (!Array.isArray(failures)) return { wholeBatchFailed: 'batchItemFailures is not a list' };
  const failed = new Set<string>();
  for (const failure of failures) {
    const identifier = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof identifier !== 'string' || identifier === '') {
      return { wholeBatchFailed: `invalid batchItemFailures entry ${JSON.stringify(failure)}` };
    }
    if (!batchIds.has(identifier)) {
      return { wholeBatchFailed: `itemIdentifier ${identifier} is not a message of this batch` };
    }
    failed.add(identifier);
  }
  return { failed };
};

export class EventSourceMapping {
  private readonly abort = new AbortController();
  private readonly inFlight: InFlightInvocations;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: EventSourceMappingOptions) {
    this.inFlight = new InFlightInvocations(options.worker.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY);
  }

  start(): void {
    this.loop ??= this.poll().catch((error: unknown) => {
      this.options.log(`event source mapping ${this.options.worker.id} stopped: ${String(error)}`);
    });
  }

  /** Stops polling; waits up to `graceMs` for running batches to finish and be settled. */
  async stop(graceMs: number): Promise<void> {
    this.abort.abort();
    this.inFlight.wake();
    await this.loop;
    await this.inFlight.settle(graceMs);
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async poll(): Promise<void> {
    const { worker, queue } = this.options;
    const batchSize = worker.batchSize;
    const windowMs = Math.round(worker.maxBatchingWindowSecs * 1000 * this.options.timeScale);
    const signal = this.abort.signal;
    while (!this.stopped) {
      await this.inFlight.waitForSlot(this.abort.signal);
      if (this.stopped) break;
      await queue.waitForMessages(Number.POSITIVE_INFINITY, signal);
      if (this.stopped) break;
      // On AWS the visibility timeout outlasts the batching window and the function timeout (the stack checks
      // it): a message never comes back while its invocation runs, nor, once that invocation died, before what
      // it holds (a claim, a lease) has expired. A time scale shortens the visibility timeout, not the function
      // timeout, so a batch is hidden for its invocation instead (the window, then the timeout and the slack of
      // its holds from the invocation's start), and once the invocation has ended the visibility timeout counts
      // from the receive. A batch cut off by a crash of the runtime comes back when that hold ends: no sooner is
      // safe, and waiting out a whole unscaled visibility timeout would only slow a restart down.
      const visibilityMs = queue.scaledMs(queue.visibilityTimeoutSecs);
      const holdMs = windowMs + this.holdMs;
      const receivedAt = Date.now();
      const batch = this.receive(batchSize, holdMs, MAX_BATCH_PAYLOAD_BYTES);
      if (batch.length === 0) continue;
      // The batching window opens with the first message and closes early once the batch is full.
      const deadline = Date.now() + windowMs;
      let bytes = batch.reduce((sum, message) => sum + message.sizeBytes, 0);
      while (batch.length < batchSize && Date.now() < deadline && !this.stopped) {
        await queue.waitForMessages(deadline, signal);
        const more = this.receive(batchSize - batch.length, holdMs, MAX_BATCH_PAYLOAD_BYTES - bytes);
        // Nothing taken although a message is visible: the payload budget is spent.
        if (more.length === 0 && queue.hasVisibleMessage()) break;
        batch.push(...more);
        bytes += more.reduce((sum, message) => sum + message.sizeBytes, 0);
      }
      this.dispatch(batch, receivedAt + visibilityMs);
    }
  }

  /** How long an invocation may run and what it holds may last: its timeout and the slack of its holds. */
  private get holdMs(): number {
    return (this.options.worker.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs) * 1000 + HOLDS_PAST_DEADLINE_MS;
  }

  private receive(max: number, visibilityMs: number, byteBudget: number): StoredMessage[] {
    const { queue } = this.options;
    const messages = queue.receive(max, visibilityMs, byteBudget);
    if (messages.length > 0) {
      // The poller's ReceiveMessage calls are billed SQS requests (up to 10 messages each).
      for (let index = 0; index < messages.length; index += 10) {
        const chunk = messages.slice(index, index + 10);
        queue.countRequest(chunk.reduce((sum, message) => sum + message.sizeBytes, 0));
      }
    }
    return messages;
  }

  /**
   * Invokes the worker with `batch`, hidden until the invocation's hold ends (counted from now); what the
   * invocation does not settle becomes visible again at `visibleAt`. The batch of an invocation that timed out
   * stays hidden until its hold ends at least: its handler may still run (nothing in one process stops it), and
   * what it holds lasts past its deadline.
   */
  private dispatch(batch: StoredMessage[], visibleAt: number): void {
    const { worker, queue, invoke, durable, region, log } = this.options;
    // Receipt handles as of this receive: a later receive of the same message must not be deleted by us.
    const handles = batch.map((message) => ({ message, receiptHandle: message.receiptHandle }));
    const event: SQSEvent = { Records: batch.map((message) => toSqsRecord(message, queue, region)) };
    const hideUntil = (until: number) => {
      for (const { receiptHandle } of handles) queue.hideUntil(receiptHandle, until);
    };
    const heldUntil = Date.now() + this.holdMs;
    hideUntil(heldUntil);
    const run = (async () => {
      let result: unknown;
      try {
        // The hold on disk first: were the runtime to die during the invocation, the batch stays hidden after the
        // restart until the hold ends.
        await durable();
        result = await invoke(worker, event);
      } catch (error) {
        const timedOut = error instanceof LambdaTimeoutError;
        log(
          `worker ${worker.id}: invocation failed, ${batch.length} message(s) return after ${
            timedOut ? "the invocation's deadline and its holds" : 'the visibility timeout'
          }: ${error instanceof Error ? error.message : String(error)}`,
        );
        hideUntil(timedOut ? Math.max(visibleAt, heldUntil) : visibleAt);
        return;
      }
      const outcome = failedMessageIds(result, new Set(batch.map((message) => message.id)));
      if ('wholeBatchFailed' in outcome) {
        log(`worker ${worker.id}: ${outcome.wholeBatchFailed}; the whole batch is treated as failed`);
        hideUntil(visibleAt);
        return;
      }
      const succeeded = handles.filter(({ message }) => !outcome.failed.has(message.id));
      for (const { receiptHandle } of succeeded) queue.deleteByReceiptHandle(receiptHandle);
      hideUntil(visibleAt);
      // The poller deletes with DeleteMessageBatch, ten handles per request.
      for (let index = 0; index < succeeded.length; index += 10) queue.countRequest(0);
    })();
    this.inFlight.track(run);
  }
}
