import * as z from './zod';

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
   * The schema of its messages, or one per kind (`messageQueue`). A sender checks a message against these
   * alone: the union that tells the kinds apart is made only where messages are read (`readMessage`), so a
   * function that only sends carries none of it (≈ 3 KiB of zod).
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

/** The body of a message for `queue` (also what a schedule sends to it): checked against its kind, as JSON. */
export const messageBody = <T>(queue: MessageQueue<T>, message: T): string => {
  let refusal: z.core.$ZodError | undefined;
  for (const kind of queue.kinds) {
    const checked = kind.safeParse(message);
    if (checked.success) return JSON.stringify(checked.data);
    // The reasons told are those of the message's own kind: the schema whose `kind` it matched.
    if (!refusal || !checked.error.issues.some((issue) => issue.path[0] === 'kind')) refusal = checked.error;
  }
  throw new MalformedMessage(queue.id, refusal ? reasonOf(refusal) : 'the queue declares no message');
};

export type MessageRead<T> =
  | { readonly ok: true; readonly message: T }
  | { readonly ok: false; readonly reason: string };

const readers = new WeakMap<MessageQueue<unknown>, z.ZodMiniType<unknown>>();

/** What reads a queue's messages: its schema, or the union of its kinds by `kind`. */
const readerOf = <T>(queue: MessageQueue<T>): z.ZodMiniType<T> => {
  const [only, ...others] = queue.kinds;
  if (only && others.length === 0) return only;
  let reader = readers.get(queue);
  if (!reader) {
    reader = z.discriminatedUnion('kind', queue.kinds as unknown as [MessageKind, ...MessageKind[]]);
    readers.set(queue, reader);
  }
  return reader as z.ZodMiniType<T>;
};

/** A received body read as a message of `queue`, or why it is none. */
export const readMessage = <T>(queue: MessageQueue<T>, body: string): MessageRead<T> => {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  const parsed = readerOf(queue).safeParse(value);
  return parsed.success ? { ok: true, message: parsed.data } : { ok: false, reason: reasonOf(parsed.error) };
};
