import { randomUUID } from 'node:crypto';
import { type AsyncInvocation, DEFAULT_FUNCTION } from '../../lib/wiring';
import { validateMessage } from '../sqs/message';
import type { LocalQueue, StoredMessage } from '../sqs/queue';
import { HOLDS_PAST_DEADLINE_MS, InFlightInvocations } from './in-flight';
import { LambdaInvocationError, localFunctionName } from './runner';
import type { FunctionRef, InvokeFunction } from './types';

/** A function Lambda invokes asynchronously: a bus function, or a worker declaring `invokedAsync`. */
export type AsyncInvokedFunction = FunctionRef & AsyncInvocation;

/**
 * Lambda's asynchronous invocation, as EventBridge uses it for a bus function and `Invoke` with
 * `InvocationType: Event` for any function: the event waits in the function's
 * own queue (here a journaled local SQS queue, so it survives a restart of the runtime), each event is one
 * invocation under one request id, a failed or crashed invocation is retried `retryAttempts` times (one and two
 * minutes later), and then — or once the event is older than `maxEventAgeSecs` — an invocation record goes to
 * the on-failure destination, an SQS queue.
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
 */

/** Lambda's waits before the first and the second retry. */
export const ASYNC_RETRY_DELAYS_SECS = [60, 120] as const;
/** How many events of one function run at once locally (on AWS: up to the account's or reserved concurrency). */
export const ASYNC_CONCURRENCY = 20;

/** One event in a function's asynchronous queue (the local queue message's body). */
interface QueuedEvent {
  readonly requestId: string;
  /** The invocation this message is for: 1 for the first, 2 and 3 for the retries. */
  readonly attempt: number;
  /** Epoch ms when Lambda accepted the event (the age MaximumEventAgeInSeconds limits). */
  readonly queuedAt: number;
  readonly payload: unknown;
}

/** Lambda's on-failure invocation record, as it sends it to an SQS destination (the message body). */
export interface InvocationRecord {
  readonly version: '1.0';
  readonly timestamp: string;
  readonly requestContext: {
    readonly requestId: string;
    readonly functionArn: string;
    readonly condition: 'RetriesExhausted' | 'EventAgeExceeded';
    readonly approximateInvokeCount: number;
  };
  readonly requestPayload: unknown;
  readonly responseContext?: {
    readonly statusCode: 200;
    readonly executedVersion: '$LATEST';
    readonly functionError: 'Unhandled';
  };
  readonly responsePayload?: { readonly errorType: string; readonly errorMessage: string };
}

export interface AsyncInvocationOptions {
  readonly fn: AsyncInvokedFunction;
  /** The function's own asynchronous queue (not billed, not addressable). */
  readonly queue: LocalQueue;
  /** The on-failure destination. */
  readonly onFailure: LocalQueue;
  readonly invoke: InvokeFunction;
  /** Resolves once every accepted change is on disk (the SQS journal). */
  readonly durable: () => Promise<void>;
  readonly region: string;
  readonly accountId: string;
  readonly log: (line: string) => void;
  /**
   * A retry (and an event whose invocation died with the runtime) comes no earlier than the function's timeout
   * plus this after its invocation began (default HOLDS_PAST_DEADLINE_MS): on AWS a retry comes a minute or more
   * after the failure, past the failed invocation's holds; a time scale shortens that wait, not the deadline.
   */
  readonly retryAfterDeadlineMs?: number;
}

const errorPayload = (error: unknown) => ({
  errorType: error instanceof LambdaInvocationError ? error.errorType : ((error as Error)?.name ?? 'Error'),
  errorMessage: error instanceof Error ? error.message : String(error),
});

export class AsyncInvocationQueue {
  private readonly abort = new AbortController();
  private readonly inFlight = new InFlightInvocations(ASYNC_CONCURRENCY);
  private loop: Promise<void> | undefined;
  /** Queued events this process has handed to an invocation (a second receive here is a duplicate copy). */
  private readonly dispatched = new Set<string>();

  constructor(private readonly options: AsyncInvocationOptions) {}

  get functionArn(): string {
    const { region, accountId, fn } = this.options;
    return `arn:aws:lambda:${region}:${accountId}:function:${localFunctionName(fn)}:$LATEST`;
  }

  /** Lambda's `Invoke` with `InvocationType: Event`: resolves with the request id once the event is durable. */
  async enqueue(payload: unknown, delayMs = 0): Promise<string> {
    const requestId = randomUUID();
    await this.put({ requestId, attempt: 1, queuedAt: Date.now(), payload }, delayMs);
    return requestId;
  }

  /** Events waiting or running in this function's queue. */
  backlog(): number {
    const stats = this.options.queue.stats();
    return (
      stats.ApproximateNumberOfMessages +
      stats.ApproximateNumberOfMessagesDelayed +
      stats.ApproximateNumberOfMessagesNotVisible
    );
  }

  start(): void {
    this.loop ??= this.poll().catch((error: unknown) => {
      this.options.log(`asynchronous queue of ${this.options.fn.id} stopped: ${String(error)}`);
    });
  }

  async stop(graceMs: number): Promise<void> {
    this.abort.abort();
    this.inFlight.wake();
    await this.loop;
    await this.inFlight.settle(graceMs);
  }

  private get timeoutMs(): number {
    return (this.options.fn.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs) * 1000;
  }

  /** The earliest an invocation's event may be invoked again: its timeout plus the slack of its holds. */
  private get pastDeadlineMs(): number {
    return this.timeoutMs + (this.options.retryAfterDeadlineMs ?? HOLDS_PAST_DEADLINE_MS);
  }

  private async put(event: QueuedEvent, delayMs: number): Promise<void> {
    const message = validateMessage({ MessageBody: JSON.stringify(event) });
    this.options.queue.send(message, 'lambda.amazonaws.com', delayMs);
    await this.options.durable();
  }

  private async poll(): Promise<void> {
    const { queue } = this.options;
    const signal = this.abort.signal;
    while (!signal.aborted) {
      await this.inFlight.waitForSlot(signal);
      if (signal.aborted) break;
      await queue.waitForMessages(Number.POSITIVE_INFINITY, signal);
      if (signal.aborted) break;
      // Hidden while its invocation may run and its holds last: seen again, that invocation died (a restart).
      const [message] = queue.receive(1, this.pastDeadlineMs);
      if (message) this.dispatch(message);
    }
  }

  private dispatch(message: StoredMessage): void {
    const receiptHandle = message.receiptHandle;
    // Received before, but not by this process: the invocation that took it died with the runtime, and counts as
    // an attempt (Lambda counts an invocation its environment did not survive). A second receive within this
    // process is a duplicate copy (AWS-like delivery), which Lambda's queue may hand out without counting it.
    const cutOff = message.receiveCount > 1 && !this.dispatched.has(message.id) ? 1 : 0;
    this.dispatched.add(message.id);
    // The receive on disk first: were the runtime to die during the invocation, the event stays hidden after
    // the restart until the invocation's holds have expired.
    const run = this.options
      .durable()
      .then(() => this.handle(message.body, cutOff))
      .then(
        () => {
          this.options.queue.deleteByReceiptHandle(receiptHandle);
        },
        (error: unknown) => {
          // Not settled (e.g. the disk write failed): the message comes back after its hold, as after a crash.
          this.options.log(`asynchronous queue of ${this.options.fn.id}: ${String(error)}`);
        },
      );
    this.inFlight.track(run);
  }

  /** One invocation of a queued event, then what follows it; resolves once that is durable. */
  private async handle(body: string, cutOffInvocations: number): Promise<void> {
    const { fn, invoke } = this.options;
    const queued = JSON.parse(body) as QueuedEvent;
    const event = { ...queued, attempt: queued.attempt + cutOffInvocations };
    if (event.attempt > fn.retryAttempts + 1) {
      await this.giveUp(event, 'RetriesExhausted', event.attempt - 1, undefined);
      return;
    }
    if (Date.now() - event.queuedAt > this.options.queue.scaledMs(fn.maxEventAgeSecs)) {
      await this.giveUp(event, 'EventAgeExceeded', event.attempt - 1, undefined);
      return;
    }
    try {
      await invoke(fn, event.payload, { requestId: event.requestId });
      return;
    } catch (error) {
      if (event.attempt > fn.retryAttempts) {
        await this.giveUp(event, 'RetriesExhausted', event.attempt, error);
        return;
      }
      const waitSecs = ASYNC_RETRY_DELAYS_SECS[event.attempt - 1] ?? ASYNC_RETRY_DELAYS_SECS[1];
      const delayMs = Math.max(this.options.queue.scaledMs(waitSecs), this.pastDeadlineMs);
      this.options.log(
        `${fn.id}: invocation ${event.attempt} of request ${event.requestId} failed, retried in ${delayMs} ms: ${
          errorPayload(error).errorMessage
        }`,
      );
      await this.put({ ...event, attempt: event.attempt + 1 }, delayMs);
    }
  }

  private async giveUp(
    event: QueuedEvent,
    condition: InvocationRecord['requestContext']['condition'],
    invokeCount: number,
    error: unknown,
  ): Promise<void> {
    const record: InvocationRecord = {
      version: '1.0',
      timestamp: new Date().toISOString(),
      requestContext: {
        requestId: event.requestId,
        functionArn: this.functionArn,
        condition,
        approximateInvokeCount: invokeCount,
      },
      requestPayload: event.payload,
      ...(error === undefined
        ? {}
        : {
            responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
            responsePayload: errorPayload(error),
          }),
    };
    const message = validateMessage({ MessageBody: JSON.stringify(record) });
    const { onFailure } = this.options;
    // Lambda's SendMessage to the destination is a billed SQS request.
    onFailure.countRequest(message.sizeBytes);
    onFailure.send(message, 'lambda.amazonaws.com');
    await this.options.durable();
    this.options.log(
      `${this.options.fn.id}: request ${event.requestId} given up (${condition}), its record is in ${onFailure.name}`,
    );
  }
}
