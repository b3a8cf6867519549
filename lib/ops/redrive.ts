import { InvokeCommand, type LambdaClient, LambdaServiceException } from '@aws-sdk/client-lambda';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * The redrive of a bus function's dead-letter queue (`busFunctions-dlq`; docs/operations.md,
 * "Dead letters of the bus functions"). There is no source queue to move messages back to, and the bus is not
 * one: each event is handed again to the function that failed it, as EventBridge hands it (Lambda `Invoke`,
 * `InvocationType: Event`, so Lambda's retries and on-failure destination apply again), with the event's own
 * bytes — its id, time and `replay-name` — and its message is deleted once Lambda accepted it (202). No rule
 * sees the event again and nothing is archived again.
 */

/** A dead letter's event and the function it goes back to. */
export interface DeadLetter {
  /** The event, byte for byte as the function got it: the raw text of the record's `requestPayload`, or the body. */
  readonly payload: string;
  /** The function that failed it (name or ARN); undefined when the message names none. */
  readonly functionName: string | undefined;
  /** The failed invocation's request id (Lambda's record), to tell a record of this redrive's own invocations. */
  readonly requestId?: string;
}

/** EventBridge's dead letter (the rule target's DLQ) names the target in this message attribute. */
export const TARGET_ARN_ATTRIBUTE = 'TARGET_ARN';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The exact text of the value of a top-level member of a JSON object text (already checked by JSON.parse), so an
 * event is passed on with its own bytes rather than re-serialized. The last of duplicate keys wins, as in JSON.parse.
 */
export const rawJsonMember = (text: string, key: string): string | undefined => {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i += 1;
  };
  const skipString = () => {
    i += 1;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i += 1;
  };
  /** Up to the `,` or `}` after a value. */
  const skipValue = () => {
    let depth = 0;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        skipString();
        continue;
      }
      if (depth === 0 && (c === ',' || c === '}')) return;
      if (c === '{' || c === '[') depth += 1;
      else if (c === '}' || c === ']') depth -= 1;
      i += 1;
    }
  };
  skipSpace();
  if (text[i] !== '{') return undefined;
  i += 1;
  let found: string | undefined;
  for (;;) {
    skipSpace();
    if (text[i] !== '"') return found;
    const keyStart = i;
    skipString();
    const name = JSON.parse(text.slice(keyStart, i)) as string;
    skipSpace();
    i += 1; // the colon
    skipSpace();
    const valueStart = i;
    skipValue();
    if (name === key) found = text.slice(valueStart, i).trimEnd();
    if (text[i] !== ',') return found;
    i += 1;
  }
};

/** `…:function:name:$LATEST` → `…:function:name`: the same version, invoked with the permission on the function's ARN. */
const unqualifiedLatest = (functionArn: string): string => functionArn.replace(/:\$LATEST$/, '');

/**
 * The event a dead-letter message carries and the function it names, or why it cannot be redriven (left in the
 * queue for a person to look at). Lambda's on-failure record names the function in `requestContext.functionArn`;
 * EventBridge's dead letter is the event itself, its target in the `TARGET_ARN` attribute.
 */
export const deadLetterOf = (
  body: string,
  attributes: Readonly<Record<string, MessageAttributeValue>> = {},
): DeadLetter | { readonly unreadable: string } => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { unreadable: 'not JSON' };
  }
  if (!isObject(parsed)) return { unreadable: 'not a JSON object' };
  if (parsed.requestContext !== undefined) {
    // Lambda's on-failure record: {version, timestamp, requestContext, requestPayload, responseContext, …}.
    const payload = rawJsonMember(body, 'requestPayload');
    if (payload === undefined || !isObject(parsed.requestPayload)) {
      return { unreadable: 'an invocation record without an event (requestPayload)' };
    }
    const context = isObject(parsed.requestContext) ? parsed.requestContext : {};
    return {
      payload,
      functionName:
        typeof context.functionArn === 'string' ? unqualifiedLatest(context.functionArn) : undefined,
      ...(typeof context.requestId === 'string' ? { requestId: context.requestId } : {}),
    };
  }
  if (
    typeof parsed.source !== 'string' ||
    typeof parsed['detail-type'] !== 'string' ||
    !isObject(parsed.detail)
  ) {
    return {
      unreadable: 'neither an invocation record nor an EventBridge event (source, detail-type, detail)',
    };
  }
  return { payload: body, functionName: attributes[TARGET_ARN_ATTRIBUTE]?.StringValue };
};

export interface RedriveSummary {
  /** Handed to their function again (Lambda answered 202) and deleted from the queue. */
  readonly reinvoked: number;
  /**
   * Left in the queue: unreadable, naming no function, refused by Lambda, or dead-lettered after the redrive began
   * (with the reason).
   */
  readonly left: readonly { readonly messageId: string; readonly reason: string }[];
}

/** Lambda's answers that say the caller's credentials are wrong: no message will do better, so the redrive stops. */
const CREDENTIAL_ERRORS = new Set([
  'ExpiredTokenException',
  'UnrecognizedClientException',
  'InvalidSignatureException',
]);

/** How long a message left in the queue stays hidden while the redrive goes on (it is shown again at the end). */
const LEFT_HIDDEN_SECS = 900;

/**
 * Invokes the function of every message of the queue again, ten messages at a time, until a receive finds none.
 * Each message is tried once per run — a copy of one already invoked again (SQS may hand out a deleted message
 * once more) is deleted, not invoked twice; one that is left is hidden for the rest of the run (and again if it comes
 * back, however long the run takes), then shown again at the end for a person to read. A record of an event that
 * failed again under this run's own invocation (its request id) is left, not taken again: that would loop while
 * the cause lasts.
 */
export const redriveDeadLetters = async (options: {
  readonly sqs: SQSClient;
  readonly lambda: LambdaClient;
  readonly queueUrl: string;
  /** The function for messages that name none (`--function`); without it they are left. */
  readonly functionName?: string;
  /** How long a received message stays hidden while it is redriven (default 60 s). */
  readonly visibilityTimeoutSecs?: number;
}): Promise<RedriveSummary> => {
  const { sqs, lambda, queueUrl } = options;
  const invokedRequestIds = new Set<string>();
  /** Messages invoked again in this run: a copy SQS hands out after the delete is deleted, not invoked twice. */
  const reinvokedIds = new Set<string>();
  /** Left messages by id: the reason, and the receipt handle that shows the message again at the end. */
  const left = new Map<string, { reason: string; receiptHandle: string | undefined }>();
  const setVisibility = (receiptHandle: string | undefined, seconds: number) =>
    sqs
      .send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: seconds,
        }),
      )
      // Best effort: a message whose hold ran out meanwhile is visible anyway.
      .catch(() => undefined);
  /** The last batch received, and how much of it is handled: the rest is shown again at once if the run stops. */
  let batch: Message[] = [];
  let handled = 0;
  const leave = async (message: Message, reason: string) => {
    left.set(message.MessageId ?? '', { reason, receiptHandle: message.ReceiptHandle });
    await setVisibility(message.ReceiptHandle, LEFT_HIDDEN_SECS);
  };
  try {
    for (;;) {
      const received = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: [TARGET_ARN_ATTRIBUTE],
          VisibilityTimeout: options.visibilityTimeoutSecs ?? 60,
          // A long poll (any wait): a short poll samples only some SQS servers and may answer empty while
          // messages remain, which would end the redrive early.
          WaitTimeSeconds: 1,
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      batch = messages;
      for (handled = 0; handled < batch.length; handled += 1) {
        const message = batch[handled] as Message;
        const messageId = message.MessageId ?? '';
        const deleteIt = () =>
          sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
        if (reinvokedIds.has(messageId)) {
          await deleteIt();
          continue;
        }
        const before = left.get(messageId);
        if (before) {
          // Left earlier in this run and back after its hold: hidden again under its new receipt handle.
          await leave(message, before.reason);
          continue;
        }
        const outcome = await redriveOne(message);
        if (outcome === 'reinvoked') {
          reinvokedIds.add(messageId);
          await deleteIt();
        } else {
          await leave(message, outcome.left);
        }
      }
    }
  } finally {
    const handles = [
      ...[...left.values()].map(({ receiptHandle }) => receiptHandle),
      ...batch.slice(handled).map(({ ReceiptHandle }) => ReceiptHandle),
    ];
    await Promise.all(handles.map((receiptHandle) => setVisibility(receiptHandle, 0)));
  }
  return {
    reinvoked: reinvokedIds.size,
    left: [...left].map(([messageId, { reason }]) => ({ messageId, reason })),
  };

  /** One message: invoked again (Lambda answered 202), or why it is left. */
  async function redriveOne(message: Message): Promise<'reinvoked' | { left: string }> {
    const deadLetter = deadLetterOf(message.Body ?? '', message.MessageAttributes);
    if ('unreadable' in deadLetter) return { left: deadLetter.unreadable };
    if (deadLetter.requestId && invokedRequestIds.has(deadLetter.requestId)) {
      return { left: 'dead-lettered again after this redrive invoked it (the function still fails)' };
    }
    const functionName = deadLetter.functionName ?? options.functionName;
    if (!functionName) return { left: 'names no function (pass --function NAME|ARN for such messages)' };
    let invoked: { StatusCode?: number; $metadata: { requestId?: string } };
    try {
      invoked = await lambda.send(
        new InvokeCommand({
          FunctionName: functionName,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(deadLetter.payload),
        }),
      );
    } catch (error) {
      // Lambda's answer about this function (not found, not allowed, throttled past the SDK's retries): the
      // message stays. Wrong credentials, or no answer at all (no network), end the redrive.
      if (!(error instanceof LambdaServiceException) || CREDENTIAL_ERRORS.has(error.name)) throw error;
      return { left: `Lambda refused it (${functionName}): ${error.name}: ${error.message}` };
    }
    if (invoked.StatusCode !== 202) {
      return { left: `Lambda answered ${invoked.StatusCode ?? 'nothing'} instead of 202 (${functionName})` };
    }
    if (invoked.$metadata.requestId) invokedRequestIds.add(invoked.$metadata.requestId);
    return 'reinvoked';
  }
};
