import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import type { QueueSpec, RecurringSchedule, ScheduleTarget, Worker } from '../../../../lib/wiring';
import { LocalLambda } from '../../../../local/lambda/local-lambda';
import { parseAtExpression } from '../../../../local/scheduler/at-expression';
import { LocalScheduler, type LocalSchedulerOptions } from '../../../../local/scheduler/local-scheduler';
import { LocalSqs } from '../../../../local/sqs/local-sqs';
import { rejection, waitUntil } from '../../../support/await';

const queues: QueueSpec[] = [
  { id: 'due', maxReceiveCount: 3, visibilityTimeoutSecs: 30, purpose: 'fixture' },
];
const targets: ScheduleTarget[] = [{ id: 'due-target', targetQueue: 'due', description: 'fixture' }];
const dueWorker: Worker = {
  id: 'due.worker',
  handler: 'test/fixture.ts',
  queue: 'due',
  batchSize: 1,
  maxBatchingWindowSecs: 0,
};
const ROLE = 'arn:aws:iam::000000000000:role/scheduler';

const stoppers: (() => Promise<void>)[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const stop of stoppers.splice(0).reverse()) await stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Arrival {
  readonly body: string;
  readonly at: number;
}

const start = async (options: Partial<Omit<LocalSchedulerOptions, 'sqs'>> = {}) => {
  const arrivals: Arrival[] = [];
  const sqs = new LocalSqs({ queues, log: () => {} });
  const lambda = new LocalLambda({
    sqs,
    workers: [dueWorker],
    busFunctions: [],
    invoke: async (_fn, event) => {
      for (const record of (event as SQSEvent).Records) arrivals.push({ body: record.body, at: Date.now() });
    },
    log: () => {},
  });
  await sqs.start();
  stoppers.push(() => sqs.stop());
  await lambda.start();
  stoppers.push(() => lambda.stop());
  const scheduler = new LocalScheduler({
    targets,
    recurring: [],
    sqs,
    invoke: async () => undefined,
    log: () => {},
    ...options,
  });
  await scheduler.start();
  const stop = () => scheduler.stop();
  stoppers.push(stop);
  const client = new SchedulerClient({
    endpoint: scheduler.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  return { sqs, scheduler, client, arrivals, stop };
};

/** `at()` for the first whole second at least `secondsAhead` from now, and that instant. */
const atAhead = (secondsAhead: number) => {
  const fireAt = Math.ceil((Date.now() + secondsAhead * 1000) / 1000) * 1000;
  return { expression: `at(${new Date(fireAt).toISOString().slice(0, 19)})`, fireAt };
};

const schedule = (
  sqs: LocalSqs,
  name: string,
  expression: string,
  overrides: Partial<CreateScheduleCommandInput> = {},
): CreateScheduleCommandInput => ({
  Name: name,
  GroupName: 'notify-test',
  ScheduleExpression: expression,
  FlexibleTimeWindow: { Mode: 'OFF' },
  ActionAfterCompletion: 'DELETE',
  Target: { Arn: sqs.queueArn('due'), RoleArn: ROLE, Input: JSON.stringify({ name }) },
  ...overrides,
});

describe('LocalScheduler one-time schedules (real @aws-sdk/client-scheduler)', () => {
  it('sends the Input to the target queue once, not before its time, then deletes itself', async () => {
    const { sqs, client, arrivals, scheduler } = await start();
    // 2 s and 3 s ahead at least: the creates must land before those seconds pass (an at() in the past is
    // refused), with room for a loaded machine's stall (1 s and 2 s left 2 s).
    const first = atAhead(2);
    const second = atAhead(3);
    const created = await client.send(new CreateScheduleCommand(schedule(sqs, 'first', first.expression)));
    expect(created.ScheduleArn).toBe('arn:aws:scheduler:us-east-1:000000000000:schedule/notify-test/first');
    await client.send(new CreateScheduleCommand(schedule(sqs, 'second', second.expression)));

    const got = await client.send(new GetScheduleCommand({ Name: 'first', GroupName: 'notify-test' }));
    expect(got).toMatchObject({
      Name: 'first',
      GroupName: 'notify-test',
      ScheduleExpression: first.expression,
      State: 'ENABLED',
      ActionAfterCompletion: 'DELETE',
      Target: { Arn: sqs.queueArn('due'), RoleArn: ROLE, Input: '{"name":"first"}' },
    });
    expect(got.CreationDate).toBeInstanceOf(Date);

    await waitUntil(() => arrivals.some((arrival) => arrival.body === '{"name":"second"}'));
    expect(arrivals.map((arrival) => arrival.body)).toEqual(['{"name":"first"}', '{"name":"second"}']);
    expect(arrivals[0]!.at).toBeGreaterThanOrEqual(first.fireAt);
    expect(arrivals[1]!.at).toBeGreaterThanOrEqual(second.fireAt);
    expect(scheduler.counters().fired).toBe(2);

    const gone = await rejection(
      client.send(new GetScheduleCommand({ Name: 'first', GroupName: 'notify-test' })),
    );
    expect(gone.name).toBe('ResourceNotFoundException');
  });

  it('answers ConflictException for a duplicate name in the same group only', async () => {
    const { sqs, client } = await start();
    const { expression } = atAhead(3600);
    await client.send(new CreateScheduleCommand(schedule(sqs, 'dup', expression)));
    const conflict = await rejection(
      client.send(new CreateScheduleCommand(schedule(sqs, 'dup', expression))),
    );
    expect(conflict.name).toBe('ConflictException');
    expect(conflict.$metadata?.httpStatusCode).toBe(409);
    await client.send(new CreateScheduleCommand(schedule(sqs, 'dup', expression, { GroupName: 'other' })));
  });

  it('a deleted schedule never fires; deleting an unknown one is ResourceNotFoundException', async () => {
    const { sqs, client, scheduler } = await start();
    const soon = atAhead(1);
    const later = atAhead(2);
    await client.send(new CreateScheduleCommand(schedule(sqs, 'cancelled', soon.expression)));
    await client.send(new CreateScheduleCommand(schedule(sqs, 'kept', later.expression)));
    await client.send(new DeleteScheduleCommand({ Name: 'cancelled', GroupName: 'notify-test' }));
    const missing = await rejection(
      client.send(new DeleteScheduleCommand({ Name: 'cancelled', GroupName: 'notify-test' })),
    );
    expect(missing.name).toBe('ResourceNotFoundException');
    expect(missing.$metadata?.httpStatusCode).toBe(404);
    await waitUntil(() => scheduler.counters().fired === 1);
    expect(sqs.counters().due?.sent).toBe(1);
  });

  it('validates expressions, targets and the flexible time window', async () => {
    const { sqs, client } = await start();
    const cases: [Partial<CreateScheduleCommandInput>, string][] = [
      [{ ScheduleExpression: 'at(2030-02-30T10:00:00)' }, 'ValidationException'],
      [{ ScheduleExpression: 'at(2030-01-01 10:00:00)' }, 'ValidationException'],
      [{ ScheduleExpression: 'at(2001-01-01T00:00:00)' }, 'ValidationException'],
      [{ Target: { Arn: 'arn:aws:sqs:us-east-1:000000000000:nope', RoleArn: ROLE } }, 'ValidationException'],
      [{ FlexibleTimeWindow: { Mode: 'SOMETIMES' as 'OFF' } }, 'ValidationException'],
    ];
    const { expression } = atAhead(3600);
    for (const [overrides, name] of cases) {
      const error = await rejection(
        client.send(new CreateScheduleCommand(schedule(sqs, 'bad', expression, overrides))),
      );
      expect(error.name, JSON.stringify(overrides)).toBe(name);
    }
  });

  it('fails loudly for rate() and cron() expressions and for operations it does not implement', async () => {
    const { sqs, client } = await start();
    const rate = await rejection(
      client.send(new CreateScheduleCommand(schedule(sqs, 'r', 'rate(5 minutes)'))),
    );
    expect(rate.name).toBe('UnsupportedOperation');
    expect(rate.message).toContain('rate');
    const cron = await rejection(
      client.send(new CreateScheduleCommand(schedule(sqs, 'c', 'cron(0 12 * * ? *)'))),
    );
    expect(cron.message).toContain('cron');
    const update = await rejection(
      client.send(new UpdateScheduleCommand(schedule(sqs, 'u', atAhead(3600).expression))),
    );
    expect(update.name).toBe('UnsupportedOperation');
    expect(update.message).toBe('LocalScheduler does not implement UpdateSchedule');
    const list = await rejection(client.send(new ListSchedulesCommand({})));
    expect(list.name).toBe('UnsupportedOperation');
    expect(list.message).toContain('GET /schedules');
  });

  it('keeps schedules in dataDir and fires a schedule that fell due while it was stopped at start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-scheduler-'));
    dirs.push(dataDir);
    const first = await start({ dataDir });
    const due = atAhead(1);
    await first.client.send(new CreateScheduleCommand(schedule(first.sqs, 'survivor', due.expression)));
    await first.client.send(
      new CreateScheduleCommand(schedule(first.sqs, 'future', atAhead(3600).expression)),
    );
    for (const stop of stoppers.splice(0).reverse()) await stop();
    expect(first.arrivals).toEqual([]);
    await waitUntil(() => Date.now() > due.fireAt);

    const second = await start({ dataDir });
    await waitUntil(() => second.arrivals.length > 0);
    expect(second.arrivals.map((arrival) => arrival.body)).toEqual(['{"name":"survivor"}']);
    const future = await second.client.send(
      new GetScheduleCommand({ Name: 'future', GroupName: 'notify-test' }),
    );
    expect(future.State).toBe('ENABLED');
  });
});

describe('LocalScheduler recurring schedules', () => {
  it('invokes the declared function every (scaled) period with a scheduled event', async () => {
    const cleanup: RecurringSchedule = {
      id: 'cleanup',
      handler: 'test/fixture.ts',
      everyMinutes: 5,
      description: 'fixture',
    };
    const invocations: { id: string; event: Record<string, unknown> }[] = [];
    await start({
      recurring: [cleanup],
      // 5 minutes × 0.0002 = 60 ms.
      timeScale: 0.0002,
      invoke: async (fn, event) => {
        invocations.push({ id: fn.id, event: event as Record<string, unknown> });
      },
    });
    await waitUntil(() => invocations.length >= 2);
    expect(invocations[0]?.id).toBe('cleanup');
    expect(invocations[0]?.event).toMatchObject({
      version: '0',
      'detail-type': 'Scheduled Event',
      source: 'aws.scheduler',
      resources: ['arn:aws:scheduler:us-east-1:000000000000:schedule/default/cleanup'],
      detail: {},
    });
  });
});

describe('at() expressions', () => {
  it.each([
    ['at(2030-06-01T12:00:00)', undefined, '2030-06-01T12:00:00.000Z'],
    ['at(2030-06-01T12:00:00)', 'UTC', '2030-06-01T12:00:00.000Z'],
    ['at(2030-06-01T12:00:00)', 'Europe/Paris', '2030-06-01T10:00:00.000Z'],
    ['at(2030-01-15T12:00:00)', 'Europe/Paris', '2030-01-15T11:00:00.000Z'],
    ['at(2030-01-15T07:30:00)', 'America/New_York', '2030-01-15T12:30:00.000Z'],
    ['at(2030-12-31T23:59:59)', 'Asia/Kolkata', '2030-12-31T18:29:59.000Z'],
  ])('%s in %s is %s', (expression, timeZone, expected) => {
    expect(new Date(parseAtExpression(expression, timeZone)).toISOString()).toBe(expected);
  });

  it('rejects an unknown time zone', () => {
    expect(() => parseAtExpression('at(2030-01-01T00:00:00)', 'Mars/Olympus')).toThrow(
      /ScheduleExpressionTimezone/,
    );
  });
});
