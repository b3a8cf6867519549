import { BatchWriteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { BroadcastChunk } from '../lambdas/domain/realtime/broadcast-queue';
import { envNames, type TableSpec, wiring } from '../lib/wiring';
import { createTables, LOCAL_AWS_ENV, startDynamoDbLocal } from '../local/dynamodb-local';
import { apiGatewayId } from '../local/gateway/ids';
import {
  type ConnectionsCall,
  type DynamoDbCall,
  startDynamoDbProxy,
  startLiveConnectionsEndpoint,
} from '../local/metering';
import { LocalSqs } from '../local/sqs/local-sqs';

/**
 * The scale simulation: the service's own fan-out code (broadcast chunks, audience counts, the sweeper, the
 * webhook matcher) against DynamoDB Local holding audiences too large for one machine's sockets: 100,000
 * members in one room, 1,000,000 rows in the connection index, written directly with BatchWriteItem.
 * Every DynamoDB call goes through the metering proxy and is attributed to the operation running, with the
 * partition it touched. `@connections` is startLiveConnectionsEndpoint, answering as API Gateway does for open
 * connections: 100,000 real sockets do not fit on this machine.
 */

export interface PartitionUse {
  requests: number;
  units: number;
}

export interface OperationMeasure {
  /** How many times the operation ran. */
  runs: number;
  /** DynamoDB requests by API action. */
  requests: Record<string, number>;
  readUnits: number;
  writeUnits: number;
  /** `@connections` calls by kind. */
  posts: number;
  getConnections: number;
  /** Units and requests per partition (`table[/index]:key`). */
  partitions: Map<string, PartitionUse>;
  /** Wall time on this machine (informational: DynamoDB Local and 2 shared cores are not AWS). */
  localMs: number;
}

export interface ScaleSizes {
  readonly roomMembers: number;
  readonly connections: number;
  /** Connections due for the sweeper (the rest have a future `check_at`). */
  readonly sweepSample: number;
  /**
   * Chunks of each chain (the room's, one shard of "everyone") run for real, posts included; the rest of a
   * chain is the same code on the next page of the same partition. 0 runs every chunk (minutes of posts).
   */
  readonly chunkSample: number;
  readonly webhooksPerFilter: number;
}

export const SCALE_SIZES: ScaleSizes = {
  roomMembers: 100_000,
  connections: 1_000_000,
  sweepSample: 2_000,
  chunkSample: 10,
  webhooksPerFilter: 1_000,
};

export const QUICK_SCALE_SIZES: ScaleSizes = {
  roomMembers: 10_000,
  connections: 100_000,
  sweepSample: 500,
  chunkSample: 4,
  webhooksPerFilter: 200,
};

const sum = (values: Iterable<number>) => {
  let total = 0;
  for (const value of values) total += value;
  return total;
};

/** Attributes each metered DynamoDB call to the operation running, and to the partition it touched. */
class CallRecorder {
  readonly operations = new Map<string, OperationMeasure>();
  private current: OperationMeasure | undefined;
  private running = 0;
  private readonly specByName = new Map<string, TableSpec>();

  constructor(tableEnv: Record<string, string>) {
    for (const spec of wiring.tables) {
      const name = tableEnv[envNames.tableName(spec.id)];
      if (name) this.specByName.set(name, spec);
    }
  }

  measure(name: string): OperationMeasure {
    let measure = this.operations.get(name);
    if (!measure) {
      measure = {
        runs: 0,
        requests: {},
        readUnits: 0,
        writeUnits: 0,
        posts: 0,
        getConnections: 0,
        partitions: new Map(),
        localMs: 0,
      };
      this.operations.set(name, measure);
    }
    return measure;
  }

  /**
   * Runs `work` as one run of the operation `name`; calls made meanwhile are its. Runs of one operation may
   * overlap (parallel chains): the operation stays current until the last of them ends.
   */
  async run<T>(name: string, work: () => Promise<T>): Promise<T> {
    const measure = this.measure(name);
    if (this.current && this.current !== measure) throw new Error(`${name} overlaps another operation`);
    this.current = measure;
    this.running += 1;
    const started = performance.now();
    try {
      return await work();
    } finally {
      measure.localMs += performance.now() - started;
      measure.runs += 1;
      this.running -= 1;
      if (this.running === 0) this.current = undefined;
    }
  }

  connectionsCall(kind: ConnectionsCall): void {
    if (!this.current) return;
    if (kind === 'post') this.current.posts += 1;
    else if (kind === 'get') this.current.getConnections += 1;
  }

  dynamoDbCall(call: DynamoDbCall): void {
    const measure = this.current;
    if (!measure) return;
    measure.requests[call.operation] = (measure.requests[call.operation] ?? 0) + 1;
    const units = sum(call.units.values());
    if (call.kind === 'read') measure.readUnits += units;
    else measure.writeUnits += units;
    const partition = this.partitionOf(call.request);
    if (partition) {
      const use = measure.partitions.get(partition) ?? { requests: 0, units: 0 };
      use.requests += 1;
      use.units += units;
      measure.partitions.set(partition, use);
    }
  }

  /** `table[/index]:<partition key value>` of a single-partition request; undefined for batches. */
  private partitionOf(request: Readonly<Record<string, unknown>>): string | undefined {
    const tableName = typeof request.TableName === 'string' ? request.TableName : undefined;
    const spec = tableName ? this.specByName.get(tableName) : undefined;
    if (!spec) return undefined;
    const indexName = typeof request.IndexName === 'string' ? request.IndexName : undefined;
    const index = indexName
      ? spec.globalIndexes?.find((candidate) => candidate.name === indexName)
      : undefined;
    const keyName = index ? index.partitionKey.name : spec.partitionKey.name;
    const where = `${spec.id}${indexName ? `/${indexName}` : ''}`;
    const attribute = (value: unknown) => {
      const typed = value as { S?: string; N?: string } | undefined;
      return typed?.S ?? typed?.N;
    };
    const keyed = (request.Key ?? request.Item) as Record<string, unknown> | undefined;
    if (keyed) return `${where}:${attribute(keyed[keyName])}`;
    const condition =
      typeof request.KeyConditionExpression === 'string' ? request.KeyConditionExpression : '';
    const names = (request.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const values = (request.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
    for (const match of condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
      const name = match[1]?.startsWith('#') ? names[match[1]] : match[1];
      if (name === keyName) return `${where}:${attribute(values[match[2] as string])}`;
    }
    return undefined;
  }
}

/** Writes items straight into a table, 25 per BatchWriteItem, `lanes` in parallel, retrying unprocessed ones. */
const bulkWrite = async (
  client: DynamoDBDocumentClient,
  table: string,
  count: number,
  item: (index: number) => Record<string, unknown>,
  lanes = 16,
): Promise<void> => {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const start = next;
      next = Math.min(count, next + 25);
      let requests: { PutRequest: { Item: Record<string, unknown> } }[] = [];
      for (let index = start; index < next; index++) requests.push({ PutRequest: { Item: item(index) } });
      while (requests.length > 0) {
        const result = await client.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
        requests = (result.UnprocessedItems?.[table] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
};

export interface ScaleSimulation {
  readonly sizes: ScaleSizes;
  readonly operations: Map<string, OperationMeasure>;
  /** Rows per `byShard` partition, as the service's own shardOf spread them. */
  readonly rowsPerShard: Record<string, number>;
  /** Chunks the room broadcast needs (a page of MEMBERS_PAGE each), and how many must run one after another. */
  readonly roomChunks: number;
  readonly roomSequentialChunks: number;
  /** Chunks of one "everyone" shard (one after another; the shards run in parallel). */
  readonly shardChunks: number;
  readonly setupSeconds: number;
}

const log = (message: string) => console.error(`bench scale: ${message}`);

/** The presence operations measured in the big room (scale-report.ts turns them into time on AWS). */
export const PRESENCE_OPERATIONS = {
  before: 'presence: join in the room, before (a frame to every member, by the request)',
  afterArming: 'presence: join in the room, after (counted; arms the summary)',
  afterArmed: 'presence: join in the room, after (counted; summary already armed)',
  summary: 'presence: the summary (members count, broadcast planned)',
} as const;

export const runScaleSimulation = async (sizes: ScaleSizes): Promise<ScaleSimulation> => {
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_METRICS_NAMESPACE ??= 'Notify';
  const db = await startDynamoDbLocal();
  const tableEnv = await createTables(db.client, wiring.tables);
  const recorder = new CallRecorder(tableEnv);
  const proxy = await startDynamoDbProxy(db.endpoint, { onCall: (call) => recorder.dynamoDbCall(call) });
  const connections = await startLiveConnectionsEndpoint((call) => recorder.connectionsCall(call));
  // Queues without consumers: what the measured code enqueues (presence summaries, broadcast chunks) stays there.
  const sqs = new LocalSqs({ queues: wiring.queues });
  await sqs.start();
  Object.assign(process.env, LOCAL_AWS_ENV, tableEnv, {
    AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    [envNames.queueUrl('broadcast')]: sqs.queueUrl('broadcast'),
    [envNames.wsCallbackUrl]: connections.url,
  });
  // Set-up writes go to DynamoDB Local directly: they are not the operations measured.
  const direct = DynamoDBDocumentClient.from(db.client);
  // The service's modules read the variables above on first use.
  const { planBroadcast, runChunk } = await import('../lambdas/domain/realtime/broadcast');
  const { MEMBERS_PAGE, deliverToChannel } = await import('../lambdas/domain/realtime/deliver');
  const { joinRoomPresence } = await import('../lambdas/domain/realtime/presence');
  const { sendPresenceSummary } = await import('../lambdas/domain/realtime/presence-summary-broadcast');
  const { shardOf } = await import('../lambdas/domain/realtime/config');
  const { sweep } = await import('../lambdas/domain/realtime/sweeper');
  const { matchingWebhookIds } = await import('../lambdas/domain/webhooks/matcher');
  const table = (id: string) => tableEnv[envNames.tableName(id)] as string;
  /**
   * Runs chains of broadcast chunks as the worker does (each chunk hands on the next), the chains side by side
   * as parallel queue consumers would, for at most `maxRounds` rounds (0: to the end). Returns the rounds run
   * (the longest chain) and the chunks run.
   */
  const runChains = async (first: readonly BroadcastChunk[], operation: string, maxRounds: number) => {
    let pending = [...first];
    let rounds = 0;
    let chunks = 0;
    while (pending.length > 0 && (maxRounds === 0 || rounds < maxRounds)) {
      rounds += 1;
      chunks += pending.length;
      const next = await Promise.all(pending.map((chunk) => recorder.run(operation, () => runChunk(chunk))));
      pending = next.filter((chunk) => chunk !== undefined);
    }
    return { rounds, chunks, complete: pending.length === 0 };
  };
  const nowSecs = Math.floor(Date.now() / 1000);
  const ttl = nowSecs + 3 * 3600;
  let setupMs = 0;
  const setup = async (what: string, work: () => Promise<void>) => {
    const started = performance.now();
    log(what);
    await work();
    setupMs += performance.now() - started;
  };
  try {
    // 1. A room with many members: one partition of wsChannels.
    const room = 'room:bench-big';
    await setup(`writing ${sizes.roomMembers.toLocaleString('en')} memberships of ${room}…`, () =>
      bulkWrite(direct, table('wsChannels'), sizes.roomMembers, (index) => ({
        channel: room,
        connection_id: apiGatewayId(),
        user_id: `u${index}`,
        session_id: `s${index}`,
        ttl,
      })),
    );
    log('room broadcast: the real planBroadcast, then runChunk chunk after chunk…');
    const frame = { type: 'bench.broadcast', text: 'A broadcast of typical size for the benchmark.' };
    const plan = await recorder.run('room: POST /broadcast (count)', () => planBroadcast(room, frame));
    // The room's segments run to the end: how long the longest one is decides the broadcast's time. Without
    // segments (one chain) only `chunkSample` chunks run and the rest is the same page after page.
    const roomChains = await runChains(
      plan.chunks,
      'room: broadcast chunk',
      plan.chunks.length > 1 ? 0 : sizes.chunkSample,
    );

    // 1b. Presence in the big room: a change told to every member by the request (before), and counted for
    // the room's next summary (after; docs/realtime.md, presence in large rooms).
    await setup(`writing ${sizes.roomMembers.toLocaleString('en')} presence rows of ${room}…`, () =>
      bulkWrite(direct, table('presence'), sizes.roomMembers, (index) => ({
        scope: room,
        member: `u${index}#c${index}`,
        user_id: `u${index}`,
        connection_id: `c${index}`,
        status: 'online',
        ttl,
      })),
    );
    log('presence: a join told to every member (before), then counted (after)…');
    const joinFrame = {
      type: 'presence',
      scope: room,
      user_id: 'bench-joiner',
      status: 'online',
      last_seen_at: new Date().toISOString(),
      change: 'join',
    } as const;
    // Before: the request itself delivered the frame to the whole room, besides the same presence writes.
    await recorder.run(PRESENCE_OPERATIONS.before, () => deliverToChannel(room, joinFrame));
    await recorder.run(PRESENCE_OPERATIONS.afterArming, () =>
      joinRoomPresence(room, 'bench-joiner', 'bench-joiner-c1', 'online'),
    );
    await recorder.run(PRESENCE_OPERATIONS.afterArmed, () =>
      joinRoomPresence(room, 'bench-joiner-2', 'bench-joiner-c2', 'online'),
    );
    const pending = await direct.send(
      new GetCommand({ TableName: table('presence'), Key: { scope: `summary:${room}`, member: 'pending' } }),
    );
    const claim = pending.Item?.claim;
    if (typeof claim !== 'string') throw new Error('the join in the big room armed no presence summary');
    // The summary's chunks are the room broadcast's, measured above; this is what comes before them.
    await recorder.run(PRESENCE_OPERATIONS.summary, () =>
      sendPresenceSummary({ kind: 'presence.summary', room, claim }),
    );

    // 2. The connection index with every connection of the service.
    const rowsPerShard: Record<string, number> = {};
    const due = new Set<number>();
    const dueEvery = Math.max(1, Math.floor(sizes.connections / sizes.sweepSample));
    for (let index = 0; index < sizes.connections && due.size < sizes.sweepSample; index += dueEvery) {
      due.add(index);
    }
    await setup(
      `writing ${sizes.connections.toLocaleString('en')} connections (and their byShard entries)…`,
      () =>
        bulkWrite(direct, table('wsConnections'), sizes.connections, (index) => {
          const id = apiGatewayId();
          const shard = shardOf(id);
          rowsPerShard[shard] = (rowsPerShard[shard] ?? 0) + 1;
          return {
            connection_id: id,
            shard,
            // Live connections keep a past check_at (the sweeper looks at them each minute); the sample is
            // due now, the rest later, so one sweep measures the per-connection cost on a known number.
            check_at: due.has(index) ? nowSecs - 60 : nowSecs + 3600,
            connected_at: Date.now() - 60_000,
            user_id: `u${index}`,
            session_id: `s${index}`,
            token_expires_at: nowSecs + 3600,
            ttl,
          };
        }),
    );
    log('everyone: counting the audience shard by shard…');
    const everyone = await recorder.run('everyone: POST /broadcast (count)', () =>
      planBroadcast(undefined, frame),
    );
    if (everyone.recipients !== sizes.connections) {
      throw new Error(`everyone counted ${everyone.recipients}, expected ${sizes.connections}`);
    }
    log('everyone: the chunk chain of one shard…');
    await runChains(everyone.chunks.slice(0, 1), 'everyone: broadcast chunk (one shard)', sizes.chunkSample);

    log(`sweeper: one sweep with ${due.size.toLocaleString('en')} connections due…`);
    const verdicts = await recorder.run('sweeper: one sweep (due sample)', () => sweep());
    if (verdicts.alive !== due.size) {
      throw new Error(`the sweep found ${verdicts.alive} live connections, expected ${due.size}`);
    }

    // 3. The webhook filter index: many webhooks on one event type.
    await setup(`writing ${sizes.webhooksPerFilter} webhook filters…`, () =>
      bulkWrite(direct, table('webhookFilters'), sizes.webhooksPerFilter, (index) => ({
        filter: 'orders.created',
        webhook_id: `wh_${String(index).padStart(6, '0')}`,
      })),
    );
    for (let run = 0; run < 10; run++) {
      const ids = await recorder.run('webhooks: match one event', () => matchingWebhookIds('orders.created'));
      if (ids.length !== sizes.webhooksPerFilter) throw new Error(`matched ${ids.length} webhooks`);
    }

    const chunksOf = (rows: number) => Math.ceil(rows / MEMBERS_PAGE);
    log(
      `room: ${plan.chunks.length} chain(s), ran ${roomChains.chunks} chunks in ${roomChains.rounds} rounds` +
        (roomChains.complete ? '' : ` of ${chunksOf(plan.recipients)} chunks`),
    );
    return {
      sizes,
      operations: recorder.operations,
      rowsPerShard,
      roomChunks: roomChains.complete ? roomChains.chunks : chunksOf(plan.recipients),
      // One chain (sampled): every page one after another; segments: the longest segment, as run.
      roomSequentialChunks: roomChains.complete ? roomChains.rounds : chunksOf(plan.recipients),
      shardChunks: chunksOf(Math.max(...Object.values(rowsPerShard))),
      setupSeconds: setupMs / 1000,
    };
  } finally {
    await sqs.stop();
    await connections.stop();
    await proxy.stop();
    direct.destroy();
    await db.stop();
  }
};
