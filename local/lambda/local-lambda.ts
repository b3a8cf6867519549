import {
  type BusFunction,
  DEFAULT_FUNCTION,
  LAMBDA_MAX_ASYNC_PAYLOAD_BYTES,
  type Worker,
} from '../../lib/wiring';
import type { LocalAccess } from '../access';
import {
  AwsServiceError,
  type HttpReply,
  type HttpRequest,
  type LoopbackServer,
  startLoopbackServer,
} from '../aws-http';
import type { LocalSqs } from '../sqs/local-sqs';
import type { LocalQueue } from '../sqs/queue';
import { removeStandInState, writeStandInState } from '../stand-in-state';
import { AsyncInvocationQueue, type AsyncInvokedFunction } from './async-invocation';
import { EventSourceMapping } from './event-source-mapping';
import { localFunctionName } from './runner';
import type { FunctionRef, InvokeFunction } from './types';

/**
 * Lambda's side of the local runtime, over the SQS stand-in's queues:
 * - the event source mappings of the workers (local/lambda/event-source-mapping.ts);
 * - the asynchronous invocation of the bus functions and of the workers declaring `invokedAsync`
 *   (local/lambda/async-invocation.ts): each function's own queue, kept by the SQS stand-in as an internal queue
 *   (journaled, neither billed nor addressable), and its on-failure destination (`<deadLetterQueue>-dlq`, or the
 *   worker's queue's DLQ);
 * - a wire-compatible `Invoke` of those functions with `InvocationType: Event` (REST-JSON, as
 *   @aws-sdk/client-lambda sends it: `POST /2015-03-31/functions/{FunctionName}/invocations`,
 *   `X-Amz-Invocation-Type: Event`): the event goes to the function's asynchronous queue, the one EventBridge's
 *   invocations go to, and the answer is 202 once it is durable. The functions that declare `invokes` call it
 *   (with their own credentials: only for the functions they name, unqualified, as IAM would allow), and so does
 *   `npm run redrive`.
 * Made before the SQS stand-in starts (which restores the queues) and started after it; the SQS stand-in's stop
 * stops its pollers first, so nothing runs on a closed journal whichever is stopped first.
 * See docs/local-standins.md.
 */

/** Where a running stand-in with `dataDir` writes its endpoint, so `npm run redrive -- --data DIR` can find it. */
export const LAMBDA_STATE_FILE = 'lambda-endpoint.json';

export interface LambdaState {
  readonly endpoint: string;
  readonly region: string;
  readonly accountId: string;
  readonly pid: number;
}

export interface LocalLambdaOptions {
  readonly sqs: LocalSqs;
  /** The workers, each read from its queue by an event source mapping (and invoked, if `invokedAsync`). */
  readonly workers: readonly Worker[];
  /** The functions invoked asynchronously (bus rules' targets, and `Invoke` with `InvocationType: Event`). */
  readonly busFunctions: readonly BusFunction[];
  readonly invoke: InvokeFunction;
  readonly access?: LocalAccess;
  /** When set, the endpoint is written to `<dataDir>/lambda-endpoint.json` while the stand-in runs. */
  readonly dataDir?: string;
  /** How long stop() waits for running invocations to settle (default 2000 ms). */
  readonly stopGraceMs?: number;
  /**
   * A bus function's retry comes no sooner than its timeout plus this (default 6 s: the holds' clock slack and
   * a second). Only stand-in tests whose functions take no holds shorten it.
   */
  readonly asyncRetryAfterDeadlineMs?: number;
  /** Where poller warnings go (invocation failures, malformed partial batch responses); default stderr. */
  readonly log?: (line: string) => void;
}

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** A function name, partial ARN or ARN, optionally with a qualifier (Lambda's `FunctionName` formats). */
const FUNCTION_NAME =
  /^(?:(?:arn:aws[a-z-]*:lambda:([a-z0-9-]+):)?(\d{12}):function:)?([A-Za-z0-9_-]{1,64})(?::([A-Za-z0-9_$-]{1,128}))?$/;
const INVOCATION_TYPES = ['Event', 'RequestResponse', 'DryRun'];

export class LocalLambda {
  private readonly region: string;
  private readonly accountId: string;
  private readonly log: (line: string) => void;
  private readonly mappings: EventSourceMapping[] = [];
  /** Lambda's asynchronous queues of the bus functions, by function id. */
  private readonly asyncQueues = new Map<string, AsyncInvocationQueue>();
  /** The functions invoked asynchronously, by their local name. */
  private readonly byName = new Map<string, FunctionRef>();
  private server: LoopbackServer | undefined;
  private stopped = false;
  private stopping: Promise<void> | undefined;

  constructor(private readonly opts: LocalLambdaOptions) {
    const { sqs } = opts;
    // The account and region of the queues' ARNs: one account, one region, as on AWS.
    this.region = sqs.region;
    this.accountId = sqs.accountId;
    this.log = opts.log ?? ((line) => console.warn(`[lambda] ${line}`));
    // The bus functions, and the workers that also take messages by asynchronous invocation (their on-failure
    // destination: their queue's DLQ).
    const asyncFunctions: { fn: AsyncInvokedFunction; onFailure: string }[] = [
      ...opts.busFunctions.map((fn) => ({ fn, onFailure: `${fn.deadLetterQueue}-dlq` })),
      ...opts.workers.flatMap((worker) =>
        worker.invokedAsync
          ? [{ fn: { ...worker, ...worker.invokedAsync }, onFailure: `${worker.queue}-dlq` }]
          : [],
      ),
    ];
    for (const { fn, onFailure } of asyncFunctions) {
      const asyncQueue = new AsyncInvocationQueue({
        fn,
        // Lambda's own queue is eventually consistent too: an event may be invoked twice.
        queue: sqs.internalQueue(`lambda-async-${fn.id}`),
        onFailure: sqs.destinationQueue(onFailure),
        invoke: opts.invoke,
        durable: () => sqs.durable(),
        region: this.region,
        accountId: this.accountId,
        log: this.log,
        retryAfterDeadlineMs: opts.asyncRetryAfterDeadlineMs,
      });
      this.asyncQueues.set(fn.id, asyncQueue);
      this.byName.set(localFunctionName(fn), fn);
    }
    for (const worker of opts.workers) this.mappings.push(this.mappingOf(worker));
    sqs.onStop(() => this.stopInvoking());
  }

  /** The worker's event source mapping, refused as CreateEventSourceMapping would refuse it. */
  private mappingOf(worker: Worker): EventSourceMapping {
    let queue: LocalQueue;
    try {
      queue = this.opts.sqs.declaredQueue(worker.queue);
    } catch (error) {
      throw new Error(`Worker ${worker.id}: ${(error as Error).message}`);
    }
    if (!Number.isInteger(worker.batchSize) || worker.batchSize < 1 || worker.batchSize > 10_000) {
      throw new Error(`Worker ${worker.id}: batchSize must be an integer between 1 and 10000`);
    }
    const timeoutSecs = worker.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs;
    if (timeoutSecs > queue.visibilityTimeoutSecs) {
      throw new Error(
        `Worker ${worker.id}: queue visibility timeout ${queue.visibilityTimeoutSecs} s is less than function timeout ${timeoutSecs} s`,
      );
    }
    if (worker.batchSize > 10 && worker.maxBatchingWindowSecs < 1) {
      throw new Error(`Worker ${worker.id}: a batchSize above 10 needs maxBatchingWindowSecs of at least 1`);
    }
    return new EventSourceMapping({
      worker,
      queue,
      invoke: this.opts.invoke,
      region: this.region,
      timeScale: this.opts.sqs.timeScale,
      durable: () => this.opts.sqs.durable(),
      log: this.log,
    });
  }

  /**
   * Invokes a bus function, or a worker declaring `invokedAsync`, asynchronously (Lambda `Invoke` with
   * `InvocationType: Event`, as EventBridge does): resolves with the request id once the event is durable in the
   * function's asynchronous queue.
   */
  invokeAsync(functionId: string, payload: unknown, delayMs = 0): Promise<string> {
    return this.asyncQueue(functionId).enqueue(payload, delayMs);
  }

  /** The ARN of a function invoked asynchronously (throws for another id). */
  asyncFunctionArn(functionId: string): string {
    return this.asyncQueue(functionId).functionArn.replace(/:\$LATEST$/, '');
  }

  private asyncQueue(functionId: string): AsyncInvocationQueue {
    const asyncQueue = this.asyncQueues.get(functionId);
    if (!asyncQueue) throw new Error(`Function ${functionId} is not invoked asynchronously`);
    return asyncQueue;
  }

  /** Events waiting or running in the asynchronous queues (benchmarks wait for 0). */
  asyncBacklog(): number {
    return [...this.asyncQueues.values()].reduce((backlog, asyncQueue) => backlog + asyncQueue.backlog(), 0);
  }

  /** Starts the mappings, the asynchronous queues and the `Invoke` endpoint; after the SQS stand-in's start. */
  async start(): Promise<void> {
    if (this.server) return;
    if (this.stopped) throw new Error('A stopped LocalLambda cannot restart: create a new one');
    // The endpoint first: if it cannot start, no poller is left running.
    this.server = await startLoopbackServer('LocalLambda', (request) => this.handle(request), errorReply);
    for (const mapping of this.mappings) mapping.start();
    for (const asyncQueue of this.asyncQueues.values()) asyncQueue.start();
    if (this.opts.dataDir) {
      const state: Omit<LambdaState, 'pid'> = {
        endpoint: this.server.endpoint,
        region: this.region,
        accountId: this.accountId,
      };
      writeStandInState(this.opts.dataDir, LAMBDA_STATE_FILE, state);
    }
  }

  get endpoint(): string {
    if (!this.server) throw new Error('LocalLambda is not started');
    return this.server.endpoint;
  }

  async stop(): Promise<void> {
    await this.stopInvoking();
    await this.server?.close();
    this.server = undefined;
    if (this.opts.dataDir) removeStandInState(this.opts.dataDir, LAMBDA_STATE_FILE);
  }

  /** Stops the pollers, letting running invocations settle (also run by the SQS stand-in's stop). */
  private stopInvoking(): Promise<void> {
    this.stopped = true;
    const graceMs = this.opts.stopGraceMs ?? 2000;
    this.stopping ??= Promise.all([
      ...this.mappings.map((mapping) => mapping.stop(graceMs)),
      ...[...this.asyncQueues.values()].map((asyncQueue) => asyncQueue.stop(graceMs)),
    ]).then(() => undefined);
    return this.stopping;
  }

  private functionArn(name: string, qualifier?: string): string {
    return `arn:aws:lambda:${this.region}:${this.accountId}:function:${name}${qualifier ? `:${qualifier}` : ''}`;
  }

  private async handle(request: HttpRequest): Promise<HttpReply> {
    const path = INVOKE_PATH.exec(request.url.pathname);
    if (request.method !== 'POST' || !path) {
      throw new AwsServiceError(
        'UnsupportedOperation',
        `LocalLambda implements only Invoke (POST /2015-03-31/functions/{FunctionName}/invocations), not ${request.method} ${request.url.pathname}`,
      );
    }
    const named = this.parseName(decodeURIComponent(path[1]!), request.url.searchParams.get('Qualifier'));
    // A function may invoke exactly the functions its declaration names (`invokes`), unqualified; an operator's
    // tool any. IAM decides before Lambda looks the function up.
    const target = this.byName.get(named.name);
    this.opts.access?.check(
      request.headers,
      'lambda:InvokeFunction',
      this.functionArn(named.name, named.qualifier),
      (grants) => target !== undefined && named.qualifier === undefined && grants.invokes.has(target.id),
      403,
    );
    const fn = this.lookUp(named);
    const type = header(request, 'x-amz-invocation-type') ?? 'RequestResponse';
    if (!INVOCATION_TYPES.includes(type)) {
      throw new AwsServiceError(
        'ValidationException',
        `1 validation error detected: Value '${type}' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [${INVOCATION_TYPES.join(', ')}]`,
      );
    }
    if (type !== 'Event') {
      throw new AwsServiceError(
        'UnsupportedOperation',
        `LocalLambda implements only asynchronous invocation (X-Amz-Invocation-Type: Event), not ${type}`,
      );
    }
    if (request.bodyBytes > LAMBDA_MAX_ASYNC_PAYLOAD_BYTES) {
      throw new AwsServiceError(
        'RequestTooLargeException',
        `Request must be smaller than ${LAMBDA_MAX_ASYNC_PAYLOAD_BYTES} bytes for the InvokeAsync operation`,
        413,
      );
    }
    let payload: unknown;
    try {
      payload = request.body.trim() === '' ? {} : JSON.parse(request.body);
    } catch {
      throw new AwsServiceError('InvalidRequestContentException', 'Could not parse request body into json');
    }
    const requestId = await this.invokeAsync(fn.id, payload);
    return { status: 202, headers: { 'x-amzn-requestid': requestId }, body: '' };
  }

  /** What a `FunctionName` (and `Qualifier`) names. */
  private parseName(functionName: string, qualifierParam: string | null): FunctionNamed {
    const match = FUNCTION_NAME.exec(functionName);
    if (!match) {
      throw new AwsServiceError(
        'ValidationException',
        `1 validation error detected: Value '${functionName}' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_\\.]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?`,
      );
    }
    const [, region, account, name = '', nameQualifier] = match;
    if (nameQualifier && qualifierParam && nameQualifier !== qualifierParam) {
      throw new AwsServiceError(
        'InvalidParameterValueException',
        'The derived qualifier from the function name does not match the specified qualifier.',
      );
    }
    const qualifier = nameQualifier ?? qualifierParam ?? undefined;
    return {
      name,
      ...(region ? { region } : {}),
      ...(account ? { account } : {}),
      ...(qualifier ? { qualifier } : {}),
    };
  }

  /** The bus function named; only `$LATEST` exists locally. */
  private lookUp({ name, region, account, qualifier }: FunctionNamed): FunctionRef {
    const fn = this.byName.get(name);
    if (
      !fn ||
      (region !== undefined && region !== this.region) ||
      (account !== undefined && account !== this.accountId) ||
      (qualifier !== undefined && qualifier !== '$LATEST')
    ) {
      throw new AwsServiceError(
        'ResourceNotFoundException',
        `Function not found: ${this.functionArn(name, qualifier)} (the local runtime invokes ${[
          ...this.byName.keys(),
        ].join(', ')}, version $LATEST)`,
        404,
      );
    }
    return fn;
  }
}

interface FunctionNamed {
  readonly name: string;
  readonly region?: string;
  readonly account?: string;
  readonly qualifier?: string;
}

const header = (request: HttpRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Lambda's REST-JSON error: the code in `X-Amzn-ErrorType`, `{Type, Message}` in the body. */
const errorReply = (error: AwsServiceError): HttpReply => ({
  status: error.status,
  headers: { 'content-type': 'application/json', 'x-amzn-errortype': error.code, ...error.extraHeaders },
  body: JSON.stringify({ Type: error.status >= 500 ? 'Service' : 'User', Message: error.message }),
});
