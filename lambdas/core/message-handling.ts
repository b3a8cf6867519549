/**
 * Which handling of which piece of work a worker is doing, and until when its invocation can run at most (past
 * that Lambda has stopped it): what a hold on work (a webhook claim, a lease on frames) records, so that another
 * handling of the same work can tell a live holder — a copy handed out at the same time — from a dead one.
 * The work is a queue message (SQS) or an event a bus function was invoked with (Lambda asynchronous invocation).
 */
export interface MessageHandling {
  /**
   * The same across redeliveries of one message: the SQS message id, or the asynchronous invocation's request
   * id, which Lambda keeps across its retries of one event (and its duplicate invocations of it).
   */
  readonly messageId: string;
  /** This one handling of it: SQS's ApproximateReceiveCount; for an asynchronous invocation, an id of its own. */
  readonly receive: string;
  /** The invocation's deadline: past it the invocation has been stopped, whatever state it was in. */
  readonly deadline: Date;
  /**
   * What brings the work back if this handling fails or dies: the queue (the message reappears after its
   * visibility timeout, under the same message id), or Lambda's retries of an asynchronous invocation (`lambda`:
   * a bus function's event, or a message handed to a worker by `Invoke`), which do not say which attempt this is.
   */
  readonly redeliveredBy: 'queue' | 'lambda';
}

/** Slack on a hold's expiry for clock differences between invocations. */
const CLOCK_SLACK_MS = 5_000;

/** Until when a hold taken by this receive stands: the holder's deadline, with slack for clocks. */
export const holdExpiry = (handling: MessageHandling): Date =>
  new Date(handling.deadline.getTime() + CLOCK_SLACK_MS);

/**
 * The work is held by another handling of it (SQS or Lambda handed out a copy at the same time): this handling
 * fails so that the work comes back later, by design. The workers log it as a warning with its reason, not as an
 * error with a stack: it is no fault, and formatting a stack reads the bundle's source map.
 */
export class HeldByOtherReceive extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HeldByOtherReceive';
  }
}
