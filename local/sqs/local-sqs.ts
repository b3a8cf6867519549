import type { QueueId, QueueSpec } from '../../lib/wiring';
import type { LocalAccess } from '../access';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../aws-account';
import {
  AwsServiceError,
  accessKeyIdOf,
  type HttpReply,
  type HttpRequest,
  jsonReply,
  jsonTarget,
  type LoopbackServer,
  parseJsonObject,
  startLoopbackServer,
} from '../aws-http';
import type { Delivery } from '../delivery';
import { removeStandInState, writeStandInState } from '../stand-in-state';
import { SqsJournal } from './journal';
import { MAX_BATCH_ENTRIES, MAX_MESSAGE_BYTES, type MessageAttributes, validateMessage } from './message';
import {
  LocalQueue,
  type QueueChange,
  type QueueCounters,
  type QueueOptions,
  type QueueStats,
  type StoredMessage,
} from './queue';
import { resolveTimeScale } from './time-scale';

/**
 * A local, wire-compatible stand-in for Amazon SQS (standard queues). It speaks the AWS JSON 1.0 protocol
 * @aws-sdk/client-sqs uses, enforces SQS's message and batch limits, and answers every operation it does not
 * implement with an error naming it. What reads its queues for functions (Lambda's event source mappings and
 * asynchronous queues) is Lambda's stand-in (local/lambda/local-lambda.ts). See docs/local-standins.md.
 */

const CONTENT_TYPE = 'application/x-amz-json-1.0';
/** DLQs are not declared with a visibility timeout; SQS's default applies. */
const DEFAULT_VISIBILITY_TIMEOUT_SECS = 30;
const MAX_VISIBILITY_TIMEOUT_SECS = 43_200;
const MAX_WAIT_TIME_SECS = 20;
const MESSAGE_RETENTION_SECS = 345_600;

/** Query-protocol error codes the SDK maps to its modeled exceptions (x-amzn-query-error). */
const QUERY_ERROR_CODES: Readonly<Record<string, string>> = {
  QueueDoesNotExist: 'AWS.SimpleQueueService.NonExistentQueue',
  BatchEntryIdsNotDistinct: 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct',
  BatchRequestTooLong: 'AWS.SimpleQueueService.BatchRequestTooLong',
  EmptyBatchRequest: 'AWS.SimpleQueueService.EmptyBatchRequest',
  InvalidBatchEntryId: 'AWS.SimpleQueueService.InvalidBatchEntryId',
  TooManyEntriesInBatchRequest: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
  UnsupportedOperation: 'AWS.SimpleQueueService.UnsupportedOperation',
  MessageNotInflight: 'AWS.SimpleQueueService.MessageNotInflight',
};

export interface LocalSqsOptions {
  readonly queues: readonly QueueSpec[];
  /**
   * When set, queued messages are kept in `<dataDir>/sqs-messages.json` and `sqs-journal.ndjson` across
   * restarts and crashes: a send is answered only once it is on disk (fsync'd).
   */
  readonly dataDir?: string;
  readonly region?: string;
  readonly accountId?: string;
  /**
   * Multiplies every SQS/Lambda duration: visibility timeouts, DelaySeconds, batching windows.
   * 1 (default) is AWS time; tests use e.g. 0.01 so a 60 s visibility timeout lasts 0.6 s.
   * Defaults to NOTIFY_LOCAL_TIME_SCALE when that is set.
   */
  readonly timeScale?: number;
  /** Where the stand-in's warnings go (the journal's); default stderr. */
  readonly log?: (line: string) => void;
  /** Refuses sends a calling function is not granted (local least privilege; local/access.ts). */
  readonly access?: LocalAccess;
  /** AWS-like delivery (duplicates, reordering, partial receives; local/delivery.ts); default exact. */
  readonly delivery?: Delivery;
}

export interface EnqueueOptions {
  readonly delaySeconds?: number;
  readonly messageAttributes?: MessageAttributes;
  /** Reported as the message's SenderId (default: the account id). */
  readonly senderId?: string;
  /** Real milliseconds before the message can be received, on top of DelaySeconds (asynchronous delivery). */
  readonly delayMs?: number;
}

const asInteger = (value: unknown, name: string, min: number, max: number, fallback: number): number => {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new AwsServiceError(
      'InvalidParameterValue',
      `Value ${String(value)} for parameter ${name} is invalid. Reason: Must be between ${min} and ${max}, if provided.`,
    );
  }
  return value;
};

const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** Where a running stand-in with `dataDir` writes its endpoint, so `npm run redrive -- --data DIR` can find it. */
export const SQS_STATE_FILE = 'sqs-endpoint.json';

export interface SqsState {
  readonly endpoint: string;
  readonly accountId: string;
  readonly region: string;
  readonly pid: number;
}

export class LocalSqs {
  readonly region: string;
  readonly accountId: string;
  /** The durations factor (LocalSqsOptions.timeScale), for what reads the queues on Lambda's side. */
  readonly timeScale: number;
  private readonly queues = new Map<string, LocalQueue>();
  /** Queues of Lambda's (asynchronous invocation): journaled here, neither billed nor addressable. */
  private readonly internalQueues = new Set<string>();
  private readonly readers: (() => Promise<void>)[] = [];
  /** Set when start() begins: queues made after it would miss the journal's restore. */
  private starting = false;
  private readonly log: (line: string) => void;
  private server: LoopbackServer | undefined;
  private readonly journal: SqsJournal | undefined;
  private readonly longPolls = new AbortController();

  constructor(private readonly opts: LocalSqsOptions) {
    this.region = opts.region ?? LOCAL_REGION;
    this.accountId = opts.accountId ?? LOCAL_ACCOUNT_ID;
    this.timeScale = resolveTimeScale(opts.timeScale, 'LocalSqs');
    this.log = opts.log ?? ((line) => console.warn(`[sqs] ${line}`));
    this.journal = opts.dataDir ? new SqsJournal(opts.dataDir, () => this.contents(), this.log) : undefined;
    for (const spec of opts.queues) {
      if (this.queues.has(spec.id) || this.queues.has(`${spec.id}-dlq`)) {
        throw new Error(`Queue ${spec.id} is declared twice`);
      }
      const deadLetterQueue = this.newQueue(`${spec.id}-dlq`);
      const queue = this.newQueue(spec.id, {
        visibilityTimeoutSecs: spec.visibilityTimeoutSecs,
        redrive: { maxReceiveCount: spec.maxReceiveCount, deadLetterQueue },
      });
      this.queues.set(queue.name, queue);
      this.queues.set(deadLetterQueue.name, deadLetterQueue);
    }
  }

  /** A queue of this stand-in: journaled, AWS-like when delivery is, visibility timeout as SQS's default. */
  private newQueue(
    name: string,
    options: Partial<Pick<QueueOptions, 'visibilityTimeoutSecs' | 'redrive'>> = {},
  ): LocalQueue {
    return new LocalQueue({
      name,
      arn: this.arnOf(name),
      visibilityTimeoutSecs: DEFAULT_VISIBILITY_TIMEOUT_SECS,
      timeScale: this.timeScale,
      onChange: (change: QueueChange) => this.journal?.record(name, change),
      ...(this.opts.delivery ? { chooser: this.opts.delivery.chooser(`sqs:${name}`) } : {}),
      ...options,
    });
  }

  /**
   * An on-failure destination of Lambda's stand-in: the declared queue (or DLQ) of that name, else an SQS queue
   * of the account made for it (addressable and billed). Made before start, which restores it from the journal.
   */
  destinationQueue(name: string): LocalQueue {
    const declared = this.queues.get(name);
    if (declared && !this.internalQueues.has(name)) return declared;
    return this.madeBeforeStart(name);
  }

  /**
   * Lambda's own asynchronous queue of a function: journaled with the others, neither billed nor addressable.
   * Made before start, which restores it from the journal.
   */
  internalQueue(name: string): LocalQueue {
    const queue = this.madeBeforeStart(name);
    this.internalQueues.add(name);
    return queue;
  }

  private madeBeforeStart(name: string): LocalQueue {
    if (this.starting) throw new Error(`LocalSqs: queue ${name} must be made before start`);
    if (this.queues.has(name)) throw new Error(`LocalSqs: queue ${name} exists already`);
    const queue = this.newQueue(name);
    this.queues.set(name, queue);
    return queue;
  }

  /** A declared queue (or DLQ) itself, for the event source mapping that reads it. */
  declaredQueue(queueId: QueueId): LocalQueue {
    return this.queue(queueId);
  }

  /**
   * Registers what reads the queues on Lambda's side, stopped before this stand-in stops: nothing is then
   * received from or written to a closed journal, whichever stand-in a caller stops first.
   */
  onStop(stopReader: () => Promise<void>): void {
    this.readers.push(stopReader);
  }

  async start(): Promise<void> {
    if (this.server) return;
    if (this.longPolls.signal.aborted) throw new Error('A stopped LocalSqs cannot restart: create a new one');
    this.starting = true;
    await this.restore();
    this.server = await startLoopbackServer('LocalSqs', (request) => this.handle(request), errorReply);
    if (this.opts.dataDir) {
      const state: Omit<SqsState, 'pid'> = {
        endpoint: this.server.endpoint,
        accountId: this.accountId,
        region: this.region,
      };
      writeStandInState(this.opts.dataDir, SQS_STATE_FILE, state);
    }
  }

  get endpoint(): string {
    if (!this.server) throw new Error('LocalSqs is not started');
    return this.server.endpoint;
  }

  queueUrl(queueId: QueueId): string {
    this.queue(queueId);
    return `${this.endpoint}/${this.accountId}/${queueId}`;
  }

  queueArn(queueId: QueueId): string {
    return this.queue(queueId).arn;
  }

  /** The declared queue (or DLQ) id behind an ARN, or undefined. */
  queueIdForArn(arn: string): QueueId | undefined {
    for (const queue of this.queues.values()) if (queue.arn === arn) return queue.name;
    return undefined;
  }

  /**
   * Sends a message without HTTP, for service integrations (EventBridge rule targets, Scheduler targets)
   * that deliver to SQS on AWS. Same validation and limits as SendMessage (a bad message throws at once);
   * resolves with the message id once the message is durable.
   */
  enqueue(queueId: QueueId, body: string, opts: EnqueueOptions = {}): Promise<string> {
    const queue = this.queue(queueId);
    const message = validateMessage({
      MessageBody: body,
      DelaySeconds: opts.delaySeconds,
      MessageAttributes: opts.messageAttributes,
    });
    queue.countRequest(message.sizeBytes);
    const { id } = queue.send(message, opts.senderId ?? this.accountId, opts.delayMs);
    return this.durable().then(() => id);
  }

  /** Resolves once every message accepted so far is on disk (at once without dataDir). */
  durable(): Promise<void> {
    return this.journal?.durable() ?? Promise.resolve();
  }

  /** Approximate message counts, as GetQueueAttributes reports them. */
  stats(queueId: QueueId): QueueStats {
    return this.queue(queueId).stats();
  }

  /** Makes the queue's delayed messages visible now (LocalQueue.releaseDelayed); returns how many. */
  releaseDelayed(queueId: QueueId): number {
    return this.queue(queueId).releaseDelayed();
  }

  /** Per-queue counters (DLQs included) for benchmarks: a copy, safe to keep. */
  counters(): Record<string, QueueCounters> {
    const result: Record<string, QueueCounters> = {};
    for (const queue of this.queues.values()) {
      // Lambda's asynchronous queues are not SQS queues of the account: nothing of theirs is billed.
      if (!this.internalQueues.has(queue.name)) result[queue.name] = { ...queue.counters };
    }
    return result;
  }

  /** Stops what reads the queues (onStop), then answering, then the journal. */
  async stop(): Promise<void> {
    await Promise.all(this.readers.map((stopReader) => stopReader()));
    this.longPolls.abort();
    await this.server?.close();
    this.server = undefined;
    await this.journal?.close();
    if (this.opts.dataDir) removeStandInState(this.opts.dataDir, SQS_STATE_FILE);
  }

  private arnOf(queueName: string): string {
    return `arn:aws:sqs:${this.region}:${this.accountId}:${queueName}`;
  }

  private queue(queueId: QueueId): LocalQueue {
    const queue = this.queues.get(queueId);
    if (!queue) throw new Error(`Queue ${queueId} is not declared`);
    return queue;
  }

  private queueFromUrl(queueUrl: unknown): LocalQueue {
    if (typeof queueUrl !== 'string' || queueUrl === '') {
      throw new AwsServiceError('MissingParameter', 'The request must contain the parameter QueueUrl.');
    }
    let path: string;
    try {
      path = new URL(queueUrl).pathname;
    } catch {
      throw new AwsServiceError(
        'InvalidAddress',
        `The address ${queueUrl} is not valid for this endpoint.`,
        404,
      );
    }
    const [, account, name, ...rest] = path.split('/');
    const queue = name && !this.internalQueues.has(name) ? this.queues.get(name) : undefined;
    if (!queue || account !== this.accountId || rest.length > 0) {
      throw new AwsServiceError('QueueDoesNotExist', 'The specified queue does not exist.');
    }
    return queue;
  }

  private async handle(request: HttpRequest): Promise<HttpReply> {
    if (request.method !== 'POST') {
      throw new AwsServiceError(
        'UnsupportedOperation',
        `LocalSqs does not implement ${request.method} requests`,
      );
    }
    const operation = jsonTarget(request, 'AmazonSQS');
    if (!operation) {
      const action = new URLSearchParams(request.body).get('Action');
      throw new AwsServiceError(
        'UnsupportedOperation',
        action
          ? `LocalSqs does not implement the query protocol (Action=${action}); use the AWS JSON protocol of SDK v3`
          : 'LocalSqs expects an X-Amz-Target: AmazonSQS.<Operation> header',
      );
    }
    const input = parseJsonObject(request.body);
    const respond = (body: unknown) => jsonReply(200, CONTENT_TYPE, body);
    switch (operation) {
      // A send is answered once it is on disk, as SQS answers once the message is stored redundantly.
      case 'SendMessage': {
        const sent = this.sendMessage(input, request);
        await this.durable();
        return respond(sent);
      }
      case 'SendMessageBatch': {
        const sent = this.sendMessageBatch(input, request);
        await this.durable();
        return respond(sent);
      }
      case 'GetQueueUrl':
        return respond(this.getQueueUrl(input));
      case 'GetQueueAttributes':
        return respond(this.getQueueAttributes(input, request.bodyBytes));
      case 'ReceiveMessage':
        return respond(await this.receiveMessage(input));
      case 'DeleteMessage': {
        const queue = this.queueFromUrl(input.QueueUrl);
        queue.countRequest(request.bodyBytes);
        queue.deleteByReceiptHandle(input.ReceiptHandle);
        return respond({});
      }
      case 'DeleteMessageBatch':
        return respond(this.deleteMessageBatch(input, request.bodyBytes));
      case 'ChangeMessageVisibility': {
        const queue = this.queueFromUrl(input.QueueUrl);
        queue.countRequest(request.bodyBytes);
        const seconds = asInteger(
          input.VisibilityTimeout,
          'VisibilityTimeout',
          0,
          MAX_VISIBILITY_TIMEOUT_SECS,
          -1,
        );
        if (seconds < 0) {
          throw new AwsServiceError(
            'MissingParameter',
            'The request must contain the parameter VisibilityTimeout.',
          );
        }
        queue.changeVisibility(input.ReceiptHandle, queue.scaledMs(seconds));
        return respond({});
      }
      case 'PurgeQueue': {
        const queue = this.queueFromUrl(input.QueueUrl);
        queue.countRequest(request.bodyBytes);
        queue.purge();
        return respond({});
      }
      default:
        throw new AwsServiceError('UnsupportedOperation', `LocalSqs does not implement ${operation}`);
    }
  }

  private senderId(request: HttpRequest): string {
    return accessKeyIdOf(request) ?? this.accountId;
  }

  /** A function may send only to the queues its declaration's `sendsTo` lists (sqs:SendMessage covers batches). */
  private checkSend(queue: { readonly name: string; readonly arn: string }, request: HttpRequest): void {
    this.opts.access?.check(request.headers, 'sqs:sendmessage', queue.arn, (grants) =>
      grants.sendsTo.has(queue.name),
    );
  }

  private sendMessage(input: Record<string, unknown>, request: HttpRequest) {
    const queue = this.queueFromUrl(input.QueueUrl);
    this.checkSend(queue, request);
    queue.countRequest(request.bodyBytes);
    const message = validateMessage(input);
    const stored = queue.send(message, this.senderId(request));
    return {
      MessageId: stored.id,
      MD5OfMessageBody: stored.md5OfBody,
      ...(stored.md5OfMessageAttributes ? { MD5OfMessageAttributes: stored.md5OfMessageAttributes } : {}),
    };
  }

  private sendMessageBatch(input: Record<string, unknown>, request: HttpRequest) {
    const queue = this.queueFromUrl(input.QueueUrl);
    this.checkSend(queue, request);
    queue.countRequest(request.bodyBytes);
    const entries = input.Entries;
    if (!Array.isArray(entries) || entries.length === 0) {
      throw new AwsServiceError(
        'EmptyBatchRequest',
        'There should be at least one SendMessageBatchRequestEntry in the request.',
      );
    }
    if (entries.length > MAX_BATCH_ENTRIES) {
      throw new AwsServiceError(
        'TooManyEntriesInBatchRequest',
        `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}. You have sent ${entries.length}.`,
      );
    }
    const seen = new Set<string>();
    for (const entry of entries as Record<string, unknown>[]) {
      const id = entry?.Id;
      if (typeof id !== 'string' || !BATCH_ENTRY_ID.test(id)) {
        throw new AwsServiceError(
          'InvalidBatchEntryId',
          'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
        );
      }
      if (seen.has(id)) throw new AwsServiceError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`);
      seen.add(id);
    }
    // The whole request fails when the sum of all message sizes exceeds the limit.
    const totalBytes = (entries as Record<string, unknown>[]).reduce((sum, entry) => {
      const body = typeof entry.MessageBody === 'string' ? Buffer.byteLength(entry.MessageBody, 'utf8') : 0;
      return sum + body + attributeBytes(entry.MessageAttributes);
    }, 0);
    if (totalBytes > MAX_MESSAGE_BYTES) {
      throw new AwsServiceError(
        'BatchRequestTooLong',
        `Batch requests cannot be longer than ${MAX_MESSAGE_BYTES} bytes. You have sent ${totalBytes} bytes.`,
      );
    }
    const Successful: Record<string, unknown>[] = [];
    const Failed: Record<string, unknown>[] = [];
    for (const entry of entries as Record<string, unknown>[]) {
      try {
        const stored = queue.send(validateMessage(entry), this.senderId(request));
        Successful.push({
          Id: entry.Id,
          MessageId: stored.id,
          MD5OfMessageBody: stored.md5OfBody,
          ...(stored.md5OfMessageAttributes ? { MD5OfMessageAttributes: stored.md5OfMessageAttributes } : {}),
        });
      } catch (error) {
        if (!(error instanceof AwsServiceError)) throw error;
        Failed.push({ Id: entry.Id, SenderFault: true, Code: error.code, Message: error.message });
      }
    }
    return { Successful, Failed };
  }

  private getQueueUrl(input: Record<string, unknown>) {
    const name = input.QueueName;
    if (typeof name !== 'string' || name === '') {
      throw new AwsServiceError('MissingParameter', 'The request must contain the parameter QueueName.');
    }
    const owner = input.QueueOwnerAWSAccountId;
    if (!this.queues.has(name) || (owner !== undefined && owner !== this.accountId)) {
      throw new AwsServiceError('QueueDoesNotExist', 'The specified queue does not exist.');
    }
    this.queues.get(name)?.countRequest(0);
    return { QueueUrl: this.queueUrl(name) };
  }

  private getQueueAttributes(input: Record<string, unknown>, bodyBytes: number) {
    const queue = this.queueFromUrl(input.QueueUrl);
    queue.countRequest(bodyBytes);
    const requested = Array.isArray(input.AttributeNames) ? (input.AttributeNames as unknown[]) : [];
    const stats = queue.stats();
    const all: Record<string, string> = {
      ApproximateNumberOfMessages: String(stats.ApproximateNumberOfMessages),
      ApproximateNumberOfMessagesDelayed: String(stats.ApproximateNumberOfMessagesDelayed),
      ApproximateNumberOfMessagesNotVisible: String(stats.ApproximateNumberOfMessagesNotVisible),
      CreatedTimestamp: String(Math.floor(queue.createdAt / 1000)),
      LastModifiedTimestamp: String(Math.floor(queue.createdAt / 1000)),
      DelaySeconds: '0',
      MaximumMessageSize: String(MAX_MESSAGE_BYTES),
      MessageRetentionPeriod: String(MESSAGE_RETENTION_SECS),
      QueueArn: queue.arn,
      ReceiveMessageWaitTimeSeconds: '0',
      VisibilityTimeout: String(queue.visibilityTimeoutSecs),
      SqsManagedSseEnabled: 'true',
      ...(queue.redrive
        ? {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: queue.redrive.deadLetterQueue.arn,
              maxReceiveCount: queue.redrive.maxReceiveCount,
            }),
          }
        : {}),
    };
    const Attributes: Record<string, string> = {};
    for (const name of requested) {
      if (name === 'All') return { Attributes: all };
      if (typeof name !== 'string' || !(name in all)) {
        throw new AwsServiceError('InvalidAttributeName', `Unknown Attribute ${String(name)}.`);
      }
      Attributes[name] = all[name]!;
    }
    return requested.length === 0 ? {} : { Attributes };
  }

  private async receiveMessage(input: Record<string, unknown>) {
    const queue = this.queueFromUrl(input.QueueUrl);
    const max = asInteger(input.MaxNumberOfMessages, 'MaxNumberOfMessages', 1, 10, 1);
    const visibilitySecs = asInteger(
      input.VisibilityTimeout,
      'VisibilityTimeout',
      0,
      MAX_VISIBILITY_TIMEOUT_SECS,
      queue.visibilityTimeoutSecs,
    );
    const waitSecs = asInteger(input.WaitTimeSeconds, 'WaitTimeSeconds', 0, MAX_WAIT_TIME_SECS, 0);
    // Long polling waits real seconds: it is a client-side wait, not a queue duration.
    const deadline = Date.now() + waitSecs * 1000;
    let messages = queue.receive(max, queue.scaledMs(visibilitySecs));
    while (messages.length === 0 && Date.now() < deadline && !this.longPolls.signal.aborted) {
      await queue.waitForMessages(deadline, this.longPolls.signal);
      messages = queue.receive(max, queue.scaledMs(visibilitySecs));
    }
    queue.countRequest(messages.reduce((sum, message) => sum + message.sizeBytes, 0));
    const systemNames = [
      ...(Array.isArray(input.AttributeNames) ? input.AttributeNames : []),
      ...(Array.isArray(input.MessageSystemAttributeNames) ? input.MessageSystemAttributeNames : []),
    ] as string[];
    const attributeNames = Array.isArray(input.MessageAttributeNames)
      ? (input.MessageAttributeNames as string[])
      : [];
    if (messages.length === 0) return {};
    return {
      Messages: messages.map((message) => {
        const system = systemAttributes(message, systemNames);
        const attributes = pickAttributes(message.attributes, attributeNames);
        return {
          MessageId: message.id,
          ReceiptHandle: message.receiptHandle,
          MD5OfBody: message.md5OfBody,
          Body: message.body,
          ...(Object.keys(system).length > 0 ? { Attributes: system } : {}),
          ...(Object.keys(attributes).length > 0
            ? { MD5OfMessageAttributes: message.md5OfMessageAttributes, MessageAttributes: attributes }
            : {}),
        };
      }),
    };
  }

  private deleteMessageBatch(input: Record<string, unknown>, bodyBytes: number) {
    const queue = this.queueFromUrl(input.QueueUrl);
    queue.countRequest(bodyBytes);
    const entries = input.Entries;
    if (!Array.isArray(entries) || entries.length === 0) {
      throw new AwsServiceError(
        'EmptyBatchRequest',
        'There should be at least one DeleteMessageBatchRequestEntry in the request.',
      );
    }
    if (entries.length > MAX_BATCH_ENTRIES) {
      throw new AwsServiceError(
        'TooManyEntriesInBatchRequest',
        `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}. You have sent ${entries.length}.`,
      );
    }
    const ids = (entries as Record<string, unknown>[]).map((entry) => entry?.Id);
    if (new Set(ids).size !== ids.length) {
      throw new AwsServiceError('BatchEntryIdsNotDistinct', 'Two or more batch entries have the same Id.');
    }
    const Successful: Record<string, unknown>[] = [];
    const Failed: Record<string, unknown>[] = [];
    for (const entry of entries as Record<string, unknown>[]) {
      try {
        queue.deleteByReceiptHandle(entry.ReceiptHandle);
        Successful.push({ Id: entry.Id });
      } catch (error) {
        if (!(error instanceof AwsServiceError)) throw error;
        Failed.push({ Id: entry.Id, SenderFault: true, Code: error.code, Message: error.message });
      }
    }
    return { Successful, Failed };
  }

  private contents(): Record<string, StoredMessage[]> {
    const contents: Record<string, StoredMessage[]> = {};
    for (const queue of this.queues.values()) contents[queue.name] = queue.snapshot();
    return contents;
  }

  private async restore(): Promise<void> {
    if (!this.journal) return;
    for (const [name, messages] of this.journal.load()) {
      const queue = this.queues.get(name);
      if (queue) queue.restore([...messages.values()]);
      else if (messages.size > 0)
        this.log(`dropping ${messages.size} stored message(s) of undeclared queue ${name}`);
    }
    await this.journal.open();
  }
}

const attributeBytes = (raw: unknown): number => {
  if (!raw || typeof raw !== 'object') return 0;
  let bytes = 0;
  for (const [name, value] of Object.entries(raw as Record<string, Record<string, unknown>>)) {
    bytes += Buffer.byteLength(name, 'utf8');
    if (typeof value?.DataType === 'string') bytes += Buffer.byteLength(value.DataType, 'utf8');
    if (typeof value?.StringValue === 'string') bytes += Buffer.byteLength(value.StringValue, 'utf8');
    if (typeof value?.BinaryValue === 'string') bytes += Buffer.from(value.BinaryValue, 'base64').length;
  }
  return bytes;
};

const systemAttributes = (message: StoredMessage, names: readonly string[]): Record<string, string> => {
  const all: Record<string, string> = {
    ApproximateReceiveCount: String(message.receiveCount),
    ApproximateFirstReceiveTimestamp: String(message.firstReceivedAt ?? message.sentAt),
    SentTimestamp: String(message.sentAt),
    SenderId: message.senderId,
  };
  if (names.includes('All')) return all;
  const picked: Record<string, string> = {};
  for (const name of names) if (name in all) picked[name] = all[name]!;
  return picked;
};

const pickAttributes = (attributes: MessageAttributes, names: readonly string[]): MessageAttributes => {
  const picked: Record<string, MessageAttributes[string]> = {};
  for (const [name, value] of Object.entries(attributes)) {
    const wanted = names.some(
      (pattern) =>
        pattern === 'All' ||
        pattern === '.*' ||
        pattern === name ||
        (pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1))),
    );
    if (wanted) picked[name] = value;
  }
  return picked;
};

const errorReply = (error: AwsServiceError): HttpReply => {
  const queryCode = QUERY_ERROR_CODES[error.code] ?? error.code;
  const fault = error.status >= 500 ? 'Receiver' : 'Sender';
  return {
    status: error.status,
    headers: {
      'content-type': CONTENT_TYPE,
      'x-amzn-query-error': `${queryCode};${fault}`,
      ...error.extraHeaders,
    },
    body: JSON.stringify({ __type: `com.amazonaws.sqs#${error.code}`, message: error.message }),
  };
};
