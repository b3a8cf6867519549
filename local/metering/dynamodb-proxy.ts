import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { AwsServiceError } from '../aws-http';

/** One DynamoDB data-plane call as billed: request units by table, as DynamoDB reports them. */
export interface DynamoDbCall {
  readonly operation: string;
  /** Read or write request units per table (table plus its indexes). */
  readonly units: ReadonlyMap<string, number>;
  readonly kind: 'read' | 'write';
  /** True when the units were computed here instead of being reported (see docs/performance.md). */
  readonly computed: boolean;
  /** The request as the caller sent it (keys, index, key condition), for partition spread (bench/scale). */
  readonly request: Readonly<Record<string, unknown>>;
}

export interface DynamoDbProxy {
  readonly endpoint: string;
  stop(): Promise<void>;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

interface ConsumedCapacity {
  TableName?: string;
  CapacityUnits?: number;
  Table?: unknown;
  LocalSecondaryIndexes?: unknown;
  GlobalSecondaryIndexes?: unknown;
}

/**
 * The least a read bills on DynamoDB: an item that does not exist, or a Query that finds nothing, still
 * consumes 0.5 RRU (eventually consistent), 1 (strongly consistent) or 2 (transactional) per item read
 * ("Capacity unit consumption for read operations"). DynamoDB Local reports 0 for those reads.
 */
const minimumReadUnits = (operation: string, body: Record<string, unknown>): Map<string, number> => {
  const minimum = new Map<string, number>();
  const perRead = (consistent: unknown) => (consistent === true ? 1 : 0.5);
  const table = tableOfRequest(body);
  if ((operation === 'GetItem' || operation === 'Query' || operation === 'Scan') && table) {
    minimum.set(table, perRead(body.ConsistentRead));
  } else if (operation === 'BatchGetItem' && typeof body.RequestItems === 'object' && body.RequestItems) {
    for (const [name, request] of Object.entries(
      body.RequestItems as Record<string, Record<string, unknown>>,
    )) {
      const keys = Array.isArray(request.Keys) ? request.Keys.length : 0;
      minimum.set(name, keys * perRead(request.ConsistentRead));
    }
  } else if (operation === 'TransactGetItems' && Array.isArray(body.TransactItems)) {
    for (const item of body.TransactItems as { Get?: Record<string, unknown> }[]) {
      const name = item.Get ? tableOfRequest(item.Get) : undefined;
      if (name) minimum.set(name, (minimum.get(name) ?? 0) + 2);
    }
  }
  return minimum;
};

const readBody = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

const tableOfRequest = (body: Record<string, unknown>): string | undefined =>
  typeof body.TableName === 'string' ? body.TableName : undefined;

/** A TOTAL answer has no per-index breakdown: what the caller would get from DynamoDB. */
const asTotal = (capacity: ConsumedCapacity): ConsumedCapacity => ({
  TableName: capacity.TableName,
  CapacityUnits: capacity.CapacityUnits,
});

/** zlib.crc32 exists from Node 20.15 / 22.2; without it the checksum header is dropped (the SDK then skips it). */
const crc32 = (zlib as { crc32?: (data: Buffer) => number }).crc32;

export interface DynamoDbProxyOptions {
  /** Meters every data-plane call (the request then asks DynamoDB Local for its consumed capacity). */
  readonly onCall?: (call: DynamoDbCall) => void;
  /**
   * Refuses a call before it reaches DynamoDB Local by throwing an AwsServiceError (local least privilege,
   * local/access.ts); the caller gets it in DynamoDB's error shape.
   */
  readonly authorize?: (
    headers: IncomingMessage['headers'],
    operation: string,
    body: Readonly<Record<string, unknown>>,
  ) => void;
  /**
   * Tests of outages: a call this picks is answered with DynamoDB's 500 InternalServerError instead of
   * reaching DynamoDB Local (the SDK retries it, and each retry is picked again while the outage lasts).
   */
  readonly fail?: (operation: string, body: Readonly<Record<string, unknown>>) => boolean;
  /**
   * Tests of races: awaited before a call is forwarded, so a test can land another write between a function's
   * read and this call (e.g. TTL removing the item it read).
   */
  readonly interpose?: (operation: string, body: Readonly<Record<string, unknown>>) => Promise<void>;
}

/** DynamoDB's JSON 1.0 error body: the SDK takes the error name from `__type` after the `#`. */
const errorReply = (response: ServerResponse, error: AwsServiceError) => {
  const body = JSON.stringify({ __type: `com.amazon.coral.service#${error.code}`, Message: error.message });
  response.writeHead(error.status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': String(Buffer.byteLength(body)),
    'x-amzn-requestid': randomUUID(),
  });
  response.end(body);
};

const parseJson = (raw: Buffer): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/**
 * An HTTP proxy in front of DynamoDB Local, between it and every function of the local runtime. With
 * `authorize` it refuses what the calling function is not granted. With `onCall` it meters every data-plane
 * call: it asks for `ReturnConsumedCapacity: INDEXES`, reports the request units DynamoDB Local computes (it
 * does so for every data-plane operation, transactions doubled, indexes included), and hands the caller back
 * the answer it asked for (no ConsumedCapacity unless requested, the TOTAL form when TOTAL was requested).
 * A conditional write that fails returns no ConsumedCapacity; DynamoDB still bills it (at least 1 WCU),
 * so such a call is counted as 1 WCU per failed item, marked `computed`.
 */
export const startDynamoDbProxy = async (
  target: string,
  { onCall, authorize, fail, interpose }: DynamoDbProxyOptions,
): Promise<DynamoDbProxy> => {
  const targetUrl = new URL(target);
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const raw = await readBody(request);
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const metered = onCall !== undefined && (READS.has(operation) || WRITES.has(operation));
    let body = raw;
    let asked: string | undefined;
    const parsedRequest = metered || authorize || fail || interpose ? parseJson(raw) : {};
    await interpose?.(operation, parsedRequest);
    if (fail?.(operation, parsedRequest)) {
      errorReply(response, new AwsServiceError('InternalServerError', 'Injected outage (test)', 500));
      return;
    }
    if (authorize) {
      try {
        authorize(request.headers, operation, parsedRequest);
      } catch (error) {
        if (!(error instanceof AwsServiceError)) throw error;
        errorReply(response, error);
        return;
      }
    }
    if (metered) {
      asked =
        typeof parsedRequest.ReturnConsumedCapacity === 'string'
          ? parsedRequest.ReturnConsumedCapacity
          : undefined;
      body = Buffer.from(JSON.stringify({ ...parsedRequest, ReturnConsumedCapacity: 'INDEXES' }), 'utf8');
    }
    const headers = { ...request.headers, host: targetUrl.host, 'content-length': String(body.length) };
    const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: targetUrl.hostname,
          port: targetUrl.port,
          path: request.url,
          method: request.method,
          headers,
        },
        resolve,
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
    let answer = await readBody(upstream);
    const answerHeaders = { ...upstream.headers };
    if (metered && onCall) {
      const kind = READS.has(operation) ? 'read' : 'write';
      const status = upstream.statusCode ?? 500;
      if (status === 200) {
        const parsed = JSON.parse(answer.toString('utf8')) as {
          ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[];
        };
        const capacities = parsed.ConsumedCapacity === undefined ? [] : [parsed.ConsumedCapacity].flat();
        const units = new Map<string, number>();
        for (const capacity of capacities) {
          const table = capacity.TableName ?? '?';
          units.set(table, (units.get(table) ?? 0) + (capacity.CapacityUnits ?? 0));
        }
        let computed = false;
        if (kind === 'read') {
          for (const [table, least] of minimumReadUnits(operation, parsedRequest)) {
            if ((units.get(table) ?? 0) < least) {
              units.set(table, least);
              computed = true;
            }
          }
        }
        onCall({ operation, units, kind, computed, request: parsedRequest });
        if (asked === undefined || asked === 'NONE') delete parsed.ConsumedCapacity;
        else if (asked === 'TOTAL' && parsed.ConsumedCapacity !== undefined) {
          parsed.ConsumedCapacity = Array.isArray(parsed.ConsumedCapacity)
            ? parsed.ConsumedCapacity.map(asTotal)
            : asTotal(parsed.ConsumedCapacity);
        }
        answer = Buffer.from(JSON.stringify(parsed), 'utf8');
        if (crc32) answerHeaders['x-amz-crc32'] = String(crc32(answer) >>> 0);
        else delete answerHeaders['x-amz-crc32'];
        answerHeaders['content-length'] = String(answer.length);
      } else if (
        kind === 'write' &&
        /ConditionalCheckFailed|TransactionCanceled/.test(answer.toString('utf8'))
      ) {
        const items = Array.isArray(parsedRequest.TransactItems) ? parsedRequest.TransactItems.length : 1;
        const firstItem = Array.isArray(parsedRequest.TransactItems)
          ? parsedRequest.TransactItems[0]
          : undefined;
        const table =
          tableOfRequest(parsedRequest) ??
          (firstItem
            ? tableOfRequest(Object.values(firstItem as Record<string, Record<string, unknown>>)[0] ?? {})
            : undefined) ??
          'transaction';
        onCall({ operation, units: new Map([[table, items]]), kind, computed: true, request: parsedRequest });
      } else {
        onCall({ operation, units: new Map(), kind, computed: false, request: parsedRequest });
      }
    }
    response.writeHead(upstream.statusCode ?? 500, answerHeaders);
    response.end(answer);
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ __type: 'MeteringProxyError', message: String(error) }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
