/**
 * Which receive of which queue message a worker is handling, and until when its invocation can run at most
 * (past that Lambda has stopped it): what a hold on work (a webhook claim, a lease on frames) records, so that
 * another receive of the same message can tell a live holder — a copy SQS handed out at the same time — from a
 * dead one.
 */
export interface Receipt {
  /** The same across redeliveries of one message. */
  readonly messageId: string;
  /** SQS's ApproximateReceiveCount of this receive. */
  readonly receiveCount: number;
  /** The invocation's deadline: past it the invocation has been stopped, whatever state it was in. */
  readonly deadline: Date;
}

/** Slack on a hold's expiry for clock differences between invocations. */
const CLOCK_SLACK_MS = 5_000;

/** Until when a hold taken by this receive stands: the holder's deadline, with slack for clocks. */
export const holdExpiry = (receipt: Receipt): Date => new Date(receipt.deadline.getTime() + CLOCK_SLACK_MS);
