import type * as z from './zod';

/** One kind of message on a queue of several: an object told from the others by its literal `kind`. */
type MessageKind = z.ZodMiniObject<{ kind: z.ZodMiniLiteral<string> }, z.core.$strip>;

/**
 * A queue of the wiring (lib/wiring `queues`) with the one declaration of its messages: `enqueue` (sqs-send.ts)
 * checks and serializes with it, and the queue's `sqsWorker` (workers.ts) parses each message with it before the
 * handler sees the message. Each area declares its queues beside the domain code that sends to them.
 */
export interface MessageQueue<T> {
  /** The queue's id in the wiring declaration. */
  readonly id: string;
  /**
   * The schema of its messages, or one per kind (`messageQueue`), told apart by the `kind` a message names
   * (`checkMessage`). No union of them is made: zod's discriminated union would put ≈ 3 KiB in every function
   * that sends or reads such messages.
   */
  readonly kinds: readonly z.ZodMiniType<T>[];
}

/** A queue whose messages are of one schema, or of several kinds (each an object with a literal `kind`). */
export function messageQueue<T>(id: string, schema: z.ZodMiniType<T>): MessageQueue<T>;
export function messageQueue<const K extends readonly [MessageKind, ...MessageKind[]]>(
  id: string,
  kinds: K,
): MessageQueue<z.output<K[number]>>;
export function messageQueue(id: string, schemas: z.ZodMiniType | readonly z.ZodMiniType[]) {
  return { id, kinds: Array.isArray(schemas) ? schemas : [schemas] };
}

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

export type MessageRead<T> =
  | { readonly ok: true; readonly message: T }
  | { readonly ok: false; readonly reason: string };

/**
 * `value` checked as a message of `queue` (a body already parsed, or the event of an asynchronous invocation): by the kind whose literal `kind` it names (the kinds' literals differ,
 * so at most one accepts it), whose reasons are told when it refuses; a `kind` that none has is told as such.
 */
export const checkMessage = <T>(queue: MessageQueue<T>, value: unknown): MessageRead<T> => {
  const kindsNamed: unknown[] = [];
  let refusal: z.core.$ZodError | undefined;
  for (const kind of queue.kinds) {
    const checked = kind.safeParse(value);
    if (checked.success) return { ok: true, message: checked.data };
    const otherKind = checked.error.issues.find(
      (issue) => issue.code === 'invalid_value' && issue.path.length === 1 && issue.path[0] === 'kind',
    );
    if (otherKind?.code === 'invalid_value') kindsNamed.push(...otherKind.values);
    else refusal ??= checked.error;
  }
  return {
    ok: false,
    reason: refusal
      ? reasonOf(refusal)
      : `kind: must be one of ${kindsNamed.map((kind) => JSON.stringify(kind)).join(', ')}`,
  };
};

/** The body of a message for `queue` (also what a schedule sends to it): checked against its kind, as JSON. */
export const messageBody = <T>(queue: MessageQueue<T>, message: T): string => {
  const checked = checkMessage(queue, message);
  if (!checked.ok) throw new MalformedMessage(queue.id, checked.reason);
  return JSON.stringify(checked.message);
};

/** A received body read as a message of `queue`, or why it is none. */
export const readMessage = <T>(queue: MessageQueue<T>, body: string): MessageRead<T> => {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  return checkMessage(queue, value);
};

/**
 * The body of a queue message, or, for Lambda's on-failure record of an asynchronous invocation (an invoked
 * message that failed for good, moved back from the queue's DLQ by an SQS redrive), the message it was invoked
 * with (its `requestPayload`), so that both kinds of dead letter redrive the same way. Anything else as it is.
 */
export const invokedMessageBody = (body: string): string => {
  if (!body.includes('"requestPayload"')) return body;
  try {
    const parsed = JSON.parse(body) as { requestContext?: unknown; requestPayload?: unknown };
    if (typeof parsed.requestContext !== 'object' || parsed.requestPayload === undefined) return body;
    return JSON.stringify(parsed.requestPayload);
  } catch {
    return body; // not JSON: read (and refused) as the queue's message
  }
};
