import type * as z from './zod';

/**
 * A queue of the wiring (lib/wiring `queues`) with the one schema of its messages: `enqueue` (sqs-send.ts) checks
 * and serializes with it, and the queue's `sqsWorker` (workers.ts) parses each message with it before the
 * handler sees the message. Each area declares its queues beside the domain code that sends to them.
 */
export interface MessageQueue<T> {
  /** The queue's id in the wiring declaration. */
  readonly id: string;
  readonly schema: z.ZodMiniType<T>;
}

export const messageQueue = <T>(id: string, schema: z.ZodMiniType<T>): MessageQueue<T> => ({ id, schema });

/** A message that is not what its queue carries: refused when sent, logged and left to the DLQ when received. */
export class MalformedMessage extends Error {
  constructor(queueId: string, reason: string) {
    super(`not a ${queueId} message: ${reason}`);
    this.name = 'MalformedMessage';
  }
}

const reasonOf = (error: z.core.$ZodError): string =>
  error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'message'}: ${issue.message}`)
    .join('; ');

/** The body of a message for `queue` (also what a schedule sends to it): checked against its schema, as JSON. */
export const messageBody = <T>(queue: MessageQueue<T>, message: T): string => {
  const checked = queue.schema.safeParse(message);
  if (!checked.success) throw new MalformedMessage(queue.id, reasonOf(checked.error));
  return JSON.stringify(checked.data);
};

export type MessageRead<T> =
  | { readonly ok: true; readonly message: T }
  | { readonly ok: false; readonly reason: string };

/** A received body read as a message of `queue`, or why it is none. */
export const readMessage = <T>(queue: MessageQueue<T>, body: string): MessageRead<T> => {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const parsed = queue.schema.safeParse(value);
  return parsed.success ? { ok: true, message: parsed.data } : { ok: false, reason: reasonOf(parsed.error) };
};
