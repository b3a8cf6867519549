import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecurringSchedule, ScheduleTarget } from '../../lib/wiring';
import type { LocalAccess } from '../access';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../aws-account';
import {
  AwsServiceError,
  type HttpReply,
  type HttpRequest,
  type LoopbackServer,
  parseJsonObject,
  startLoopbackServer,
} from '../aws-http';
import { type Chooser, type Delivery, exactDelivery } from '../delivery';
import { writeFileDurably } from '../durable-file';
import type { InvokeFunction } from '../lambda/types';
import type { LocalSqs } from '../sqs/local-sqs';
import { resolveTimeScale } from '../sqs/time-scale';
import { parseAtExpression } from './at-expression';

/**
 * A local, wire-compatible stand-in for Amazon EventBridge Scheduler: the REST-JSON operations
 * CreateSchedule, GetSchedule and DeleteSchedule for one-time `at()` schedules whose target is a declared
 * schedule-target queue, firing once at their time (also after a restart when dataDir is set), plus timers
 * for the declared recurring schedules. Anything else fails with its name. See docs/local-standins.md.
 */

const SCHEDULES_FILE = 'schedules.json';
/** setTimeout cannot wait longer than 2^31-1 ms; longer waits re-arm. */
const MAX_TIMER_MS = 2_147_483_647;
const NAME = /^[0-9a-zA-Z\-_.]{1,64}$/;

export interface LocalSchedulerOptions {
  /** Refuses schedule calls from a function without `schedules` (local least privilege; local/access.ts). */
  readonly access?: LocalAccess;
  readonly targets: readonly ScheduleTarget[];
  readonly recurring: readonly RecurringSchedule[];
  readonly sqs: LocalSqs;
  readonly invoke: InvokeFunction;
  /** When set, one-time schedules are kept in `<dataDir>/schedules.json` and survive restarts. */
  readonly dataDir?: string;
  readonly region?: string;
  readonly accountId?: string;
  /**
   * Multiplies the period of recurring schedules (everyMinutes): 1 (default) is real time, tests use e.g.
   * 0.001 so a 5-minute schedule runs every 0.3 s. One-time `at()` schedules always fire at their time.
   * Defaults to NOTIFY_LOCAL_TIME_SCALE when that is set.
   */
  readonly timeScale?: number;
  /** Schedule groups that exist; when omitted, any group name is accepted. */
  readonly groups?: readonly string[];
  readonly log?: (line: string) => void;
  /** AWS-like delivery: flexible schedules fire at a random moment of their window (local/delivery.ts). */
  readonly delivery?: Delivery;
}

interface StoredSchedule {
  readonly name: string;
  readonly groupName: string;
  readonly arn: string;
  readonly expression: string;
  readonly timezone: string | undefined;
  /** Epoch ms when it fires. */
  readonly fireAt: number;
  readonly target: { readonly Arn: string; readonly RoleArn: string; readonly Input?: string };
  readonly queueId: string;
  readonly state: 'ENABLED' | 'DISABLED';
  readonly actionAfterCompletion: 'DELETE' | 'NONE';
  readonly flexibleTimeWindow: { readonly Mode: string; readonly MaximumWindowInMinutes?: number };
  readonly description: string | undefined;
  readonly clientToken: string | undefined;
  readonly createdAt: number;
  fired: boolean;
}

export interface SchedulerCounters {
  created: number;
  deleted: number;
  /** One-time schedules that sent their target message. */
  fired: number;
  /** Recurring schedule invocations. */
  recurringInvocations: number;
}

const json = (status: number, body: unknown): HttpReply => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const unsupported = (what: string): AwsServiceError =>
  new AwsServiceError('UnsupportedOperation', `LocalScheduler does not implement ${what}`);

export class LocalScheduler {
  private readonly chooser: Chooser;
  private readonly region: string;
  private readonly accountId: string;
  private readonly timeScale: number;
  private readonly schedules = new Map<string, StoredSchedule>();
  private readonly recurringTimers: NodeJS.Timeout[] = [];
  private readonly log: (line: string) => void;
  private readonly counters_: SchedulerCounters = {
    created: 0,
    deleted: 0,
    fired: 0,
    recurringInvocations: 0,
  };
  private server: LoopbackServer | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Schedules whose message is being sent (not yet durable, so not yet marked fired). */
  private readonly firing = new Set<StoredSchedule>();

  constructor(private readonly opts: LocalSchedulerOptions) {
    this.chooser = (opts.delivery ?? exactDelivery()).chooser('scheduler');
    this.region = opts.region ?? LOCAL_REGION;
    this.accountId = opts.accountId ?? LOCAL_ACCOUNT_ID;
    this.timeScale = resolveTimeScale(opts.timeScale, 'LocalScheduler');
    this.log = opts.log ?? ((line) => console.warn(`[scheduler] ${line}`));
    for (const target of opts.targets) opts.sqs.queueArn(target.targetQueue);
    for (const schedule of opts.recurring) {
      if (!(schedule.everyMinutes > 0))
        throw new Error(`Recurring schedule ${schedule.id}: everyMinutes must be > 0`);
    }
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.load();
    this.server = await startLoopbackServer('LocalScheduler', (request) => this.handle(request), errorReply);
    for (const schedule of this.opts.recurring) this.startRecurring(schedule);
    this.arm();
  }

  get endpoint(): string {
    if (!this.server) throw new Error('LocalScheduler is not started');
    return this.server.endpoint;
  }

  counters(): SchedulerCounters {
    return { ...this.counters_ };
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const timer of this.recurringTimers.splice(0)) clearInterval(timer);
    await this.server?.close();
    this.server = undefined;
  }

  private startRecurring(schedule: RecurringSchedule): void {
    const periodMs = Math.max(1, Math.round(schedule.everyMinutes * 60_000 * this.timeScale));
    const arn = `arn:aws:scheduler:${this.region}:${this.accountId}:schedule/default/${schedule.id}`;
    const timer = setInterval(() => {
      this.counters_.recurringInvocations += 1;
      // The payload a rate() schedule gives its function here: a Scheduled Event envelope.
      const event = {
        version: '0',
        id: randomUUID(),
        'detail-type': 'Scheduled Event',
        source: 'aws.scheduler',
        account: this.accountId,
        time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: this.region,
        resources: [arn],
        detail: {},
      };
      this.opts.invoke(schedule, event).catch((error: unknown) => {
        this.log(
          `recurring schedule ${schedule.id} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
    }, periodMs);
    timer.unref();
    this.recurringTimers.push(timer);
  }

  private key(groupName: string, name: string): string {
    return `${groupName}/${name}`;
  }

  private async handle(request: HttpRequest): Promise<HttpReply> {
    const match = /^\/schedules\/([^/]+)$/.exec(request.url.pathname);
    if (!match) {
      throw unsupported(
        `${request.method} ${request.url.pathname} (only CreateSchedule, GetSchedule, DeleteSchedule)`,
      );
    }
    const name = decodeURIComponent(match[1]!);
    const action = { POST: 'CreateSchedule', GET: 'GetSchedule', DELETE: 'DeleteSchedule' }[request.method];
    this.opts.access?.check(
      request.headers,
      `scheduler:${action ?? request.method}`,
      `arn:aws:scheduler:${this.region}:${this.accountId}:schedule/*/${name}`,
      (grants) => grants.schedules,
      403,
    );
    if (!NAME.test(name)) {
      throw new AwsServiceError(
        'ValidationException',
        `Schedule name ${name} must match [0-9a-zA-Z-_.]{1,64}.`,
      );
    }
    switch (request.method) {
      case 'POST':
        return json(200, this.create(name, parseJsonObject(request.body, 'ValidationException')));
      case 'GET':
        return json(200, this.get(name, this.groupOf(request.url.searchParams.get('groupName'))));
      case 'DELETE':
        this.delete(name, this.groupOf(request.url.searchParams.get('groupName')));
        return json(200, {});
      case 'PUT':
        throw unsupported('UpdateSchedule');
      default:
        throw unsupported(`${request.method} /schedules/{Name}`);
    }
  }

  private groupOf(value: unknown): string {
    const group = typeof value === 'string' && value !== '' ? value : 'default';
    if (this.opts.groups && group !== 'default' && !this.opts.groups.includes(group)) {
      throw new AwsServiceError('ResourceNotFoundException', `Schedule group ${group} does not exist.`, 404);
    }
    return group;
  }

  private create(name: string, input: Record<string, unknown>) {
    const groupName = this.groupOf(input.GroupName);
    const existing = this.schedules.get(this.key(groupName, name));
    if (existing) {
      // An SDK retry of the same request carries the same ClientToken and must not fail.
      if (typeof input.ClientToken === 'string' && input.ClientToken === existing.clientToken) {
        return { ScheduleArn: existing.arn };
      }
      throw new AwsServiceError('ConflictException', `Schedule ${name} already exists.`, 409);
    }
    const expression = input.ScheduleExpression;
    if (typeof expression !== 'string' || expression === '') {
      throw new AwsServiceError('ValidationException', 'ScheduleExpression is required.');
    }
    if (/^(rate|cron)\(/.test(expression)) {
      throw unsupported(`${expression.slice(0, 4)} schedule expressions (only one-time at() schedules)`);
    }
    const timezone =
      typeof input.ScheduleExpressionTimezone === 'string' ? input.ScheduleExpressionTimezone : undefined;
    const fireAt = parseAtExpression(expression, timezone);
    // A one-time schedule must lie ahead (the current second still counts: at() has no finer resolution).
    if (fireAt < Math.floor(Date.now() / 1000) * 1000) {
      throw new AwsServiceError('ValidationException', `The schedule time of ${expression} is in the past.`);
    }
    const flexible = input.FlexibleTimeWindow as
      | { Mode?: unknown; MaximumWindowInMinutes?: unknown }
      | undefined;
    if (flexible?.Mode !== 'OFF' && flexible?.Mode !== 'FLEXIBLE') {
      throw new AwsServiceError('ValidationException', 'FlexibleTimeWindow.Mode must be OFF or FLEXIBLE.');
    }
    const windowMinutes = flexible.MaximumWindowInMinutes;
    if (
      flexible.Mode === 'FLEXIBLE' &&
      !(
        typeof windowMinutes === 'number' &&
        Number.isInteger(windowMinutes) &&
        windowMinutes >= 1 &&
        windowMinutes <= 1440
      )
    ) {
      throw new AwsServiceError(
        'ValidationException',
        'FlexibleTimeWindow.MaximumWindowInMinutes must be an integer from 1 to 1440 when Mode is FLEXIBLE.',
      );
    }
    const target = input.Target as { Arn?: unknown; RoleArn?: unknown; Input?: unknown } | undefined;
    if (typeof target?.Arn !== 'string' || typeof target.RoleArn !== 'string') {
      throw new AwsServiceError('ValidationException', 'Target.Arn and Target.RoleArn are required.');
    }
    const queueId = this.opts.sqs.queueIdForArn(target.Arn);
    if (!queueId || !this.opts.targets.some((declared) => declared.targetQueue === queueId)) {
      throw new AwsServiceError(
        'ValidationException',
        `Target ${target.Arn} is not a declared schedule target queue (lib/wiring scheduleTargets).`,
      );
    }
    if (target.Input !== undefined && typeof target.Input !== 'string') {
      throw new AwsServiceError('ValidationException', 'Target.Input must be a string.');
    }
    const action = input.ActionAfterCompletion ?? 'NONE';
    if (action !== 'DELETE' && action !== 'NONE') {
      throw new AwsServiceError('ValidationException', 'ActionAfterCompletion must be DELETE or NONE.');
    }
    const state = input.State ?? 'ENABLED';
    if (state !== 'ENABLED' && state !== 'DISABLED') {
      throw new AwsServiceError('ValidationException', 'State must be ENABLED or DISABLED.');
    }
    const schedule: StoredSchedule = {
      name,
      groupName,
      arn: `arn:aws:scheduler:${this.region}:${this.accountId}:schedule/${groupName}/${name}`,
      expression,
      timezone,
      // A flexible schedule fires anywhere in its window (AWS-like delivery draws the moment; exact: at once).
      fireAt:
        flexible.Mode === 'FLEXIBLE' && typeof windowMinutes === 'number'
          ? fireAt + this.chooser.between(0, windowMinutes * 60_000)
          : fireAt,
      target: {
        Arn: target.Arn,
        RoleArn: target.RoleArn,
        ...(typeof target.Input === 'string' ? { Input: target.Input } : {}),
      },
      queueId,
      state,
      actionAfterCompletion: action,
      flexibleTimeWindow: {
        Mode: flexible.Mode,
        ...(typeof flexible.MaximumWindowInMinutes === 'number'
          ? { MaximumWindowInMinutes: flexible.MaximumWindowInMinutes }
          : {}),
      },
      description: typeof input.Description === 'string' ? input.Description : undefined,
      clientToken: typeof input.ClientToken === 'string' ? input.ClientToken : undefined,
      createdAt: Date.now(),
      fired: false,
    };
    this.schedules.set(this.key(groupName, name), schedule);
    this.counters_.created += 1;
    this.save();
    this.arm();
    return { ScheduleArn: schedule.arn };
  }

  private find(name: string, groupName: string): StoredSchedule {
    const schedule = this.schedules.get(this.key(groupName, name));
    if (!schedule) {
      throw new AwsServiceError('ResourceNotFoundException', `Schedule ${name} does not exist.`, 404);
    }
    return schedule;
  }

  private get(name: string, groupName: string) {
    const schedule = this.find(name, groupName);
    return {
      Arn: schedule.arn,
      GroupName: schedule.groupName,
      Name: schedule.name,
      ScheduleExpression: schedule.expression,
      ...(schedule.timezone ? { ScheduleExpressionTimezone: schedule.timezone } : {}),
      ...(schedule.description ? { Description: schedule.description } : {}),
      State: schedule.state,
      CreationDate: schedule.createdAt / 1000,
      LastModificationDate: schedule.createdAt / 1000,
      Target: schedule.target,
      FlexibleTimeWindow: schedule.flexibleTimeWindow,
      ActionAfterCompletion: schedule.actionAfterCompletion,
    };
  }

  private delete(name: string, groupName: string): void {
    this.find(name, groupName);
    this.schedules.delete(this.key(groupName, name));
    this.counters_.deleted += 1;
    this.save();
    this.arm();
  }

  /** Sets one timer for the earliest pending schedule; schedules already due fire now. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.server) return;
    let next = Number.POSITIVE_INFINITY;
    for (const schedule of this.schedules.values()) {
      if (!schedule.fired && !this.firing.has(schedule) && schedule.state === 'ENABLED') {
        next = Math.min(next, schedule.fireAt);
      }
    }
    if (!Number.isFinite(next)) return;
    this.timer = setTimeout(
      () => void this.fireDue(),
      Math.min(MAX_TIMER_MS, Math.max(0, next - Date.now())),
    );
  }

  /**
   * Sends the target message of every due schedule, and only once it is durable marks the schedule fired:
   * a crash in between fires it again after the restart (at least once, as Scheduler promises).
   */
  private async fireDue(): Promise<void> {
    const now = Date.now();
    const due = [...this.schedules].filter(
      ([, schedule]) =>
        !schedule.fired &&
        !this.firing.has(schedule) &&
        schedule.state === 'ENABLED' &&
        schedule.fireAt <= now,
    );
    await Promise.all(
      due.map(async ([key, schedule]) => {
        this.firing.add(schedule);
        try {
          // EventBridge Scheduler sends Input as the SQS message body.
          await this.opts.sqs.enqueue(schedule.queueId, schedule.target.Input ?? '{}', {
            senderId: 'scheduler.amazonaws.com',
          });
          this.counters_.fired += 1;
        } catch (error) {
          this.log(`schedule ${key} could not send to ${schedule.queueId}: ${(error as Error).message}`);
          // Not stored (a failed disk write, or the stand-in is stopping): it stays due, tried again in 1 s
          // or after the restart. A refused message (AwsServiceError) would be refused again: it counts as fired.
          if (!(error instanceof AwsServiceError)) {
            setTimeout(() => {
              this.firing.delete(schedule);
              this.arm();
            }, 1000).unref();
            return;
          }
        }
        this.firing.delete(schedule);
        schedule.fired = true;
        // Deleted or replaced meanwhile: leave the newer state alone.
        if (schedule.actionAfterCompletion === 'DELETE' && this.schedules.get(key) === schedule) {
          this.schedules.delete(key);
        }
      }),
    );
    this.save();
    this.arm();
  }

  /** Answers to CreateSchedule / DeleteSchedule come after this durable write. */
  private save(): void {
    const dataDir = this.opts.dataDir;
    if (!dataDir) return;
    writeFileDurably(join(dataDir, SCHEDULES_FILE), JSON.stringify([...this.schedules.values()]));
  }

  private load(): void {
    const dataDir = this.opts.dataDir;
    if (!dataDir) return;
    let stored: StoredSchedule[];
    try {
      stored = JSON.parse(readFileSync(join(dataDir, SCHEDULES_FILE), 'utf8')) as StoredSchedule[];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new Error(`Cannot read ${join(dataDir, SCHEDULES_FILE)}: ${(error as Error).message}`);
    }
    for (const schedule of stored) this.schedules.set(this.key(schedule.groupName, schedule.name), schedule);
  }
}

const errorReply = (error: AwsServiceError): HttpReply => ({
  status: error.status,
  headers: { 'content-type': 'application/json', 'x-amzn-errortype': error.code, ...error.extraHeaders },
  body: JSON.stringify({ Message: error.message }),
});
