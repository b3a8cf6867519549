import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { v4 as uuidv4 } from 'uuid';
import { DEFAULT_FUNCTION } from '../../lib/wiring';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../aws-account';
import { inInvocation } from './invoke-store';
import type { FunctionRef, InvokeFunction } from './types';

/** The repository root: handler paths in the declaration are relative to it. */
export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** Lambda's synchronous-invocation response limit (6 MB). */
export const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;

/** The function ran past its declared timeout (Lambda's "Task timed out after N seconds"). */
export class LambdaTimeoutError extends Error {
  constructor(
    readonly functionId: string,
    readonly timeoutSecs: number,
  ) {
    super(`Task timed out after ${timeoutSecs.toFixed(2)} seconds`);
    this.name = 'LambdaTimeoutError';
  }
}

/** The handler threw, rejected, or returned something Lambda cannot return (an invocation error). */
export class LambdaInvocationError extends Error {
  constructor(
    readonly functionId: string,
    /** Lambda's `errorType`: the thrown error's name. */
    readonly errorType: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LambdaInvocationError';
  }
}

/** Per-function counters for the benchmarks: what Lambda would bill (init and invocation durations). */
export interface FunctionMeter {
  /** Module import time of the cold start (Lambda's INIT), in ms; undefined until the first invocation. */
  initMs: number | undefined;
  invocations: number;
  errors: number;
  timeouts: number;
  /** Sum of invocation durations in ms (without init). */
  totalDurationMs: number;
  maxDurationMs: number;
}

/** Counters of every function invoked in this process, keyed by function id. */
export const metering = {
  functions: new Map<string, FunctionMeter>(),
  reset(): void {
    this.functions.clear();
  },
  /** A plain-object copy, e.g. for a benchmark report. */
  snapshot(): Record<string, FunctionMeter> {
    return Object.fromEntries([...this.functions].map(([id, meter]) => [id, { ...meter }]));
  },
};

const meterOf = (functionId: string): FunctionMeter => {
  let meter = metering.functions.get(functionId);
  if (!meter) {
    meter = {
      initMs: undefined,
      invocations: 0,
      errors: 0,
      timeouts: 0,
      totalDurationMs: 0,
      maxDurationMs: 0,
    };
    metering.functions.set(functionId, meter);
  }
  return meter;
};

type Handler = (event: unknown, context: Context) => unknown;

/** One loaded function per id: the import is Lambda's INIT, done once and reused by warm invocations. */
const loaded = new Map<string, Promise<Handler>>();

const loadHandler = (fn: FunctionRef): Promise<Handler> => {
  let pending = loaded.get(fn.id);
  if (!pending) {
    pending = (async () => {
      const started = performance.now();
      const module = (await import(pathToFileURL(resolve(REPO_ROOT, fn.handler)).href)) as {
        handler?: unknown;
      };
      meterOf(fn.id).initMs = performance.now() - started;
      if (typeof module.handler !== 'function') {
        throw new LambdaInvocationError(
          fn.id,
          'Runtime.HandlerNotFound',
          `${fn.handler} does not export a function named handler`,
        );
      }
      return module.handler as Handler;
    })();
    // A failed INIT is retried on the next invocation, as Lambda does with a fresh environment.
    pending.catch(() => loaded.delete(fn.id));
    loaded.set(fn.id, pending);
  }
  return pending;
};

export const localFunctionName = (fn: FunctionRef): string => `notify-local-${fn.id.replace(/[^\w-]/g, '-')}`;

const unsupportedCallback = (name: string) => () => {
  throw new Error(`context.${name} is not available on nodejs24.x: return or throw from the async handler`);
};

const contextFor = (fn: FunctionRef, deadline: number, requestId: string): Context => {
  const functionName = localFunctionName(fn);
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: String(fn.memoryMb ?? DEFAULT_FUNCTION.memoryMb),
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${uuidv4().replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupportedCallback('done'),
    fail: unsupportedCallback('fail'),
    succeed: unsupportedCallback('succeed'),
  };
};

/** Lambda passes events and results as JSON: a handler never shares objects with its caller. */
const throughJson = (value: unknown): unknown => {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
};

export interface LambdaRunnerOptions {
  /** Called with every invocation error (a handler crash or timeout), e.g. to log it; defaults to stderr. */
  readonly onError?: (fn: FunctionRef, error: Error) => void;
}

/**
 * Runs handlers in this process as Lambda would: module imported once per function (INIT), a fresh context
 * per invocation, the declared timeout enforced (the caller gets a LambdaTimeoutError; the abandoned handler
 * keeps running in the background, as nothing in one process can freeze it), and any throw turned into a
 * LambdaInvocationError.
 */
export const createLambdaRunner = (options: LambdaRunnerOptions = {}): InvokeFunction => {
  const report =
    options.onError ??
    ((fn: FunctionRef, error: Error) => {
      process.stderr.write(`[lambda ${fn.id}] ${error.name}: ${error.message}\n`);
    });
  return async (fn, event, options = {}) => {
    const meter = meterOf(fn.id);
    const input = throughJson(event);
    let handler: Handler;
    try {
      handler = await loadHandler(fn);
    } catch (error) {
      meter.errors += 1;
      const failure =
        error instanceof LambdaInvocationError
          ? error
          : new LambdaInvocationError(fn.id, 'Runtime.ImportModuleError', String(error), { cause: error });
      report(fn, failure);
      throw failure;
    }
    const timeoutSecs = fn.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs;
    const started = performance.now();
    const deadline = Date.now() + timeoutSecs * 1000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LambdaTimeoutError(fn.id, timeoutSecs)), timeoutSecs * 1000);
    });
    meter.invocations += 1;
    const requestId = options.requestId ?? uuidv4();
    try {
      const result = await Promise.race([
        Promise.resolve().then(() =>
          inInvocation(requestId, () => handler(input, contextFor(fn, deadline, requestId))),
        ),
        timedOut,
      ]);
      const text = JSON.stringify(result);
      if (text !== undefined && Buffer.byteLength(text) > MAX_RESPONSE_BYTES) {
        throw new LambdaInvocationError(
          fn.id,
          'Runtime.ResponseSizeTooLarge',
          `Response payload size exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes)`,
        );
      }
      return text === undefined ? null : JSON.parse(text);
    } catch (error) {
      const failure =
        error instanceof LambdaTimeoutError || error instanceof LambdaInvocationError
          ? error
          : new LambdaInvocationError(
              fn.id,
              error instanceof Error ? error.name : 'Error',
              error instanceof Error ? error.message : String(error),
              { cause: error },
            );
      if (failure instanceof LambdaTimeoutError) meter.timeouts += 1;
      else meter.errors += 1;
      report(fn, failure);
      throw failure;
    } finally {
      clearTimeout(timer);
      const duration = performance.now() - started;
      meter.totalDurationMs += duration;
      meter.maxDurationMs = Math.max(meter.maxDurationMs, duration);
    }
  };
};
