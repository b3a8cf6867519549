/**
 * The shape of the wiring declaration: plain data, no CDK and no Lambda types, so that the CDK app
 * (lib/stack) and the local runtime (local/) both build from the same declaration (docs/design.md principle 1).
 */

import type { PushProvider } from '../../common/settings';

/** Scopes a service token can carry (docs/contract.md §2). */
export type Scope = 'events:publish' | 'notifications:write' | 'webhooks:admin' | 'broadcast:write';

/**
 * Who may call a route. The HTTP plumbing enforces it before the handler runs:
 * - `public`: no token needed;
 * - `users`: user tokens (`any` user, or only users holding the admin role);
 * - `services`: service tokens (`any` service, or only with the named scope).
 * A route listing both `users` and `services` accepts either principal.
 */
export type Access =
  | { readonly public: true }
  | { readonly users?: 'any' | 'admin'; readonly services?: 'any' | Scope };

/** Lambda sizing; defaults live in DEFAULT_FUNCTION. */
export interface FunctionSpec {
  /** Module path relative to the repository root, exporting `handler`. */
  readonly handler: string;
  readonly memoryMb?: number;
  readonly timeoutSecs?: number;
  /** Logical table ids the function reads. */
  readonly reads?: readonly TableId[];
  /** Logical table ids the function reads and writes. */
  readonly writes?: readonly TableId[];
  /** Queues the function sends to. */
  readonly sendsTo?: readonly QueueId[];
  /** Whether it puts events on the bus. */
  readonly putsEvents?: boolean;
  /** Whether it creates/deletes one-time EventBridge Scheduler schedules. */
  readonly schedules?: boolean;
  /** Whether it posts to / closes WebSocket connections through `@connections`. */
  readonly managesConnections?: boolean;
  /** Use of the key that envelope-encrypts webhook secrets (KMS GenerateDataKey / Decrypt on AWS). */
  readonly webhookSecretKey?: 'encrypt' | 'decrypt';
  /** Whether it signs or opens paging cursors (reads the cursor key's secret on AWS; lambdas/core/cursor-mac.ts). */
  readonly cursorKey?: boolean;
  /**
   * Whether it reads the push settings (`SERVICE__PUSH__*`: the configured apps and where their credentials are),
   * and whose credentials it reads (Secrets Manager read access to exactly those providers' secrets on AWS).
   */
  readonly push?: { readonly readsCredentials: readonly PushProvider[] };
  /**
   * Workers it hands messages to by an asynchronous Lambda invocation (`Invoke`, `InvocationType: Event`; each
   * such worker declares `invokedAsync`): it gets each one's ARN and `lambda:InvokeFunction` on exactly it.
   */
  readonly invokes?: readonly string[];
}

/** `ANY` is only for the catch-all route (path `$default`): it answers requests no other route matches. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'ANY';

/** Path of the catch-all route (API Gateway's `$default` route key), declared with method `ANY`. */
export const DEFAULT_ROUTE_PATH = '$default';

export interface HttpRoute extends FunctionSpec {
  /** Stable id, used by the handler to find its own declaration (e.g. `notifications.create`). */
  readonly id: string;
  readonly method: HttpMethod;
  /**
   * Path under /api/v1, API Gateway syntax for parameters: `/notifications/{receiver_id}/read`; or
   * DEFAULT_ROUTE_PATH (with method `ANY`) for the route that gets every request no other route matches.
   */
  readonly path: string;
  readonly access: Access;
}

export interface WebSocketRoute extends FunctionSpec {
  /** `$connect`, `$disconnect`, `$default` or a value of the frame's `type` (`$request.body.type`). */
  readonly routeKey: string;
}

/**
 * A WebSocket route API Gateway answers itself, with no function: a MOCK integration whose integration response
 * template is the fixed `reply` frame, sent back through the route response (docs/realtime.md, heartbeat).
 * AWS documents no way for a MOCK integration's response template to read the client's frame (only to select a
 * template by it), so the reply does not echo its `id` (docs/realtime.md, heartbeat).
 */
export interface WebSocketMockRoute {
  /** A value of the frame's `type` (`$request.body.type`). */
  readonly routeKey: string;
  /** The frame sent back, byte for byte the same on AWS and locally. */
  readonly reply: Readonly<Record<string, string>>;
  readonly purpose: string;
}

export type TableId = string;
export type QueueId = string;

export interface KeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

export interface TableSpec {
  readonly id: TableId;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  /** Epoch-seconds attribute DynamoDB TTL deletes on; reads still filter it (TTL deletes late). */
  readonly ttlAttribute?: string;
  readonly globalIndexes?: readonly IndexSpec[];
  /** Local indexes share the partition key and allow strongly consistent reads. */
  readonly localIndexes?: readonly LocalIndexSpec[];
  readonly purpose: string;
  /**
   * The id the table was first deployed under, when `id` was renamed since: its construct keeps that name, so
   * its CloudFormation logical id stays and the table (with its items) is not replaced.
   */
  readonly deployedAs?: TableId;
}

export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  /** `keys` = KEYS_ONLY, `all` = ALL, or a list of non-key attributes (INCLUDE). */
  readonly projection: 'keys' | 'all' | readonly string[];
}

export interface LocalIndexSpec {
  readonly name: string;
  readonly sortKey: KeyAttribute;
  readonly projection: 'keys' | 'all' | readonly string[];
}

export interface QueueSpec {
  readonly id: QueueId;
  /** Receives after which a message moves to the queue's DLQ. */
  readonly maxReceiveCount: number;
  /** Must be at least 6× the consuming function's timeout (AWS guidance). */
  readonly visibilityTimeoutSecs: number;
  readonly purpose: string;
}

/** A Lambda fed by an SQS queue through an event source mapping with ReportBatchItemFailures. */
export interface Worker extends FunctionSpec {
  readonly id: string;
  readonly queue: QueueId;
  readonly batchSize: number;
  readonly maxBatchingWindowSecs: number;
  /** Concurrency cap of the event source mapping (protects downstream services). */
  readonly maxConcurrency?: number;
  /**
   * An invocation running longer than this means the worker's share of work no longer fits its schedule: an
   * alarm (`<key>-duration`) fires at `scale.alarm_percent` of it, before the work is late (docs/scale.md).
   */
  readonly busyAfterSecs?: number;
  /**
   * Lambda also takes messages for it by asynchronous invocation (`Invoke` with `InvocationType: Event`, by the
   * functions that declare it in `invokes`): one message of its queue per invocation, no SQS request. Lambda keeps
   * the event durably, retries a failed or crashed invocation, and then sends an invocation record to the queue's
   * DLQ (`<queue>-dlq`, alarmed): what fails there ends where the queue's own failures end.
   */
  readonly invokedAsync?: AsyncInvocation;
}

/** Lambda's asynchronous invocation settings of a function (its event invoke config). */
export interface AsyncInvocation {
  /** Lambda's MaximumRetryAttempts, 0–2. */
  readonly retryAttempts: 0 | 1 | 2;
  /** Lambda's MaximumEventAgeInSeconds (60–21,600): older events go to the on-failure destination unprocessed. */
  readonly maxEventAgeSecs: number;
}

/**
 * A Lambda the bus invokes directly (EventBridge → Lambda, asynchronous invocation): one event per invocation,
 * no queue in between. Lambda keeps the event in its asynchronous queue, retries a failed or crashed invocation
 * `retryAttempts` times (1 and 2 minutes later; the same request id each time) and then sends an invocation
 * record to the on-failure destination, the SQS queue `<deadLetterQueue>-dlq` with its alarm.
 * EventBridge retries a delivery Lambda refuses, and gives up into the same queue.
 */
export interface BusFunction extends FunctionSpec, AsyncInvocation {
  readonly id: string;
  /** Names the on-failure destination `<deadLetterQueue>-dlq` (the DLQ naming of declared queues). */
  readonly deadLetterQueue: string;
  readonly purpose: string;
}

/** The queue a bus rule delivers to, or the bus function it invokes (docs/events-topics-devices.md). */
export type BusTarget = { readonly targetQueue: QueueId } | { readonly targetFunction: string };

/** An EventBridge rule on the service's bus whose target is a queue or a bus function. */
export type BusRule = {
  readonly id: string;
  readonly description: string;
  /** An EventBridge event pattern, as AWS documents it. */
  readonly pattern: Record<string, unknown>;
} & BusTarget;

/** A recurring invocation of a function (EventBridge Scheduler on AWS, a timer locally). */
export interface RecurringSchedule extends FunctionSpec {
  readonly id: string;
  /** Rate in minutes. */
  readonly everyMinutes: number;
  readonly description: string;
}

/**
 * A target for one-time `at()` schedules that functions create at run time (EventBridge Scheduler);
 * the schedule sends its payload to the queue.
 */
export interface ScheduleTarget {
  readonly id: string;
  readonly targetQueue: QueueId;
  readonly description: string;
}

export interface Wiring {
  readonly httpRoutes: readonly HttpRoute[];
  readonly webSocketRoutes: readonly WebSocketRoute[];
  /** Routes answered by API Gateway without a function (optional: most wirings have none). */
  readonly webSocketMockRoutes?: readonly WebSocketMockRoute[];
  readonly tables: readonly TableSpec[];
  readonly queues: readonly QueueSpec[];
  readonly workers: readonly Worker[];
  /** Functions bus rules invoke directly (optional: most wirings have none). */
  readonly busFunctions?: readonly BusFunction[];
  readonly busRules: readonly BusRule[];
  readonly recurringSchedules: readonly RecurringSchedule[];
  readonly scheduleTargets: readonly ScheduleTarget[];
  /**
   * Each area's part of the declaration (lib/wiring/areas/*), by area name: the stack puts the functions an
   * area declares in a nested stack of that area, and those of no area in one nested stack of their own.
   */
  readonly areas?: Readonly<Record<string, WiringPart>>;
}

export const DEFAULT_FUNCTION = { memoryMb: 256, timeoutSecs: 10 } as const;

/** One area's contribution to the declaration (lib/wiring/areas/*). */
export type WiringPart = { readonly [K in Exclude<keyof Wiring, 'areas'>]?: Wiring[K] };
