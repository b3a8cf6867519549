import { DEFAULT_FUNCTION, type Wiring } from '../../lib/wiring';
import type { EventBridgeCounters } from '../eventbridge/local-eventbridge';
import type { FunctionMeter } from '../lambda/runner';
import type { SchedulerCounters } from '../scheduler/local-scheduler';
import type { QueueCounters } from '../sqs/queue';
import type { DynamoDbCall } from './dynamodb-proxy';
import type { GatewayMeter } from './gateway-meter';

/** API Gateway bills WebSocket messages in 32 KiB units. */
export const WS_MESSAGE_UNIT_BYTES = 32 * 1024;

export interface LambdaUsage {
  invocations: number;
  /** Measured handler time (init included when the cold start fell in the window). */
  durationMs: number;
  initMs: number;
  memoryMb: number;
  gbSeconds: number;
}

export interface DynamoDbTableUsage {
  readRequests: number;
  writeRequests: number;
  readUnits: number;
  writeUnits: number;
  /** Write units computed here for failed conditional writes (DynamoDB Local reports none for them). */
  computedWriteUnits: number;
  /** Reads whose units were raised to DynamoDB's minimum (empty results, which DynamoDB Local reports as 0). */
  computedReads: number;
}

/** Everything AWS would bill for, as counters; a difference of two snapshots is a scenario's usage. */
export interface Usage {
  httpRequests: number;
  wsMessagesIn: number;
  wsMessagesOut: number;
  wsConnectionMinutes: number;
  lambda: Record<string, LambdaUsage>;
  dynamoDb: Record<string, DynamoDbTableUsage>;
  /** Billed SQS requests per queue (API calls and the event source mappings' receives and deletes). */
  sqsRequests: Record<string, number>;
  eventBridgeEvents: number;
  schedulerInvocations: number;
  /** `@connections` GetConnection calls: not billed (the sweep's checks; their Lambda time is). */
  connectionChecks: number;
}

/** Where the counters the meter does not keep itself come from (the runner and the stand-ins). */
export interface UsageSources {
  lambda(): Record<string, FunctionMeter>;
  sqs(): Record<string, QueueCounters>;
  eventBridge(): EventBridgeCounters;
  scheduler(): SchedulerCounters;
}

/** Memory of every declared function, by the id the local runtime invokes it under. */
export const functionMemoryMb = (wiring: Wiring): Map<string, number> => {
  const memory = new Map<string, number>();
  const add = (id: string, memoryMb: number | undefined) =>
    memory.set(id, memoryMb ?? DEFAULT_FUNCTION.memoryMb);
  for (const route of wiring.httpRoutes) add(route.id, route.memoryMb);
  for (const route of wiring.webSocketRoutes) add(`ws.${route.routeKey}`, route.memoryMb);
  for (const worker of wiring.workers) add(worker.id, worker.memoryMb);
  for (const fn of wiring.busFunctions ?? []) add(fn.id, fn.memoryMb);
  for (const schedule of wiring.recurringSchedules) add(schedule.id, schedule.memoryMb);
  return memory;
};

const messageUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / WS_MESSAGE_UNIT_BYTES));

/**
 * Meters the billable operations of one local runtime: the gateways report to it (GatewayMeter), the
 * DynamoDB metering proxy reports each call, and `snapshot()` adds the runner's and the stand-ins' counters.
 */
export class UsageMeter implements GatewayMeter {
  private httpRequests = 0;
  private wsMessagesIn = 0;
  private wsMessagesOut = 0;
  private closedConnectionMs = 0;
  private connectionChecks = 0;
  private readonly openConnections = new Map<string, number>();
  private readonly dynamoDb = new Map<string, DynamoDbTableUsage>();
  private sources: UsageSources | undefined;

  constructor(private readonly memoryMb: ReadonlyMap<string, number>) {}

  attach(sources: UsageSources): void {
    this.sources = sources;
  }

  httpRequest(): void {
    this.httpRequests += 1;
  }

  webSocketMessage(direction: 'in' | 'out', bytes: number): void {
    if (direction === 'in') this.wsMessagesIn += messageUnits(bytes);
    else this.wsMessagesOut += messageUnits(bytes);
  }

  webSocketOpened(connectionId: string): void {
    this.openConnections.set(connectionId, performance.now());
  }

  webSocketClosed(connectionId: string): void {
    const openedAt = this.openConnections.get(connectionId);
    if (openedAt === undefined) return;
    this.openConnections.delete(connectionId);
    this.closedConnectionMs += performance.now() - openedAt;
  }

  connectionChecked(): void {
    this.connectionChecks += 1;
  }

  dynamoDbCall(call: DynamoDbCall): void {
    for (const [table, units] of call.units.size ? call.units : new Map([['?', 0]])) {
      let usage = this.dynamoDb.get(table);
      if (!usage) {
        usage = {
          readRequests: 0,
          writeRequests: 0,
          readUnits: 0,
          writeUnits: 0,
          computedWriteUnits: 0,
          computedReads: 0,
        };
        this.dynamoDb.set(table, usage);
      }
      if (call.kind === 'read') {
        usage.readRequests += 1;
        usage.readUnits += units;
        if (call.computed) usage.computedReads += 1;
      } else {
        usage.writeRequests += 1;
        usage.writeUnits += units;
        if (call.computed) usage.computedWriteUnits += units;
      }
    }
  }

  snapshot(): Usage {
    const sources = this.sources;
    if (!sources) throw new Error('UsageMeter.snapshot: attach() the runtime first');
    const now = performance.now();
    let openMs = 0;
    for (const openedAt of this.openConnections.values()) openMs += now - openedAt;
    const lambda: Record<string, LambdaUsage> = {};
    for (const [id, meter] of Object.entries(sources.lambda())) {
      const memoryMb = this.memoryMb.get(id) ?? DEFAULT_FUNCTION.memoryMb;
      const initMs = meter.initMs ?? 0;
      const durationMs = meter.totalDurationMs + initMs;
      lambda[id] = {
        invocations: meter.invocations,
        durationMs,
        initMs,
        memoryMb,
        gbSeconds: (durationMs / 1000) * (memoryMb / 1024),
      };
    }
    const sqsRequests: Record<string, number> = {};
    for (const [queue, counters] of Object.entries(sources.sqs())) sqsRequests[queue] = counters.requests;
    const scheduler = sources.scheduler();
    return {
      httpRequests: this.httpRequests,
      wsMessagesIn: this.wsMessagesIn,
      wsMessagesOut: this.wsMessagesOut,
      wsConnectionMinutes: (this.closedConnectionMs + openMs) / 60_000,
      lambda,
      dynamoDb: Object.fromEntries([...this.dynamoDb].map(([table, usage]) => [table, { ...usage }])),
      sqsRequests,
      eventBridgeEvents: sources.eventBridge().billedEvents,
      // Scheduler bills target invocations: one-time schedules firing and recurring runs.
      schedulerInvocations: scheduler.fired + scheduler.recurringInvocations,
      connectionChecks: this.connectionChecks,
    };
  }
}

const minus = <T extends object>(after: T, before: T | undefined): T => {
  const result = {} as Record<string, number>;
  for (const [key, value] of Object.entries(after)) {
    result[key] =
      (value as number) - (((before as Record<string, number> | undefined)?.[key] as number) ?? 0);
  }
  return result as T;
};

const nonZero = (value: object): boolean => Object.values(value).some((n) => n !== 0);

/** The usage between two snapshots; entries that did not change are left out. */
export const usageBetween = (before: Usage, after: Usage): Usage => {
  const lambda: Record<string, LambdaUsage> = {};
  for (const [id, usage] of Object.entries(after.lambda)) {
    const previous = before.lambda[id];
    const delta = minus(usage, previous);
    delta.memoryMb = usage.memoryMb;
    if (delta.invocations !== 0 || delta.durationMs !== 0) lambda[id] = delta;
  }
  const dynamoDb: Record<string, DynamoDbTableUsage> = {};
  for (const [table, usage] of Object.entries(after.dynamoDb)) {
    const delta = minus(usage, before.dynamoDb[table]);
    if (nonZero(delta)) dynamoDb[table] = delta;
  }
  const sqsRequests: Record<string, number> = {};
  for (const [queue, requests] of Object.entries(after.sqsRequests)) {
    const delta = requests - (before.sqsRequests[queue] ?? 0);
    if (delta !== 0) sqsRequests[queue] = delta;
  }
  return {
    httpRequests: after.httpRequests - before.httpRequests,
    wsMessagesIn: after.wsMessagesIn - before.wsMessagesIn,
    wsMessagesOut: after.wsMessagesOut - before.wsMessagesOut,
    wsConnectionMinutes: after.wsConnectionMinutes - before.wsConnectionMinutes,
    lambda,
    dynamoDb,
    sqsRequests,
    eventBridgeEvents: after.eventBridgeEvents - before.eventBridgeEvents,
    schedulerInvocations: after.schedulerInvocations - before.schedulerInvocations,
    connectionChecks: after.connectionChecks - before.connectionChecks,
  };
};
