import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_DELIVERY_SHARDS, DEFAULT_ENDPOINT_CONCURRENCY } from '../lambdas/domain/webhooks/settings';
import { AWS_LIMITS } from './aws-limits';
import { dollarsOf, NO_UNITS, type ServiceUnits } from './cost';
import { type OperationMeasure, PRESENCE_OPERATIONS, type ScaleSimulation } from './scale';
import type { ScenarioResult } from './scenarios';

/**
 * Turns the scale simulation's measures into time, quota and cost at the targets of docs/scale.md, with the
 * assumptions stated in `ASSUMPTIONS` (latencies on AWS cannot be measured here; DynamoDB Local and two shared
 * cores are not AWS).
 */
export const ASSUMPTIONS = {
  /** One PostToConnection / GetConnection round trip from Lambda, same Region. */
  connectionsCallMs: 15,
  /** One DynamoDB request from Lambda (single-digit ms, a 500-row Query page a little more). */
  dynamoDbRequestMs: 8,
  /** A chunk handing the next one on: SendMessage + the event source mapping's poll picking it up. */
  queueHandOffMs: 60,
  /** Posts one broadcast invocation keeps in flight (forEachLimited in broadcast.ts / deliver.ts). */
  postsInFlight: 32,
  /**
   * The sweep (docs/realtime.md): one invocation per byShard shard, 32 GetConnection in flight (sweeper.ts),
   * every 20 s, within the worker's 60 s timeout (lib/wiring/areas/realtime.ts).
   */
  sweeperInFlight: 32,
  sweepIntervalSecs: 20,
  sweepShardTimeoutSecs: 60,
  heartbeatSecs: 20,
  /** Of the API Gateway account throttle, the share a single path may take (the rest keeps the service up). */
  throttleShare: 0.8,
  /** Lambda time per invocation on AWS, for concurrency: create, fan-out (batch of 10), delivery. */
  createMs: 40,
  fanoutBatchMs: 150,
  webhookReceiverMs: 200,
  hoursPerMonth: 730,
  /** The room broadcast target's load for a monthly bill: one 100,000-member broadcast a minute. */
  roomBroadcastsPerMonth: 730 * 60,
} as const;

const perRun = (measure: OperationMeasure | undefined) => {
  const runs = Math.max(1, measure?.runs ?? 1);
  const requests = Object.values(measure?.requests ?? {}).reduce((total, count) => total + count, 0);
  return {
    requests: requests / runs,
    readUnits: (measure?.readUnits ?? 0) / runs,
    writeUnits: (measure?.writeUnits ?? 0) / runs,
    posts: (measure?.posts ?? 0) / runs,
    getConnections: (measure?.getConnections ?? 0) / runs,
  };
};

/** The partition that took most units, and its share. */
const hottest = (measure: OperationMeasure) => {
  let top: [string, number] = ['-', 0];
  let total = 0;
  for (const [key, use] of measure.partitions) {
    total += use.units;
    if (use.units > top[1]) top = [key, use.units];
  }
  return { key: top[0], share: total === 0 ? 0 : top[1] / total };
};

/** Scenario results of the committed cost run (`--only=cost`), for the per-operation bills. */
const costScenarios = (): Map<string, ScenarioResult> => {
  const file = join(import.meta.dirname, 'results.json');
  if (!existsSync(file)) return new Map();
  const results = JSON.parse(readFileSync(file, 'utf8')) as { scenarios?: ScenarioResult[] };
  return new Map((results.scenarios ?? []).filter((s) => 'unitsPerOperation' in s).map((s) => [s.id, s]));
};

export interface TargetVerdict {
  readonly target: string;
  readonly met: boolean;
  readonly firstLimit: string;
  readonly needs: string;
  readonly monthlyUsd: number | undefined;
  readonly figures: Record<string, number>;
}

export interface ScaleReport {
  readonly assumptions: typeof ASSUMPTIONS;
  readonly limits: typeof AWS_LIMITS;
  readonly operations: Record<
    string,
    ReturnType<typeof perRun> & {
      runs: number;
      partitions: number;
      hottestPartition: string;
      hottestShare: number;
      localMsPerRun: number;
    }
  >;
  readonly rowsPerShard: Record<string, number>;
  readonly targets: TargetVerdict[];
  /** Seconds one presence change in the big room takes on AWS (the assumptions' latencies), before and after. */
  readonly presenceChangeSecs: {
    readonly before: number;
    readonly after: number;
    readonly afterArmed: number;
  };
}

const L1 = AWS_LIMITS.apiGatewayAccountRps.value;
const usable = (limit: number) => limit * ASSUMPTIONS.throttleShare;
const roundUp = (value: number, step: number) => Math.ceil(value / step) * step;

export const buildScaleReport = (simulation: ScaleSimulation): ScaleReport => {
  const ops = simulation.operations;
  const op = (name: string) => perRun(ops.get(name));
  const scenarios = costScenarios();
  const monthly = (id: string, operationsPerMonth: number) => {
    const scenario = scenarios.get(id);
    return scenario ? (scenario.dollarsPerMillion.total * operationsPerMonth) / 1e6 : undefined;
  };
  const a = ASSUMPTIONS;
  const secondsPerMonth = a.hoursPerMonth * 3600;

  // Room broadcast: the count, then the chunk chain(s).
  const roomCount = op('room: POST /broadcast (count)');
  const roomChunk = op('room: broadcast chunk');
  const chunkSecs = (chunk: ReturnType<typeof perRun>) =>
    (a.queueHandOffMs +
      chunk.requests * a.dynamoDbRequestMs +
      Math.ceil(chunk.posts / a.postsInFlight) * a.connectionsCallMs) /
    1000;
  const members = simulation.sizes.roomMembers;
  const roomSecs =
    (roomCount.requests * a.dynamoDbRequestMs) / 1000 +
    simulation.roomSequentialChunks * chunkSecs(roomChunk);
  const roomPostsPerSec = members / Math.max(roomSecs, 1e-9);
  const roomTargetRate = members / 10;
  const roomUnits: ServiceUnits = {
    ...NO_UNITS,
    httpApiRequests: 1,
    wsMessages: members,
    lambdaInvocations: 1 + simulation.roomChunks,
    lambdaGbSeconds: simulation.roomChunks * chunkSecs(roomChunk) * 0.5,
    dynamoDbReadUnits: roomCount.readUnits + roomChunk.readUnits * simulation.roomChunks,
    dynamoDbRequests: roomCount.requests + roomChunk.requests * simulation.roomChunks,
    sqsRequests: 3 * simulation.roomChunks,
  };
  const roomBroadcastUsd = dollarsOf(roomUnits).total;

  // Sweeper: per due connection.
  const sweepMeasure = ops.get('sweeper: one sweep (due sample)');
  const sweepPer = {
    readUnits: (sweepMeasure?.readUnits ?? 0) / simulation.sizes.sweepSample,
    getConnections: (sweepMeasure?.getConnections ?? 0) / simulation.sizes.sweepSample,
  };
  // A live connection costs a sweep one GetConnection (its index row comes in 1 MB pages): one shard's
  // invocation checks this many between two sweeps, and at most this many before its timeout.
  const sweepCheckMs = a.connectionsCallMs;
  const sweepCapacity = (a.sweepIntervalSecs * 1000 * a.sweeperInFlight) / sweepCheckMs;
  const sweepTimeoutCapacity = (a.sweepShardTimeoutSecs * 1000 * a.sweeperInFlight) / sweepCheckMs;
  const connections = 1_000_000;
  const shardsNeeded = 2 ** Math.ceil(Math.log2(connections / sweepCapacity));
  const heartbeatRps = connections / a.heartbeatSecs;
  const sweepsPerMinute = 60 / a.sweepIntervalSecs;
  const sweepRps = (connections * sweepPer.getConnections * sweepsPerMinute) / 60;
  const reconnectRps = connections / AWS_LIMITS.webSocketConnectionSecs.value;

  // Webhooks: writes on one endpoint's webhookDeliveries partitions per delivery (scenario d), spread over the
  // default shard count; before that, one endpoint's attempts in flight (its slots ÷ the receiver's answer time).
  const d = scenarios.get('d');
  const deliveriesTable = Object.entries(d?.usage?.dynamoDb ?? {}).find(([name]) =>
    name.endsWith('webhookDeliveries'),
  )?.[1];
  const wruPerDelivery = d && deliveriesTable ? deliveriesTable.writeUnits / d.measured : 2;
  const perEndpointCeiling =
    (AWS_LIMITS.partitionWriteUnits.value / wruPerDelivery) * DEFAULT_DELIVERY_SHARDS;
  const perEndpointSlotsCeiling = DEFAULT_ENDPOINT_CONCURRENCY / (a.webhookReceiverMs / 1000);
  const match = ops.get('webhooks: match one event');
  const matchHot = match ? hottest(match) : { key: '-', share: 0 };
  const matchUnitsOnHot = match
    ? (match.partitions.get(matchHot.key)?.units ?? 0) / Math.max(1, match.runs)
    : 0;

  const notificationsRps = 10_000;
  const notificationL1 = notificationsRps * 2;
  const notificationConcurrency =
    (notificationsRps * a.createMs) / 1000 + ((notificationsRps * 2) / 10) * (a.fanoutBatchMs / 1000);

  const targets: TargetVerdict[] = [
    {
      target: '1,000,000 concurrently connected clients',
      met: false,
      firstLimit: `L1 at ${Math.round(usable(L1) / ((heartbeatRps + sweepRps) / connections)).toLocaleString('en')} clients (heartbeats + ${sweepsPerMinute} sweep GetConnection a minute each); a shard's sweep ≈ ${Math.round(sweepCapacity).toLocaleString('en')} connections per ${a.sweepIntervalSecs} s (≈ ${Math.round(sweepTimeoutCapacity).toLocaleString('en')} before its ${a.sweepShardTimeoutSecs} s timeout)`,
      needs: `L1 ≥ ${roundUp((heartbeatRps + sweepRps + reconnectRps * 2) / a.throttleShare, 5_000).toLocaleString('en')}/s; connection_shards ≥ ${shardsNeeded} and ws.sweepShard max_concurrency ≥ ${shardsNeeded}; L2 ${AWS_LIMITS.webSocketNewConnections.value}/s covers ${Math.round(reconnectRps)} reconnects/s`,
      monthlyUsd: monthly('c', connections * a.hoursPerMonth),
      figures: { heartbeatRps, sweepRps, reconnectRps, sweepCapacity, sweepTimeoutCapacity, shardsNeeded },
    },
    {
      target: '10,000 notifications/s to single recipients',
      met: false,
      firstLimit: `L1 at ${(usable(L1) / 2).toLocaleString('en')}/s (a POST and a frame each)`,
      needs: `L1 ≥ ${roundUp(notificationL1 / a.throttleShare, 5_000).toLocaleString('en')}/s; L4: ≈ ${Math.round(notificationConcurrency)} of the ${AWS_LIMITS.lambdaConcurrency.value.toLocaleString('en')} concurrent executions (raise to ${roundUp((notificationConcurrency / a.throttleShare) * 2, 1_000).toLocaleString('en')} for ramp-up and the other functions)`,
      monthlyUsd: monthly('a', notificationsRps * secondsPerMonth),
      figures: { l1Rps: notificationL1, lambdaConcurrency: notificationConcurrency },
    },
    {
      target: `${members.toLocaleString('en')}-member room broadcast within 10 s`,
      met: roomSecs <= 10 && roomTargetRate <= usable(L1),
      firstLimit:
        roomSecs > 10
          ? `the chunk chain: ${simulation.roomSequentialChunks} chunks one after another ≈ ${roomSecs.toFixed(1)} s`
          : `L1: ${roomTargetRate.toLocaleString('en')} posts/s for 10 s`,
      // The broadcast may take half of the account throttle; heartbeats and requests keep the other half.
      needs: `${roomSecs > 10 ? 'parallel segments of the room (hot keys); ' : ''}L1 ≥ ${roundUp(roomTargetRate * 2, 5_000).toLocaleString('en')}/s (the broadcast takes half)`,
      monthlyUsd: roomBroadcastUsd * a.roomBroadcastsPerMonth,
      figures: {
        broadcastSecs: roomSecs,
        postsPerSec: roomPostsPerSec,
        dollarsPerBroadcast: roomBroadcastUsd,
      },
    },
    {
      target: '1,000 webhook deliveries/s',
      met: true,
      firstLimit: `one endpoint: its ${DEFAULT_ENDPOINT_CONCURRENCY} slots ≈ ${Math.floor(perEndpointSlotsCeiling)} deliveries/s at ${a.webhookReceiverMs} ms an answer; then L7 on its ${DEFAULT_DELIVERY_SHARDS} webhookDeliveries partitions ≈ ${Math.floor(perEndpointCeiling)} deliveries/s (${wruPerDelivery.toFixed(1)} WRU each)`,
      needs: `to one endpoint: NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY ≥ ${Math.ceil((1000 * a.webhookReceiverMs) / 1000)} (or spread over ≥ ${Math.ceil(1000 / perEndpointSlotsCeiling)} endpoints); MaximumConcurrency on webhooks.deliver bounds hanging receivers (≈ ${Math.round((1000 * a.webhookReceiverMs) / 1000 / 5)} concurrent at ${a.webhookReceiverMs} ms)`,
      monthlyUsd: monthly('d', 1000 * secondsPerMonth),
      figures: {
        wruPerDelivery,
        perEndpointCeiling,
        perEndpointSlotsCeiling,
        filterQueriesPerSecCeiling:
          matchUnitsOnHot > 0
            ? AWS_LIMITS.partitionReadUnits.value / matchUnitsOnHot
            : Number.POSITIVE_INFINITY,
      },
    },
  ];

  // A presence change: its DynamoDB requests one after another, its posts 32 at a time; arming the summary
  // sends one SQS message (counted as one queue hand-off).
  const changeSecs = (name: string, sqsSends: number) => {
    const change = op(name);
    return (
      (change.requests * a.dynamoDbRequestMs +
        Math.ceil(change.posts / a.postsInFlight) * a.connectionsCallMs +
        sqsSends * a.queueHandOffMs) /
      1000
    );
  };
  const presenceChangeSecs = {
    before: changeSecs(PRESENCE_OPERATIONS.before, 0),
    after: changeSecs(PRESENCE_OPERATIONS.afterArming, 1),
    afterArmed: changeSecs(PRESENCE_OPERATIONS.afterArmed, 0),
  };

  const operations: ScaleReport['operations'] = {};
  for (const [name, measure] of ops) {
    const top = hottest(measure);
    operations[name] = {
      ...perRun(measure),
      runs: measure.runs,
      partitions: measure.partitions.size,
      hottestPartition: top.key,
      hottestShare: top.share,
      localMsPerRun: measure.localMs / Math.max(1, measure.runs),
    };
  }
  return {
    assumptions: ASSUMPTIONS,
    limits: AWS_LIMITS,
    operations,
    rowsPerShard: simulation.rowsPerShard,
    targets,
    presenceChangeSecs,
  };
};

const n = (value: number) =>
  value >= 100
    ? Math.round(value).toLocaleString('en')
    : value >= 1
      ? value.toFixed(1)
      : value.toPrecision(2);

export const printScaleReport = (report: ScaleReport, simulation: ScaleSimulation): string => {
  const out: string[] = [];
  const s = simulation.sizes;
  out.push(
    `\nScale simulation: ${s.roomMembers.toLocaleString('en')} room members, ${s.connections.toLocaleString('en')} connections (${s.sweepSample.toLocaleString('en')} due for the sweeper), ${s.webhooksPerFilter} webhooks on one filter; set-up ${simulation.setupSeconds.toFixed(0)} s\n`,
  );
  out.push(
    'operation | runs | DDB req | RRU | WRU | posts | GetConnection | partitions | hottest partition (share of units) | local ms',
  );
  out.push('--- | --- | --- | --- | --- | --- | --- | --- | --- | ---');
  for (const [name, row] of Object.entries(report.operations)) {
    out.push(
      [
        name,
        row.runs,
        n(row.requests),
        n(row.readUnits),
        n(row.writeUnits),
        n(row.posts),
        n(row.getConnections),
        row.partitions,
        `${row.hottestPartition} (${(row.hottestShare * 100).toFixed(0)} %)`,
        n(row.localMsPerRun),
      ].join(' | '),
    );
  }
  const shards = Object.values(report.rowsPerShard);
  out.push(
    `\nbyShard spread: ${shards.length} shards, ${Math.min(...shards).toLocaleString('en')}–${Math.max(...shards).toLocaleString('en')} rows each; the room needs ${simulation.roomChunks} chunks (${simulation.roomSequentialChunks} one after another); one "everyone" shard ${simulation.shardChunks}`,
  );
  const presence = report.presenceChangeSecs;
  out.push(
    `presence: one join in the ${s.roomMembers.toLocaleString('en')}-member room takes its request ≈ ${n(presence.before)} s on AWS when told to every member (before), ≈ ${n(presence.after * 1000)} ms when counted and arming the summary, ≈ ${n(presence.afterArmed * 1000)} ms once armed (after)`,
  );
  out.push('\ntarget | met (default quotas) | reached first | needs | monthly bill');
  out.push('--- | --- | --- | --- | ---');
  for (const target of report.targets) {
    out.push(
      [
        target.target,
        target.met ? 'yes' : 'no',
        target.firstLimit,
        target.needs,
        target.monthlyUsd === undefined
          ? 'run --only=cost first'
          : `$${Math.round(target.monthlyUsd).toLocaleString('en')}`,
      ].join(' | '),
    );
  }
  out.push(
    `\nassumptions: ${Object.entries(ASSUMPTIONS)
      .map(([key, value]) => `${key}=${value}`)
      .join(
        ', ',
      )}; per-operation bills from bench/results.json (scenarios a, c, d); limits: bench/aws-limits.ts`,
  );
  return out.join('\n');
};
