import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  DescribeReplayCommand,
  EventBridgeClient,
  ListRulesCommand,
  PutEventsCommand,
  type PutEventsRequestEntry,
  StartReplayCommand,
} from '@aws-sdk/client-eventbridge';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { type BusRule, type QueueSpec, wiring } from '../../../../lib/wiring';
import {
  LocalEventBridge,
  type LocalEventBridgeOptions,
  putEventsEntrySize,
  STATE_FILE,
} from '../../../../local/eventbridge/local-eventbridge';
import { LocalLambda } from '../../../../local/lambda/local-lambda';
import { LocalScheduler } from '../../../../local/scheduler/local-scheduler';
import { LocalSqs } from '../../../../local/sqs/local-sqs';
import { rejection } from '../../../support/await';

const BUS = 'notify-test';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

const queues: QueueSpec[] = [
  { id: 'orders', maxReceiveCount: 3, visibilityTimeoutSecs: 30, purpose: 'fixture' },
  { id: 'audit', maxReceiveCount: 3, visibilityTimeoutSecs: 30, purpose: 'fixture' },
];

const rules: BusRule[] = [
  {
    id: 'orders-placed',
    description: 'order events',
    pattern: { source: ['com.example.orders'], 'detail-type': ['Order Placed'] },
    targetQueue: 'orders',
  },
  {
    id: 'big-amounts',
    description: 'large orders are audited',
    pattern: { detail: { amount: [{ numeric: ['>', 100] }] } },
    targetQueue: 'audit',
  },
];

const stoppers: (() => Promise<void>)[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const stop of stoppers.splice(0).reverse()) await stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'local-eventbridge-'));
  dirs.push(dir);
  return dir;
};

const start = async (
  options: Partial<Omit<LocalEventBridgeOptions, 'sqs'>> & { sqsDataDir?: string } = {},
) => {
  const sqs = new LocalSqs({ queues, log: () => {} });
  await sqs.start();
  stoppers.push(() => sqs.stop());
  const bus = new LocalEventBridge({ busName: BUS, rules, sqs, log: () => {}, ...options });
  await bus.start();
  stoppers.push(() => bus.stop());
  const events = new EventBridgeClient({
    endpoint: bus.endpoint,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
  });
  const sqsClient = new SQSClient({
    endpoint: sqs.endpoint,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
  });
  /** Bodies currently on a queue, parsed (received with a zero visibility timeout so they stay). */
  const bodies = async (queueId: string) => {
    const result = await sqsClient.send(
      new ReceiveMessageCommand({
        QueueUrl: sqs.queueUrl(queueId),
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
      }),
    );
    return (result.Messages ?? []).map(
      (message) => JSON.parse(message.Body ?? 'null') as Record<string, unknown>,
    );
  };
  return { sqs, bus, events, bodies };
};

const entry = (overrides: Partial<PutEventsRequestEntry> = {}): PutEventsRequestEntry => ({
  EventBusName: BUS,
  Source: 'com.example.orders',
  DetailType: 'Order Placed',
  Detail: JSON.stringify({ orderId: 'o-1', amount: 20 }),
  ...overrides,
});

describe('LocalEventBridge PutEvents (real @aws-sdk/client-eventbridge)', () => {
  it('delivers a matching event to the rule target queue as the EventBridge envelope', async () => {
    const { events, bodies } = await start();
    const result = await events.send(
      new PutEventsCommand({ Entries: [entry({ Resources: ['arn:aws:s3:::bucket'] })] }),
    );
    expect(result.FailedEntryCount).toBe(0);
    const eventId = result.Entries?.[0]?.EventId;
    expect(eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await bodies('orders')).toEqual([
      {
        version: '0',
        id: eventId,
        'detail-type': 'Order Placed',
        source: 'com.example.orders',
        account: '000000000000',
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
        region: 'us-east-1',
        resources: ['arn:aws:s3:::bucket'],
        detail: { orderId: 'o-1', amount: 20 },
      },
    ]);
    expect(await bodies('audit')).toEqual([]);
  });

  it('delivers to every rule that matches and to none when no rule matches', async () => {
    const { events, bodies } = await start();
    await events.send(
      new PutEventsCommand({
        Entries: [
          entry({ Detail: JSON.stringify({ amount: 500 }) }),
          entry({ Source: 'com.example.other', Detail: JSON.stringify({ amount: 1 }) }),
        ],
      }),
    );
    expect((await bodies('orders')).map((event) => event.detail)).toEqual([{ amount: 500 }]);
    expect((await bodies('audit')).map((event) => event.detail)).toEqual([{ amount: 500 }]);
  });

  it('uses the entry Time for the event time', async () => {
    const { events, bodies } = await start();
    await events.send(
      new PutEventsCommand({ Entries: [entry({ Time: new Date('2026-03-04T05:06:07.890Z') })] }),
    );
    expect((await bodies('orders'))[0]?.time).toBe('2026-03-04T05:06:07Z');
  });

  it('reports per-entry failures and still accepts the valid entries', async () => {
    const { events, bodies } = await start();
    const result = await events.send(
      new PutEventsCommand({
        Entries: [
          entry({ DetailType: undefined }),
          entry({ Detail: '{not json' }),
          entry({ EventBusName: 'someone-elses-bus' }),
          entry({ EventBusName: undefined }),
          entry(),
        ],
      }),
    );
    expect(result.FailedEntryCount).toBe(4);
    expect(result.Entries?.map((item) => item.ErrorCode ?? 'ok')).toEqual([
      'InvalidArgument',
      'MalformedDetail',
      'ResourceNotFoundException',
      'ResourceNotFoundException',
      'ok',
    ]);
    expect(result.Entries?.[0]?.ErrorMessage).toContain('DetailType');
    expect(await bodies('orders')).toHaveLength(1);
  });

  it('rejects more than 10 entries', async () => {
    const { events } = await start();
    const error = await rejection(
      events.send(new PutEventsCommand({ Entries: Array.from({ length: 11 }, () => entry()) })),
    );
    expect(error.name).toBe('ValidationException');
  });

  it('counts entry sizes as AWS documents and rejects a request over 1 MiB', async () => {
    expect(
      putEventsEntrySize({ Time: 1, Source: 'ab', DetailType: 'cd', Detail: '{"é":1}', Resources: ['xyz'] }),
    ).toBe(14 + 2 + 2 + 8 + 3);
    const { events } = await start();
    // Source (18) + DetailType (12) + Detail: exactly 1 048 576 bytes in all is accepted, one more is not.
    const detailOf = (bytes: number) => JSON.stringify({ pad: 'x'.repeat(bytes - 10) });
    const fits = detailOf(1_048_576 - 18 - 12);
    expect(putEventsEntrySize(entry({ Detail: fits }) as Record<string, unknown>)).toBe(1_048_576);
    const accepted = await events.send(new PutEventsCommand({ Entries: [entry({ Detail: fits })] }));
    expect(accepted.FailedEntryCount).toBe(0);
    const error = await rejection(
      events.send(new PutEventsCommand({ Entries: [entry({ Detail: detailOf(1_048_576 - 18 - 12 + 1) })] })),
    );
    expect(error.name).toBe('ValidationException');
    const split = await rejection(
      events.send(
        new PutEventsCommand({
          Entries: [entry({ Detail: detailOf(540_000) }), entry({ Detail: detailOf(540_000) })],
        }),
      ),
    );
    expect(split.name).toBe('ValidationException');
  });

  it('fails loudly, naming the operation, for an operation it does not implement', async () => {
    const { events } = await start();
    const error = await rejection(events.send(new ListRulesCommand({})));
    expect(error.name).toBe('UnsupportedOperation');
    expect(error.message).toBe('LocalEventBridge does not implement ListRules');
  });

  it('refuses a declared rule whose pattern is invalid or whose target queue is undeclared', async () => {
    const sqs = new LocalSqs({ queues });
    expect(
      () =>
        new LocalEventBridge({
          busName: BUS,
          sqs,
          rules: [{ ...rules[0]!, pattern: { source: [{ contains: 'x' }] } }],
        }),
    ).toThrow(/orders-placed.*unsupported operator contains/);
    expect(
      () => new LocalEventBridge({ busName: BUS, sqs, rules: [{ ...rules[0]!, targetQueue: 'nope' }] }),
    ).toThrow(/nope/);
  });
});

describe('the service declaration', () => {
  it('is accepted by the stand-ins: every bus rule pattern compiles and every target queue exists', () => {
    const invoke = async () => undefined;
    const sqs = new LocalSqs({ queues: wiring.queues });
    const lambda = new LocalLambda({
      sqs,
      workers: wiring.workers,
      busFunctions: wiring.busFunctions ?? [],
      invoke,
    });
    expect(() => new LocalEventBridge({ busName: BUS, rules: wiring.busRules, sqs, lambda })).not.toThrow();
    expect(
      () =>
        new LocalScheduler({
          targets: wiring.scheduleTargets,
          recurring: wiring.recurringSchedules,
          sqs,
          invoke,
        }),
    ).not.toThrow();
  });
});

describe('LocalEventBridge archive and replay', () => {
  const archivePattern = { detail: { archive: [true] } };

  it('archives matching events and replays them to the rules with replay-name set', async () => {
    const { bus, events, bodies } = await start({ archivePattern });
    await events.send(
      new PutEventsCommand({
        Entries: [
          entry({ Detail: JSON.stringify({ orderId: 'kept', archive: true }) }),
          entry({ Detail: JSON.stringify({ orderId: 'not-kept', archive: false }) }),
        ],
      }),
    );
    expect(bus.archivedEvents().map((event) => (event.detail as { orderId: string }).orderId)).toEqual([
      'kept',
    ]);

    const replayed = await bus.replay({ name: 'again' });
    expect(replayed).toBe(1);
    const delivered = await bodies('orders');
    expect(
      delivered.map((event) => [(event.detail as { orderId: string }).orderId, event['replay-name']]),
    ).toEqual([
      ['kept', undefined],
      ['not-kept', undefined],
      ['kept', 'again'],
    ]);
    // Replayed events are delivered, not archived a second time.
    expect(bus.archivedEvents()).toHaveLength(1);
  });

  it('replays only the events whose time lies in the window', async () => {
    const { bus, events } = await start();
    await events.send(
      new PutEventsCommand({
        Entries: [
          entry({ Time: new Date('2026-01-01T00:00:00Z') }),
          entry({ Time: new Date('2026-02-01T00:00:00Z') }),
          entry({ Time: new Date('2026-03-01T00:00:00Z') }),
        ],
      }),
    );
    expect(
      await bus.replay({ from: new Date('2026-01-15T00:00:00Z'), to: new Date('2026-02-15T00:00:00Z') }),
    ).toBe(1);
    expect(await bus.replay({ from: new Date('2026-01-01T00:00:00Z') })).toBe(3);
  });

  it('implements StartReplay and DescribeReplay for the bus archive', async () => {
    const { bus, events } = await start();
    await events.send(new PutEventsCommand({ Entries: [entry({ Time: new Date('2026-02-01T00:00:00Z') })] }));
    const started = await events.send(
      new StartReplayCommand({
        ReplayName: 'february',
        EventSourceArn: bus.archiveArn,
        Destination: { Arn: bus.busArn },
        EventStartTime: new Date('2026-02-01T00:00:00Z'),
        EventEndTime: new Date('2026-03-01T00:00:00Z'),
      }),
    );
    expect(started).toMatchObject({ State: 'COMPLETED', StateReason: 'Replayed 1 event(s)' });
    const described = await events.send(new DescribeReplayCommand({ ReplayName: 'february' }));
    expect(described.State).toBe('COMPLETED');
    expect(described.EventStartTime?.toISOString()).toBe('2026-02-01T00:00:00.000Z');
    const unknownArchive = await rejection(
      events.send(
        new StartReplayCommand({
          ReplayName: 'other',
          EventSourceArn: 'arn:aws:events:us-east-1:000000000000:archive/nope',
          Destination: { Arn: bus.busArn },
          EventStartTime: new Date(0),
          EventEndTime: new Date(),
        }),
      ),
    );
    expect(unknownArchive.name).toBe('ResourceNotFoundException');
  });

  it('keeps the archive in dataDir across restarts and publishes its endpoint while running', async () => {
    const dataDir = tempDir();
    const first = await start({ dataDir });
    expect(existsSync(join(dataDir, STATE_FILE))).toBe(true);
    await first.events.send(new PutEventsCommand({ Entries: [entry()] }));
    for (const stop of stoppers.splice(0).reverse()) await stop();
    expect(existsSync(join(dataDir, STATE_FILE))).toBe(false);

    const second = await start({ dataDir });
    expect(second.bus.archivedEvents()).toHaveLength(1);
    expect(await second.bus.replay({})).toBe(1);
    expect(await second.bodies('orders')).toHaveLength(1);
  });

  it('npm run replay reaches the running stand-in through the data folder', async () => {
    const dataDir = tempDir();
    const { events, bodies } = await start({ dataDir: join(dataDir, 'eventbridge') });
    await events.send(new PutEventsCommand({ Entries: [entry()] }));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'local/cli/replay.ts', '--data', dataDir, '--name', 'from-cli'],
      { cwd: join(import.meta.dirname, '../../../..') },
    );
    expect(stdout).toBe('replay from-cli: COMPLETED (Replayed 1 event(s))\n');
    expect((await bodies('orders')).map((event) => event['replay-name'])).toEqual([undefined, 'from-cli']);
  });

  it('npm run replay explains in one line when no runtime uses the folder', async () => {
    const dataDir = tempDir();
    const error = await rejection(
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'local/cli/replay.ts', '--data', dataDir], {
        cwd: join(import.meta.dirname, '../../../..'),
      }),
    );
    expect((error as Error & { stderr: string }).stderr).toBe(
      `notify: no running runtime uses ${dataDir}: start it with \`npm start -- --data ${dataDir}\` first\n`,
    );
  });
});
