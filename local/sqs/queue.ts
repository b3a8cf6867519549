import { randomBytes, randomUUID } from 'node:crypto';
import { AwsServiceError } from '../aws-http';
import { AWS_LIKE_ODDS, type Chooser } from '../delivery';
import { billedRequests, type MessageAttributes, type ValidatedMessage } from './message';

/**
 * One standard SQS queue held in memory: delays, visibility timeouts, receive counts, redrive to a DLQ
 * once a message has been received maxReceiveCount times, and waiters for long polling.
 * Standard-queue semantics: at-least-once, no ordering promise. With AWS-like delivery (local/delivery.ts) it
 * uses that freedom as SQS does: duplicates, shuffled order, partial receives.
 */

export interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly attributes: MessageAttributes;
  readonly md5OfMessageAttributes: string | undefined;
  readonly sizeBytes: number;
  readonly sentAt: number;
  readonly senderId: string;
  /** Epoch ms from which the message can be received (delay or visibility timeout). */
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  /** The handle of the latest receive; only it deletes the message (as on SQS). */
  receiptHandle: string | undefined;
  /** Its next receive is a duplicate copy (AWS-like delivery): it does not count toward the redrive. */
  duplicate?: boolean;
  /** Receives of duplicate copies so far: counted in `receiveCount` (as SQS reports them), not toward the redrive. */
  copiesReceived?: number;
}

export interface QueueCounters {
  /** Messages accepted (SendMessage, SendMessageBatch entries, in-process sends, redrives into a DLQ). */
  sent: number;
  /** Message receives (a redelivered message counts again). */
  received: number;
  deleted: number;
  movedToDlq: number;
  /** Billed SQS requests: every API call and every poller receive/delete, one per started 64 KiB. */
  requests: number;
}

export interface QueueStats {
  readonly ApproximateNumberOfMessages: number;
  readonly ApproximateNumberOfMessagesDelayed: number;
  readonly ApproximateNumberOfMessagesNotVisible: number;
}

/**
 * One change of a queue's durable state, as the journal records it: a receive's count and until when it hides
 * the message, and each later change of that (ChangeMessageVisibility, a poller's hold and hand-back), so that a
 * message in flight at a crash stays hidden after the restart as long as it would have (`restore`).
 */
export type QueueChange =
  | { readonly put: StoredMessage }
  | {
      readonly received: string;
      readonly receiveCount: number;
      /** Of those, receives of duplicate copies (absent: none). */
      readonly copiesReceived?: number;
      readonly firstReceivedAt: number;
      /** Absent in journals written before receives recorded it: visible at once after a restart. */
      readonly visibleAt?: number;
    }
  | { readonly hidden: string; readonly visibleAt: number }
  | { readonly deleted: string }
  | { readonly purged: true };

export interface QueueOptions {
  readonly name: string;
  readonly arn: string;
  /** Declared visibility timeout (what GetQueueAttributes reports). */
  readonly visibilityTimeoutSecs: number;
  /** Multiplies every duration (visibility timeout, delays) so tests need not wait for real minutes. */
  readonly timeScale: number;
  readonly redrive?: { readonly maxReceiveCount: number; readonly deadLetterQueue: LocalQueue };
  readonly onChange: (change: QueueChange) => void;
  /** AWS-like delivery's choices for this queue (local/delivery.ts); none: each message once, in order. */
  readonly chooser?: Chooser;
}

const encodeReceiptHandle = (queueName: string, messageId: string): string =>
  Buffer.from(`${queueName}\n${messageId}\n${randomBytes(12).toString('hex')}`, 'utf8').toString('base64');

const decodeReceiptHandle = (handle: string): { queueName: string; messageId: string } | undefined => {
  const parts = Buffer.from(handle, 'base64').toString('utf8').split('\n');
  if (parts.length !== 3 || !parts[0] || !parts[1]) return undefined;
  return { queueName: parts[0], messageId: parts[1] };
};

export class LocalQueue {
  readonly name: string;
  readonly arn: string;
  readonly visibilityTimeoutSecs: number;
  readonly createdAt = Date.now();
  readonly counters: QueueCounters = { sent: 0, received: 0, deleted: 0, movedToDlq: 0, requests: 0 };
  private readonly messages = new Map<string, StoredMessage>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly options: QueueOptions) {
    this.name = options.name;
    this.arn = options.arn;
    this.visibilityTimeoutSecs = options.visibilityTimeoutSecs;
  }

  get redrive(): QueueOptions['redrive'] {
    return this.options.redrive;
  }

  /** Seconds → milliseconds of this runtime's clock (scaled by timeScale). */
  scaledMs(seconds: number): number {
    return Math.round(seconds * 1000 * this.options.timeScale);
  }

  countRequest(payloadBytes: number): void {
    this.counters.requests += billedRequests(payloadBytes);
  }

  /** `extraDelayMs`: real milliseconds on top of the message's (scaled) DelaySeconds. */
  send(message: ValidatedMessage, senderId: string, extraDelayMs = 0): StoredMessage {
    const now = Date.now();
    const stored: StoredMessage = {
      id: randomUUID(),
      body: message.body,
      md5OfBody: message.md5OfBody,
      attributes: message.attributes,
      md5OfMessageAttributes: message.md5OfMessageAttributes,
      sizeBytes: message.sizeBytes,
      sentAt: now,
      senderId,
      visibleAt: now + this.scaledMs(message.delaySeconds) + extraDelayMs,
      receiveCount: 0,
      firstReceivedAt: undefined,
      receiptHandle: undefined,
    };
    this.insert(stored);
    return stored;
  }

  /** Adds a message as it is (restored from disk, or moved here by redrive). */
  insert(message: StoredMessage): void {
    this.messages.set(message.id, message);
    this.counters.sent += 1;
    this.changed({ put: message });
  }

  /**
   * Receives up to `max` visible messages, hiding each for `visibilityMs`. A message already received
   * maxReceiveCount times moves to the DLQ instead of being delivered again (SQS redrive).
   * `byteBudget` stops before the received bytes would outgrow it (a Lambda payload for the poller).
   */
  receive(max: number, visibilityMs: number, byteBudget = Number.POSITIVE_INFINITY): StoredMessage[] {
    const now = Date.now();
    const chooser = this.options.chooser;
    const received: StoredMessage[] = [];
    let bytes = 0;
    // SQS samples some of its servers: a receive may return fewer messages than are available.
    const wanted = max > 1 && chooser?.chance(AWS_LIKE_ODDS.partialBatch) ? chooser.between(1, max - 1) : max;
    let candidates: Iterable<StoredMessage> = this.messages.values();
    if (chooser?.chance(AWS_LIKE_ODDS.reorder)) {
      candidates = chooser.shuffled(
        [...this.messages.values()].filter((message) => message.visibleAt <= now),
      );
    }
    for (const message of candidates) {
      if (received.length >= wanted) break;
      if (message.visibleAt > now) continue;
      const redrive = this.options.redrive;
      // A copy's receive is no failed attempt: only the others count toward the redrive.
      const counted = message.receiveCount - (message.copiesReceived ?? 0);
      if (redrive && counted >= redrive.maxReceiveCount && !message.duplicate) {
        this.moveToDeadLetterQueue(message, redrive.deadLetterQueue);
        continue;
      }
      if (bytes + message.sizeBytes > byteBudget) break;
      bytes += message.sizeBytes;
      message.receiveCount += 1;
      message.firstReceivedAt ??= now;
      message.visibleAt = now + visibilityMs;
      message.receiptHandle = encodeReceiptHandle(this.name, message.id);
      if (message.duplicate) message.copiesReceived = (message.copiesReceived ?? 0) + 1;
      message.duplicate = undefined;
      if (chooser?.chance(AWS_LIKE_ODDS.duplicateWhileHeld)) {
        // A copy another consumer receives while this one holds the message: only the later handle deletes it.
        message.visibleAt = now + chooser.between(1, AWS_LIKE_ODDS.maxDelayMs);
        message.duplicate = true;
      }
      received.push(message);
      this.changed({
        received: message.id,
        receiveCount: message.receiveCount,
        ...(message.copiesReceived ? { copiesReceived: message.copiesReceived } : {}),
        firstReceivedAt: now,
        visibleAt: message.visibleAt,
      });
    }
    this.counters.received += received.length;
    return received;
  }

  /**
   * Makes the messages still held back by their DelaySeconds visible now; returns how many. For the bench,
   * which waits out a delay in real time that its time scale stretched (not journaled: a restart restores the
   * original delay).
   */
  releaseDelayed(): number {
    const now = Date.now();
    let released = 0;
    for (const message of this.messages.values()) {
      if (message.receiveCount === 0 && message.visibleAt > now) {
        message.visibleAt = now;
        released += 1;
      }
    }
    if (released > 0) this.notify();
    return released;
  }

  private moveToDeadLetterQueue(message: StoredMessage, deadLetterQueue: LocalQueue): void {
    // SQS keeps the message id, body, attributes and sent timestamp; the receive count carries over.
    // Into the DLQ first: a crash between the two journal lines leaves a copy, never no message.
    deadLetterQueue.insert({ ...message, visibleAt: Date.now(), receiptHandle: undefined });
    this.messages.delete(message.id);
    this.counters.movedToDlq += 1;
    this.changed({ deleted: message.id });
  }

  private resolveHandle(receiptHandle: unknown): { message: StoredMessage | undefined; current: boolean } {
    const decoded = typeof receiptHandle === 'string' ? decodeReceiptHandle(receiptHandle) : undefined;
    if (!decoded || decoded.queueName !== this.name) {
      throw new AwsServiceError(
        'ReceiptHandleIsInvalid',
        `The input receipt handle "${String(receiptHandle)}" is not a valid receipt handle.`,
        404,
      );
    }
    const message = this.messages.get(decoded.messageId);
    return { message, current: message?.receiptHandle === receiptHandle };
  }

  /**
   * Deletes by receipt handle. As on SQS, a handle from an earlier receive of a message that was received
   * again since succeeds without deleting it, and a handle of an already deleted message succeeds too.
   */
  deleteByReceiptHandle(receiptHandle: unknown): boolean {
    const { message, current } = this.resolveHandle(receiptHandle);
    if (!message || !current) return false;
    const chooser = this.options.chooser;
    if (chooser?.chance(AWS_LIKE_ODDS.duplicateAfterDelete)) {
      // A copy on a server that missed the delete: the delete succeeds, and the message comes back once more.
      message.visibleAt = Date.now() + chooser.between(1, AWS_LIKE_ODDS.maxDelayMs);
      message.receiptHandle = undefined;
      message.duplicate = true;
      this.notify();
      return true;
    }
    this.messages.delete(message.id);
    this.counters.deleted += 1;
    this.changed({ deleted: message.id });
    return true;
  }

  changeVisibility(receiptHandle: unknown, visibilityMs: number): void {
    const { message, current } = this.resolveHandle(receiptHandle);
    const now = Date.now();
    if (!message || !current || message.visibleAt <= now) {
      throw new AwsServiceError(
        'MessageNotInflight',
        `Value ${String(receiptHandle)} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`,
      );
    }
    message.visibleAt = now + visibilityMs;
    this.changed({ hidden: message.id, visibleAt: message.visibleAt });
  }

  /**
   * Hides an in-flight message until `visibleAt` (a poller holding what its invocation works on, then handing
   * back what it did not settle). A handle that is no longer the latest, or of a deleted message, does nothing;
   * a copy due to another consumer (AWS-like delivery) still comes when it is due.
   */
  hideUntil(receiptHandle: string | undefined, visibleAt: number): void {
    if (receiptHandle === undefined) return;
    const { message, current } = this.resolveHandle(receiptHandle);
    if (!message || !current) return;
    const until = message.duplicate ? Math.min(message.visibleAt, visibleAt) : visibleAt;
    if (until === message.visibleAt) return;
    message.visibleAt = until;
    this.changed({ hidden: message.id, visibleAt: until });
  }

  purge(): void {
    this.messages.clear();
    this.changed({ purged: true });
  }

  hasVisibleMessage(): boolean {
    const now = Date.now();
    for (const message of this.messages.values()) if (message.visibleAt <= now) return true;
    return false;
  }

  stats(): QueueStats {
    const now = Date.now();
    let visible = 0;
    let delayed = 0;
    let inFlight = 0;
    for (const message of this.messages.values()) {
      if (message.visibleAt <= now) visible += 1;
      else if (message.receiveCount === 0) delayed += 1;
      else inFlight += 1;
    }
    return {
      ApproximateNumberOfMessages: visible,
      ApproximateNumberOfMessagesDelayed: delayed,
      ApproximateNumberOfMessagesNotVisible: inFlight,
    };
  }

  snapshot(): StoredMessage[] {
    return [...this.messages.values()].map((message) => ({ ...message }));
  }

  /**
   * Restores persisted messages as they were, but for their receipt handles (they died with the process). A
   * message in flight stays hidden as long as its receive (or a later visibility change) said, as on SQS, which
   * does not know that its consumer died: handed out at once, it would find what the dead receive holds (a claim,
   * a lease: until that invocation's deadline and some slack) still held, and fail, each receive counting toward
   * the DLQ.
   */
  restore(messages: readonly StoredMessage[]): void {
    for (const message of messages) this.messages.set(message.id, { ...message, receiptHandle: undefined });
    this.notify();
  }

  /**
   * Resolves when a message may have become receivable, at `deadline` (epoch ms), or on abort,
   * whichever is first. Callers re-check with receive().
   */
  waitForMessages(deadline: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    const now = Date.now();
    let nextVisibleAt = Number.POSITIVE_INFINITY;
    for (const message of this.messages.values()) {
      if (message.visibleAt <= now) return Promise.resolve();
      nextVisibleAt = Math.min(nextVisibleAt, message.visibleAt);
    }
    const wakeAt = Math.min(deadline, nextVisibleAt);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = Number.isFinite(wakeAt) ? setTimeout(done, Math.max(0, wakeAt - now)) : undefined;
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private notify(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private changed(change: QueueChange): void {
    this.notify();
    this.options.onChange(change);
  }
}
