import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BusRule, EVENTBRIDGE_MAX_PUT_EVENTS_BYTES } from '../../lib/wiring';
import type { LocalAccess } from '../access';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../aws-account';
import {
  AwsServiceError,
  type HttpReply,
  type HttpRequest,
  jsonReply,
  jsonTarget,
  type LoopbackServer,
  parseJsonObject,
  startLoopbackServer,
} from '../aws-http';
import { AWS_LIKE_ODDS, type Chooser, type Delivery, exactDelivery } from '../delivery';
import { AppendLog } from '../durable-file';
import type { LocalLambda } from '../lambda/local-lambda';
import type { LocalSqs } from '../sqs/local-sqs';
import { billedRequests } from '../sqs/message';
import { removeStandInState, writeStandInState } from '../stand-in-state';
import { type CompiledEventPattern, compileEventPattern } from './event-pattern';

/**
 * A local, wire-compatible stand-in for Amazon EventBridge with one custom bus: PutEvents (AWS JSON 1.1, as
 * @aws-sdk/client-eventbridge sends it) with AWS's entry and size limits and per-entry failures, rules
 * matched with AWS's event pattern semantics and delivered to their SQS target queue, an archive, and
 * replay (StartReplay / DescribeReplay, and `replay()` in process). Other operations fail with their name.
 * See docs/local-standins.md.
 */

const CONTENT_TYPE = 'application/x-amz-json-1.1';
export const MAX_PUT_EVENTS_ENTRIES = 10;
export const MAX_PUT_EVENTS_BYTES = EVENTBRIDGE_MAX_PUT_EVENTS_BYTES;
const ARCHIVE_FILE = 'eventbridge-archive.jsonl';
/** Where a running stand-in writes its endpoint so `npm run replay -- --data DIR` can find it. */
export const STATE_FILE = 'eventbridge-endpoint.json';

/** The event envelope EventBridge delivers to targets. */
export interface EventEnvelope {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: unknown;
  readonly 'replay-name'?: string;
}

export interface EventBridgeState {
  readonly endpoint: string;
  readonly busName: string;
  readonly busArn: string;
  readonly archiveArn: string;
  readonly region: string;
  readonly pid: number;
}

export interface LocalEventBridgeOptions {
  /** Refuses PutEvents from a function without `putsEvents` (local least privilege; local/access.ts). */
  readonly access?: LocalAccess;
  readonly busName: string;
  readonly rules: readonly BusRule[];
  readonly sqs: LocalSqs;
  /** Lambda's stand-in, which invokes the bus functions asynchronously (rules with a function target). */
  readonly lambda?: Pick<LocalLambda, 'invokeAsync' | 'asyncFunctionArn'>;
  /** When set, the archive is kept in `<dataDir>/eventbridge-archive.jsonl` and the endpoint in a state file. */
  readonly dataDir?: string;
  /** Events matching it are archived; default: every event on the bus. */
  readonly archivePattern?: object;
  readonly region?: string;
  readonly accountId?: string;
  /** Where delivery failures go; default stderr. */
  readonly log?: (line: string) => void;
  /** AWS-like delivery: targets get an event a little after PutEvents answers (local/delivery.ts). */
  readonly delivery?: Delivery;
}

export interface EventBridgeCounters {
  /** PutEvents entries accepted. */
  putEvents: number;
  /** Billed events: one per started 64 KiB of each entry. */
  billedEvents: number;
  failedEntries: number;
  /** Rule matches delivered to a target queue. */
  deliveries: number;
  archived: number;
  replayed: number;
}

interface ArchivedEvent {
  readonly archivedAt: string;
  readonly event: EventEnvelope;
}

interface Replay {
  readonly name: string;
  readonly arn: string;
  readonly state: 'COMPLETED' | 'FAILED';
  readonly reason: string;
  readonly startTime: number;
  readonly endTime: number;
  readonly eventStartTime: number;
  readonly eventEndTime: number;
  readonly lastReplayedTime: number | undefined;
}

interface CompiledRule {
  readonly rule: BusRule;
  readonly pattern: CompiledEventPattern;
}

const utf8Bytes = (value: unknown): number =>
  typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0;

/**
 * The size AWS counts for a PutEvents entry: 14 bytes for Time when present, plus the UTF-8 bytes of
 * Source, DetailType, Detail and each Resources entry.
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 */
export const putEventsEntrySize = (entry: Record<string, unknown>): number => {
  let size = entry.Time !== undefined && entry.Time !== null ? 14 : 0;
  size += utf8Bytes(entry.Source) + utf8Bytes(entry.DetailType) + utf8Bytes(entry.Detail);
  if (Array.isArray(entry.Resources)) for (const resource of entry.Resources) size += utf8Bytes(resource);
  return size;
};

/** EventBridge writes event times to the second, without milliseconds. */
const eventTime = (date: Date): string => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The JSON protocol carries timestamps as epoch seconds (a number); tolerate ISO strings too. */
const toDate = (value: unknown): Date | undefined => {
  if (typeof value === 'number') return new Date(value * 1000);
  if (typeof value === 'string') {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  return undefined;
};

class EntryError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class LocalEventBridge {
  private readonly chooser: Chooser;
  private readonly region: string;
  private readonly accountId: string;
  private readonly rules: readonly CompiledRule[];
  private readonly archivePattern: CompiledEventPattern;
  private readonly archive: ArchivedEvent[] = [];
  private readonly replays = new Map<string, Replay>();
  private readonly log: (line: string) => void;
  private server: LoopbackServer | undefined;
  private archiveLog: AppendLog | undefined;
  private readonly counters_: EventBridgeCounters = {
    putEvents: 0,
    billedEvents: 0,
    failedEntries: 0,
    deliveries: 0,
    archived: 0,
    replayed: 0,
  };

  private get lambda(): Pick<LocalLambda, 'invokeAsync' | 'asyncFunctionArn'> {
    if (!this.opts.lambda)
      throw new Error('LocalEventBridge: a rule targets a function, but no lambda is given');
    return this.opts.lambda;
  }

  constructor(private readonly opts: LocalEventBridgeOptions) {
    this.chooser = (opts.delivery ?? exactDelivery()).chooser('eventbridge');
    this.region = opts.region ?? LOCAL_REGION;
    this.accountId = opts.accountId ?? LOCAL_ACCOUNT_ID;
    this.log = opts.log ?? ((line) => console.warn(`[eventbridge] ${line}`));
    this.rules = opts.rules.map((rule) => {
      // Fail at start, not on the first event, when a declared rule cannot work.
      if ('targetQueue' in rule) opts.sqs.queueArn(rule.targetQueue);
      else this.lambda.asyncFunctionArn(rule.targetFunction);
      try {
        return { rule, pattern: compileEventPattern(rule.pattern) };
      } catch (error) {
        throw new Error(`Bus rule ${rule.id}: ${(error as Error).message}`);
      }
    });
    this.archivePattern = opts.archivePattern
      ? compileEventPattern(opts.archivePattern)
      : { matches: () => true };
  }

  get busArn(): string {
    return `arn:aws:events:${this.region}:${this.accountId}:event-bus/${this.opts.busName}`;
  }

  get archiveArn(): string {
    return `arn:aws:events:${this.region}:${this.accountId}:archive/${this.opts.busName}-archive`;
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.loadArchive();
    if (this.opts.dataDir) {
      this.archiveLog = new AppendLog(join(this.opts.dataDir, ARCHIVE_FILE), { log: this.log });
      await this.archiveLog.open();
    }
    this.server = await startLoopbackServer(
      'LocalEventBridge',
      (request) => this.handle(request),
      errorReply,
    );
    const dataDir = this.opts.dataDir;
    if (dataDir) {
      mkdirSync(dataDir, { recursive: true });
      const state: Omit<EventBridgeState, 'pid'> = {
        endpoint: this.server.endpoint,
        busName: this.opts.busName,
        busArn: this.busArn,
        archiveArn: this.archiveArn,
        region: this.region,
      };
      writeStandInState(dataDir, STATE_FILE, state);
    }
  }

  get endpoint(): string {
    if (!this.server) throw new Error('LocalEventBridge is not started');
    return this.server.endpoint;
  }

  counters(): EventBridgeCounters {
    return { ...this.counters_ };
  }

  /** Archived events, oldest first (a copy). */
  archivedEvents(): EventEnvelope[] {
    return this.archive.map(({ event }) => event);
  }

  async stop(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
    await this.archiveLog?.close();
    this.archiveLog = undefined;
    if (this.opts.dataDir) removeStandInState(this.opts.dataDir, STATE_FILE);
  }

  /**
   * Re-sends archived events whose `time` lies in [from, to] to the bus's rules, with `replay-name` set,
   * as an EventBridge replay does. Replayed events are not archived again. Returns how many were replayed.
   */
  async replay(opts: { from?: Date; to?: Date; name?: string } = {}): Promise<number> {
    const from = opts.from?.getTime() ?? Number.NEGATIVE_INFINITY;
    const to = opts.to?.getTime() ?? Number.POSITIVE_INFINITY;
    const name = opts.name ?? `replay-${Date.now()}`;
    const routed: Promise<void>[] = [];
    for (const { event } of [...this.archive]) {
      const time = new Date(event.time).getTime();
      if (time < from || time > to) continue;
      routed.push(this.route({ ...event, 'replay-name': name }));
    }
    await Promise.all(routed);
    this.counters_.replayed += routed.length;
    return routed.length;
  }

  private handle(request: HttpRequest): Promise<HttpReply> {
    const operation = jsonTarget(request, 'AWSEvents');
    if (!operation) {
      throw new AwsServiceError(
        'UnknownOperationException',
        'LocalEventBridge expects an X-Amz-Target: AWSEvents.<Operation> header',
      );
    }
    const input = parseJsonObject(request.body);
    const respond = (body: unknown) => Promise.resolve(jsonReply(200, CONTENT_TYPE, body));
    switch (operation) {
      case 'PutEvents':
        this.opts.access?.check(
          request.headers,
          'events:PutEvents',
          this.busArn,
          (grants) => grants.putsEvents,
        );
        return this.putEvents(input).then((body) => jsonReply(200, CONTENT_TYPE, body));
      case 'StartReplay':
        return this.startReplay(input).then((body) => jsonReply(200, CONTENT_TYPE, body));
      case 'DescribeReplay':
        return respond(this.describeReplay(input));
      default:
        throw new AwsServiceError('UnsupportedOperation', `LocalEventBridge does not implement ${operation}`);
    }
  }

  /** Answers once every accepted entry is archived and in its target queues, on disk with dataDir. */
  private async putEvents(input: Record<string, unknown>) {
    const entries = input.Entries;
    if (!Array.isArray(entries) || entries.length === 0) {
      throw new AwsServiceError(
        'ValidationException',
        "1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null",
      );
    }
    if (entries.length > MAX_PUT_EVENTS_ENTRIES) {
      throw new AwsServiceError(
        'ValidationException',
        `1 validation error detected: Value '[...]' at 'entries' failed to satisfy constraint: Member must have length less than or equal to ${MAX_PUT_EVENTS_ENTRIES}`,
      );
    }
    const sizes = (entries as Record<string, unknown>[]).map((entry) =>
      putEventsEntrySize(entry && typeof entry === 'object' ? entry : {}),
    );
    const total = sizes.reduce((sum, size) => sum + size, 0);
    if (total > MAX_PUT_EVENTS_BYTES) {
      throw new AwsServiceError(
        'ValidationException',
        `Total size of the entries in the request is over the limit (${total} > ${MAX_PUT_EVENTS_BYTES} bytes).`,
      );
    }
    const results = await Promise.all(
      (entries as Record<string, unknown>[]).map(async (entry, index) => {
        try {
          const event = this.toEnvelope(entry ?? {});
          this.counters_.putEvents += 1;
          this.counters_.billedEvents += billedRequests(sizes[index] ?? 0);
          await this.accept(event);
          return { EventId: event.id };
        } catch (error) {
          this.counters_.failedEntries += 1;
          if (error instanceof EntryError) return { ErrorCode: error.code, ErrorMessage: error.message };
          // Not stored (e.g. the disk write failed): the caller retries the entry, as on AWS.
          return { ErrorCode: 'InternalFailure', ErrorMessage: (error as Error).message };
        }
      }),
    );
    return { FailedEntryCount: results.filter((result) => 'ErrorCode' in result).length, Entries: results };
  }

  private toEnvelope(entry: Record<string, unknown>): EventEnvelope {
    const busName = entry.EventBusName ?? 'default';
    if (busName !== this.opts.busName && busName !== this.busArn) {
      throw new EntryError(
        'ResourceNotFoundException',
        `Event bus ${String(busName)} does not exist (the local runtime has only ${this.opts.busName}).`,
      );
    }
    for (const field of ['Source', 'DetailType', 'Detail'] as const) {
      if (typeof entry[field] !== 'string' || entry[field] === '') {
        throw new EntryError(
          'InvalidArgument',
          `Parameter ${field} is not valid. Reason: ${field} is a required argument.`,
        );
      }
    }
    let detail: unknown;
    try {
      detail = JSON.parse(entry.Detail as string);
    } catch {
      throw new EntryError('MalformedDetail', 'Detail is malformed.');
    }
    if (typeof detail !== 'object' || detail === null || Array.isArray(detail)) {
      throw new EntryError('MalformedDetail', 'Detail is malformed.');
    }
    const resources = entry.Resources ?? [];
    if (!Array.isArray(resources) || !resources.every((resource) => typeof resource === 'string')) {
      throw new EntryError(
        'InvalidArgument',
        'Parameter Resources is not valid. Reason: Resources must be strings.',
      );
    }
    const time = entry.Time === undefined || entry.Time === null ? new Date() : toDate(entry.Time);
    if (!time) throw new EntryError('InvalidArgument', 'Parameter Time is not valid.');
    return {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType as string,
      source: entry.Source as string,
      account: this.accountId,
      time: eventTime(time),
      region: this.region,
      resources: resources as string[],
      detail,
    };
  }

  private async accept(event: EventEnvelope): Promise<void> {
    let archived: Promise<void> = Promise.resolve();
    if (this.archivePattern.matches(event)) {
      const entry: ArchivedEvent = { archivedAt: new Date().toISOString(), event };
      this.archive.push(entry);
      this.counters_.archived += 1;
      if (this.archiveLog) {
        this.archiveLog.append(JSON.stringify(entry));
        archived = this.archiveLog.durable();
      }
    }
    await Promise.all([archived, this.route(event)]);
  }

  /**
   * Delivers an event to the target of every matching rule — a queue (the SQS message body is the envelope) or a
   * bus function's asynchronous queue (the envelope is the invocation's event) — and resolves once each is
   * durable. A delivery refused is logged, as AWS drops it after retries (or puts it in the rule's DLQ).
   * With AWS-like delivery each target gets the event only after a small random delay, so targets run after
   * PutEvents / StartReplay answer, as on AWS; the event is on disk before the answer all the same.
   */
  private async route(event: EventEnvelope): Promise<void> {
    const sent: Promise<string>[] = [];
    for (const { rule, pattern } of this.rules) {
      if (!pattern.matches(event)) continue;
      const delayMs = this.chooser.between(0, AWS_LIKE_ODDS.maxDelayMs);
      const target = 'targetQueue' in rule ? rule.targetQueue : rule.targetFunction;
      try {
        sent.push(
          'targetQueue' in rule
            ? this.opts.sqs.enqueue(rule.targetQueue, JSON.stringify(event), {
                senderId: 'events.amazonaws.com',
                delayMs,
              })
            : this.lambda.invokeAsync(rule.targetFunction, event, delayMs),
        );
        this.counters_.deliveries += 1;
      } catch (error) {
        this.log(
          `rule ${rule.id}: delivery of event ${event.id} to ${target} failed: ${(error as Error).message}`,
        );
      }
    }
    await Promise.all(sent);
  }

  private async startReplay(input: Record<string, unknown>) {
    const name = input.ReplayName;
    if (typeof name !== 'string' || !/^[.\-_A-Za-z0-9]{1,64}$/.test(name)) {
      throw new AwsServiceError(
        'ValidationException',
        'ReplayName must match [\\.\\-_A-Za-z0-9]+ (1 to 64 characters).',
      );
    }
    if (this.replays.has(name)) {
      throw new AwsServiceError('ResourceAlreadyExistsException', `Replay ${name} already exists.`);
    }
    if (input.EventSourceArn !== this.archiveArn) {
      throw new AwsServiceError(
        'ResourceNotFoundException',
        `Archive ${String(input.EventSourceArn)} does not exist.`,
      );
    }
    const destination = input.Destination as { Arn?: unknown; FilterArns?: unknown } | undefined;
    if (destination?.Arn !== this.busArn) {
      throw new AwsServiceError('ValidationException', `Destination.Arn must be the bus ${this.busArn}.`);
    }
    if (destination.FilterArns !== undefined) {
      throw new AwsServiceError(
        'UnsupportedOperation',
        'LocalEventBridge replays to every rule; FilterArns is not implemented.',
      );
    }
    const from = toDate(input.EventStartTime);
    const to = toDate(input.EventEndTime);
    if (!from || !to || from.getTime() > to.getTime()) {
      throw new AwsServiceError(
        'ValidationException',
        'EventStartTime and EventEndTime are required, start before end.',
      );
    }
    const startTime = Date.now();
    const replayed = await this.replay({ from, to, name });
    const replay: Replay = {
      name,
      arn: `arn:aws:events:${this.region}:${this.accountId}:replay/${name}`,
      state: 'COMPLETED',
      reason: `Replayed ${replayed} event(s)`,
      startTime,
      endTime: Date.now(),
      eventStartTime: from.getTime(),
      eventEndTime: to.getTime(),
      lastReplayedTime: replayed > 0 ? Date.now() : undefined,
    };
    this.replays.set(name, replay);
    // The replay runs to completion before answering, so the caller sees the final state at once.
    return {
      ReplayArn: replay.arn,
      State: replay.state,
      StateReason: replay.reason,
      ReplayStartTime: startTime / 1000,
    };
  }

  private describeReplay(input: Record<string, unknown>) {
    const replay = typeof input.ReplayName === 'string' ? this.replays.get(input.ReplayName) : undefined;
    if (!replay)
      throw new AwsServiceError(
        'ResourceNotFoundException',
        `Replay ${String(input.ReplayName)} does not exist.`,
      );
    return {
      ReplayName: replay.name,
      ReplayArn: replay.arn,
      State: replay.state,
      StateReason: replay.reason,
      EventSourceArn: this.archiveArn,
      Destination: { Arn: this.busArn },
      EventStartTime: replay.eventStartTime / 1000,
      EventEndTime: replay.eventEndTime / 1000,
      ReplayStartTime: replay.startTime / 1000,
      ReplayEndTime: replay.endTime / 1000,
      ...(replay.lastReplayedTime ? { EventLastReplayedTime: replay.lastReplayedTime / 1000 } : {}),
    };
  }

  private loadArchive(): void {
    if (!this.opts.dataDir) return;
    let text: string;
    try {
      text = readFileSync(join(this.opts.dataDir, ARCHIVE_FILE), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    this.archive.length = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        this.archive.push(JSON.parse(line) as ArchivedEvent);
      } catch {
        // A torn last line from a crash loses that one event, not the archive.
        this.log(`skipping an unreadable archive line in ${ARCHIVE_FILE}`);
      }
    }
  }
}

const errorReply = (error: AwsServiceError): HttpReply => ({
  status: error.status,
  headers: { 'content-type': CONTENT_TYPE, ...error.extraHeaders },
  body: JSON.stringify({ __type: error.code, message: error.message }),
});
