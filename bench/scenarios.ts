import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { shardNames } from '../lambdas/domain/realtime/config';
import { SWEEP_OFFSETS_SECS, shardsToSweep } from '../lambdas/domain/realtime/sweep-schedule';
import { envNames, wiring } from '../lib/wiring';
import { type Usage, usageBetween } from '../local/metering';
import { addUnits, dollarsOf, type ServiceDollars, type ServiceUnits, scaleUnits, unitsOf } from './cost';
import { type MeteredRuntime, machineLoad } from './harness';
import { BenchClient } from './ws-client';

export interface ScenarioResult {
  readonly id: string;
  readonly title: string;
  /** What one "operation" is (the dollars are per million of these). */
  readonly operation: string;
  /** How many operations were measured (after a warm-up, so no cold start is in the figures). */
  readonly measured: number;
  /** Billable units per operation, by service. */
  readonly unitsPerOperation: ServiceUnits;
  readonly dollarsPerMillion: ServiceDollars;
  /** Raw usage of the measured runs (per function, per table, per queue), for results.json. */
  readonly usage?: Usage;
  readonly notes?: readonly string[];
}

export interface SkippedScenario {
  readonly id: string;
  readonly title: string;
  readonly skipped: string;
}

/** Units per operation; the minutes of connections that were merely open during the run are not the operation's. */
export const perOperation = (usage: Usage, operations: number): ServiceUnits => ({
  ...scaleUnits(unitsOf(usage), 1 / operations),
  wsConnectionMinutes: 0,
});

export const result = (
  id: string,
  title: string,
  operation: string,
  measured: number,
  units: ServiceUnits,
  usage?: Usage,
  notes?: string[],
): ScenarioResult => ({
  id,
  title,
  operation,
  measured,
  unitsPerOperation: units,
  dollarsPerMillion: scaleDollars(dollarsOf(units), 1e6),
  ...(usage ? { usage } : {}),
  ...(notes ? { notes } : {}),
});

const scaleDollars = (dollars: ServiceDollars, factor: number): ServiceDollars =>
  Object.fromEntries(Object.entries(dollars).map(([key, value]) => [key, value * factor])) as ServiceDollars;

export const expectStatus = async (response: Response, status: number, what: string) => {
  if (response.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${response.status} ${await response.text()}`);
  }
  return response;
};

export const sendNotification = async (
  bench: MeteredRuntime,
  serviceToken: string,
  recipients: readonly string[],
  channels: readonly string[] = ['in_app', 'toast'],
  extra: Record<string, unknown> = {},
): Promise<string> => {
  const response = await bench.api('/notifications', serviceToken, {
    method: 'POST',
    body: JSON.stringify({
      event_type: 'bench.ping',
      title: 'Benchmark',
      body: 'A notification of typical size for the benchmark.',
      data: { order_id: 'o-123456', amount: 42 },
      channels,
      recipient_ids: recipients,
      ...extra,
    }),
  });
  await expectStatus(response, 202, 'POST /notifications');
  return ((await response.json()) as { id: string }).id;
};

/** (a) One notification, in_app + toast, to one recipient with one open connection. */
export const oneConnectedRecipient = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
): Promise<ScenarioResult> => {
  const user = 'bench-a';
  const client = await BenchClient.open(bench.runtime.wsUrl, await bench.runtime.mintUserToken(user));
  const once = async () => {
    const id = await sendNotification(bench, serviceToken, [user]);
    await client.waitForNotification(id);
  };
  await once();
  const usage = await bench.measure(async () => {
    for (let run = 0; run < repetitions; run++) await once();
  });
  await client.close();
  return result(
    'a',
    'one notification, one connected recipient (in_app+toast)',
    'notification',
    repetitions,
    perOperation(usage, repetitions),
    usage,
  );
};

/** Read units of the `preferences` table in a measured usage (its local name ends with the logical id). */
const preferenceReadUnits = (usage: Usage): number =>
  Object.entries(usage.dynamoDb)
    .filter(([table]) => table.endsWith('preferences'))
    .reduce((sum, [, table]) => sum + table.readUnits, 0);

/**
 * (b) One notification, in_app + toast, to 1,000 recipients with no open connection; a tenth of them have
 * preferences (toast off for `bench.*`), so the fan-out's preference reads are measured with some items found.
 */
export const thousandRecipients = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
): Promise<ScenarioResult> => {
  const recipients = Array.from({ length: 1000 }, (_, index) => `bench-b-${index}`);
  for (const userId of recipients.filter((_, index) => index % 10 === 0)) {
    const response = await bench.api(`/preferences?user_id=${userId}`, serviceToken, {
      method: 'PUT',
      body: JSON.stringify({ rules: [{ event_type: 'bench.*', channels: { toast: false } }] }),
    });
    await expectStatus(response, 200, 'PUT /preferences');
  }
  await sendNotification(bench, serviceToken, recipients);
  const usage = await bench.measure(async () => {
    for (let run = 0; run < repetitions; run++) await sendNotification(bench, serviceToken, recipients);
  });
  const perRecipient = preferenceReadUnits(usage) / (repetitions * recipients.length);
  return result(
    'b',
    'one notification to 1,000 recipients, none connected (in_app+toast)',
    'notification',
    repetitions,
    perOperation(usage, repetitions),
    usage,
    [
      `preferences table read: ${perRecipient.toFixed(3)} RRU per recipient (100 of the 1,000 have preferences): 0.5 per recipient in the fan-out (one BatchGetItem key each; budget 0.5) plus 1 RRU per notification for the defaults read at creation`,
    ],
  );
};

/** The sweeper's scheduled event, as EventBridge Scheduler sends it. */
const scheduledEvent = () => ({
  version: '0',
  id: crypto.randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.scheduler',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: [],
  detail: {},
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The heartbeat interval the service announces (and clients keep), in real time. */
const HEARTBEAT_MS = 20_000;

/**
 * Heartbeats from these clients, each every 20 s, their phases spread evenly over the interval (as many
 * independent clients' are): what the sweep's GetConnections see as LastActiveAt.
 */
const keepBeating = (clients: readonly BenchClient[]): { pause(): void; resume(): void; stop(): void } => {
  let next = 0;
  let paused = false;
  const timer =
    clients.length === 0
      ? undefined
      : setInterval(() => {
          if (paused) return;
          clients[next % clients.length]?.send({ type: 'heartbeat' });
          next += 1;
        }, HEARTBEAT_MS / clients.length);
  return {
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
    },
    stop: () => clearInterval(timer),
  };
};

/**
 * One minute of the deployed sweeping, in real time: the `ws.sweeper` run starts each due shard's sweep, and
 * each sweep queues the shard's next one (+20 s, +40 s) with what it learnt. The bench's time scale stretches
 * those delays past its run, so it waits them out itself and then releases the delayed messages. `clients`
 * heartbeat all along with spread phases (started 20 s before the minute; paused while a sweep runs), as live clients do; their
 * heartbeat messages are not the sweep's and are left out (a sweep sends nothing to a live connection: a
 * client closed meanwhile fails the measurement).
 */
const sweepMinute = async (bench: MeteredRuntime, clients: readonly BenchClient[] = []): Promise<Usage> => {
  const planner = wiring.recurringSchedules.find((schedule) => schedule.id === 'ws.sweeper');
  if (!planner) throw new Error('no ws.sweeper in the wiring');
  const { sqs } = bench.runtime.standIns;
  const sweepsDone = async () => {
    for (;;) {
      const stats = sqs.stats('wsSweep');
      if (stats.ApproximateNumberOfMessages + stats.ApproximateNumberOfMessagesNotVisible === 0) return;
      await sleep(20);
    }
  };
  await bench.settle();
  const beats = keepBeating(clients);
  let usage: Usage;
  try {
    if (clients.length > 0) await sleep(HEARTBEAT_MS);
    const before = bench.meter.snapshot();
    const startedAt = Date.now();
    // While a sweep runs the heartbeats pause (a second or so): here they share one process with the "Lambda"
    // functions, whose measured time would otherwise include the gateway's work for them.
    beats.pause();
    await bench.runtime.invoke({ ...planner, id: planner.id }, scheduledEvent());
    for (const offset of SWEEP_OFFSETS_SECS.slice(1)) {
      await sweepsDone();
      beats.resume();
      // Without clients (warming up, an idle deployment) nothing depends on the wait.
      if (clients.length > 0) await sleep(startedAt + offset * 1000 - Date.now());
      beats.pause();
      sqs.releaseDelayed('wsSweep');
    }
    await sweepsDone();
    beats.stop();
    await bench.settle();
    usage = usageBetween(before, bench.meter.snapshot());
  } finally {
    beats.stop();
  }
  const closed = clients.filter((client) => client.socket.readyState !== client.socket.OPEN).length;
  if (closed > 0) throw new Error(`${closed} heartbeating bench clients were closed during the sweep minute`);
  return { ...usage, wsMessagesIn: 0, wsMessagesOut: 0, wsConnectionMinutes: 0 };
};

/** A sweep minute's units, with the schedule's own invocation of the planner (EventBridge Scheduler). */
const minuteUnits = (usage: Usage): ServiceUnits => ({ ...unitsOf(usage), schedulerInvocations: 1 });

/**
 * Puts every open connection past its `check_at`, as it is at each sweep once the idle timeout since it
 * connected has passed (45 s into its life on AWS): the sweep then looks at each one. Done before a measurement
 * starts, so none of it is counted.
 */
const makeEveryConnectionDue = async (bench: MeteredRuntime): Promise<void> => {
  const client = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: bench.runtime.env.AWS_ENDPOINT_URL_DYNAMODB, region: 'us-east-1' }),
  );
  try {
    const tableName = bench.runtime.env[envNames.tableName('wsConnections')];
    const { Items = [] } = await client.send(
      new ScanCommand({ TableName: tableName, ProjectionExpression: 'connection_id' }),
    );
    for (const item of Items) {
      await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { connection_id: item.connection_id },
          UpdateExpression: 'SET check_at = :past',
          ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
        }),
      );
    }
  } finally {
    client.destroy();
  }
};

/**
 * (c) One client connected for an hour with a heartbeat every 20 s. An hour is not waited for: the connect,
 * the heartbeats, a minute of sweeping per connection and the disconnect are measured, and the hour is their
 * sum: connect + 180 heartbeats + 60 connection-minutes + 60 sweep minutes' share + disconnect.
 */
export const connectedHour = async (
  bench: MeteredRuntime,
  heartbeats: number,
  extraConnections: number,
): Promise<{
  scenario: ScenarioResult;
  sweeper: { perRunFixed: ServiceUnits; perRunAllShards: ServiceUnits; perConnection: ServiceUnits };
}> => {
  const token = await bench.runtime.mintUserToken('bench-c');
  // Warm every function on the path first, so no init is in the figures.
  const warm = await BenchClient.open(bench.runtime.wsUrl, token);
  warm.send({ type: 'heartbeat' });
  await warm.next((frame) => frame.type === 'heartbeat.ack');
  await sweepMinute(bench);
  await warm.close();
  await bench.settle();
  const idleMinute = minuteUnits(await sweepMinute(bench));
  const loadBefore = machineLoad().loadAverage1m;

  let client: BenchClient | undefined;
  const connect = await bench.measure(async () => {
    client = await BenchClient.open(bench.runtime.wsUrl, token);
  });
  const open = client as unknown as BenchClient;
  const beat = await bench.measure(async () => {
    for (let index = 0; index < heartbeats; index++) {
      open.send({ type: 'heartbeat' });
      await open.next((frame) => frame.type === 'heartbeat.ack');
    }
  });
  const others: BenchClient[] = [];
  const openOthers = async (count: number) => {
    for (let index = 0; index < count; index++) {
      const user = await bench.runtime.mintUserToken(`bench-c-${others.length}`);
      others.push(await BenchClient.open(bench.runtime.wsUrl, user));
    }
    // Recently active, as heartbeating clients are (opening many may take longer than the idle timeout here).
    for (const other of [open, ...others]) {
      other.send({ type: 'heartbeat' });
      await other.next((frame) => frame.type === 'heartbeat.ack');
    }
    await makeEveryConnectionDue(bench);
  };
  // Baseline: a connection in every shard, so that a sweep's per-shard work (an invocation and its SQS messages
  // per shard) is in the fixed part, as at scale, and the per-connection share is the checks alone.
  await openOthers(0);
  while ((await shardsToSweep()).length < shardNames().length) await openOthers(8);
  const baseConnections = 1 + others.length;
  const usageBase = await sweepMinute(bench, [open, ...others]);
  await openOthers(extraConnections);
  const usageMany = await sweepMinute(bench, [open, ...others]);
  const loadAfter = machineLoad().loadAverage1m;
  const [minuteBase, minuteMany] = [minuteUnits(usageBase), minuteUnits(usageMany)];
  // The client's own disconnect first: the others' `$disconnect` runs must not fall into its measurement.
  const disconnect = await bench.measure(() => open.close());
  await Promise.all(others.map((other) => other.close()));
  await bench.settle(120_000);

  const noMinutes = (units: ServiceUnits): ServiceUnits => ({ ...units, wsConnectionMinutes: 0 });
  // Timing noise can make the difference of two durations negative: a connection never makes a sweep cheaper.
  const atLeastZero = (units: ServiceUnits): ServiceUnits =>
    Object.fromEntries(
      Object.entries(units).map(([key, value]) => [key, Math.max(0, value)]),
    ) as unknown as ServiceUnits;
  const perConnection = atLeastZero(
    scaleUnits(addUnits(minuteMany, scaleUnits(minuteBase, -1)), 1 / extraConnections),
  );
  // A minute of an idle deployment (the planner finds nothing due) and of one with every shard busy.
  const perRunFixed = idleMinute;
  const perRunAllShards = atLeastZero(addUnits(minuteBase, scaleUnits(perConnection, -baseConnections)));
  const perHeartbeat = scaleUnits(noMinutes(unitsOf(beat)), 1 / heartbeats);
  // Load-independent figures beside the GB-s: how many checks, and what each invocation took here.
  const checksPerHour = ((usageMany.connectionChecks - usageBase.connectionChecks) / extraConnections) * 60;
  const sweepShard = usageMany.lambda['ws.sweepShard'];
  const msPerCheck = sweepShard ? sweepShard.durationMs / Math.max(1, usageMany.connectionChecks) : 0;
  const msPerCall = [connect, disconnect]
    .flatMap((usage) => Object.entries(usage.lambda))
    .map(([id, fn]) => `${id} ${(fn.durationMs / fn.invocations).toFixed(1)} ms`)
    .join(', ');
  let hour = addUnits(noMinutes(unitsOf(connect)), noMinutes(unitsOf(disconnect)));
  hour = addUnits(hour, scaleUnits(perHeartbeat, 180));
  hour = addUnits(hour, scaleUnits(perConnection, 60));
  hour = { ...hour, wsConnectionMinutes: 60 };
  const scenario = result(
    'c',
    'one client connected for an hour, heartbeat every 20 s',
    'connection-hour',
    heartbeats,
    hour,
    undefined,
    [
      `measured: connect, ${heartbeats} heartbeats, a minute of sweeps (${SWEEP_OFFSETS_SECS.length} sweeps of the shards holding a due connection, of ${shardNames().length}) with none, ${baseConnections} and ${baseConnections + extraConnections} connections, disconnect`,
      'hour = connect + 180 × heartbeat + 60 connection-minutes + 60 × sweep minute share per connection + disconnect',
      `per heartbeat: ${perHeartbeat.wsMessages.toFixed(2)} messages, ${perHeartbeat.lambdaInvocations.toFixed(2)} invocations, ${perHeartbeat.dynamoDbRequests.toFixed(2)} DynamoDB requests`,
      `silence timers per connection-hour: $${(dollarsOf(scaleUnits(perConnection, 60)).total * 1e6).toFixed(2)} per million (measured with ${extraConnections} connections more than a baseline of ${baseConnections}, one or more in each shard)`,
      `sweep fixed cost a month: $${(dollarsOf(perRunFixed).total * 60 * 730).toFixed(2)} idle (nothing due), $${(dollarsOf(perRunAllShards).total * 60 * 730).toFixed(2)} with a connection in every one of the ${shardNames().length} shards`,
      `GetConnection checks per connection-hour: ${checksPerHour.toFixed(0)} (3 sweeps a minute would be 180); ws.sweepShard ${msPerCheck.toFixed(2)} ms of invocation per check (128 MB), ${usageMany.connectionChecks} checks in the minute with ${baseConnections + extraConnections} connections`,
      `per call: ${msPerCall}; load average (1 min) ${loadBefore.toFixed(1)} before the measurements, ${loadAfter.toFixed(1)} after, on ${machineLoad().cores} cores: Lambda durations measured here grow with it`,
    ],
  );
  return { scenario, sweeper: { perRunFixed, perRunAllShards, perConnection } };
};

/** (e) One feed page (default limit 20) plus the unread count, for a user with 30 notifications. */
export const feedPage = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
): Promise<ScenarioResult> => {
  const user = 'bench-e';
  for (let index = 0; index < 30; index++) await sendNotification(bench, serviceToken, [user], ['in_app']);
  await bench.settle();
  const token = await bench.runtime.mintUserToken(user);
  const once = async () => {
    await expectStatus(await bench.api('/notifications', token), 200, 'GET /notifications');
    await expectStatus(await bench.api('/notifications/unread-count', token), 200, 'GET unread-count');
  };
  await once();
  const usage = await bench.measure(async () => {
    for (let run = 0; run < repetitions; run++) await once();
  });
  return result(
    'e',
    'one feed page (20 of 30) plus unread-count',
    'page + count',
    repetitions,
    perOperation(usage, repetitions),
    usage,
  );
};

/**
 * (d) One event delivered to one webhook: POST /events matched by one webhook, its signed POST answered 200
 * by a local receiver. Skipped, with the reason, while webhooks are not in the service.
 */
export const oneWebhookDelivery = async (
  bench: MeteredRuntime,
  repetitions: number,
): Promise<ScenarioResult | SkippedScenario> => {
  const title = 'one event delivered to one webhook';
  const route = wiring.httpRoutes.find(
    (candidate) => candidate.method === 'POST' && candidate.path === '/webhooks',
  );
  if (!route) return { id: 'd', title, skipped: 'POST /webhooks is not in the wiring yet' };
  let received = 0;
  let onDelivery: (() => void) | undefined;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200).end();
      onDelivery?.();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const admin = await bench.runtime.mintServiceToken('bench', ['webhooks:admin', 'events:publish']);
    const created = await bench.api('/webhooks', admin, {
      method: 'POST',
      body: JSON.stringify({
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        secret: 'bench-secret-0123456789abcdef',
        event_filters: ['bench.webhook'],
        name: 'bench',
      }),
    });
    if (created.status !== 201) {
      return {
        id: 'd',
        title,
        skipped: `POST /webhooks answered ${created.status}: ${await created.text()}`,
      };
    }
    const once = async () => {
      const delivered = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no webhook delivery within 15 s')), 15_000);
        onDelivery = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      const response = await bench.api('/events', admin, {
        method: 'POST',
        body: JSON.stringify({
          event_type: 'bench.webhook',
          source: 'bench',
          version: 1,
          data: { n: received },
        }),
      });
      await expectStatus(response, 202, 'POST /events');
      await delivered;
    };
    try {
      await once();
    } catch (error) {
      return { id: 'd', title, skipped: `webhook delivery did not work: ${(error as Error).message}` };
    }
    const usage = await bench.measure(async () => {
      for (let run = 0; run < repetitions; run++) await once();
    });
    return result('d', title, 'delivered event', repetitions, perOperation(usage, repetitions), usage);
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
};
