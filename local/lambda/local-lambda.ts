import { LAMBDA_MAX_ASYNC_PAYLOAD_BYTES } from '../../lib/wiring';
import type { LocalAccess } from '../access';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from '../aws-account';
import {
  AwsServiceError,
  type HttpReply,
  type HttpRequest,
  type LoopbackServer,
  startLoopbackServer,
} from '../sqs/aws-http';
import type { LocalSqs } from '../sqs/local-sqs';
import { removeStandInState, writeStandInState } from '../stand-in-state';
import { localFunctionName } from './runner';
import type { FunctionRef } from './types';

/**
 * A local, wire-compatible stand-in for Lambda's `Invoke` of the bus functions with `InvocationType: Event`
 * (REST-JSON, as @aws-sdk/client-lambda sends it: `POST /2015-03-31/functions/{FunctionName}/invocations`,
 * `X-Amz-Invocation-Type: Event`): the event goes to the function's asynchronous queue, the one EventBridge's
 * invocations go to (local/lambda/async-invocation.ts: same retries, same on-failure record), and the answer is
 * 202 once it is durable. It is what `npm run redrive` calls; nothing in the service invokes a function, so a
 * function's own credentials are refused, as IAM would refuse them. See docs/local-standins.md.
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
  /** The functions that can be invoked asynchronously (the bus functions, whose queues live in `sqs`). */
  readonly busFunctions: readonly FunctionRef[];
  readonly sqs: LocalSqs;
  readonly access?: LocalAccess;
  /** When set, the endpoint is written to `<dataDir>/lambda-endpoint.json` while the stand-in runs. */
  readonly dataDir?: string;
  readonly region?: string;
  readonly accountId?: string;
}

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** A function name, partial ARN or ARN, optionally with a qualifier (Lambda's `FunctionName` formats). */
const FUNCTION_NAME =
  /^(?:(?:arn:aws[a-z-]*:lambda:([a-z0-9-]+):)?(\d{12}):function:)?([A-Za-z0-9_-]{1,64})(?::([A-Za-z0-9_$-]{1,128}))?$/;
const INVOCATION_TYPES = ['Event', 'RequestResponse', 'DryRun'];

export class LocalLambda {
  private readonly region: string;
  private readonly accountId: string;
  /** Bus functions by their local name. */
  private readonly byName = new Map<string, FunctionRef>();
  private server: LoopbackServer | undefined;

  constructor(private readonly opts: LocalLambdaOptions) {
    this.region = opts.region ?? LOCAL_REGION;
    this.accountId = opts.accountId ?? LOCAL_ACCOUNT_ID;
    for (const fn of opts.busFunctions) {
      // Fail at start when a function has no asynchronous queue to go to.
      opts.sqs.busFunctionArn(fn.id);
      this.byName.set(localFunctionName(fn), fn);
    }
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.server = await startLoopbackServer('LocalLambda', (request) => this.handle(request), errorReply);
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
    await this.server?.close();
    this.server = undefined;
    if (this.opts.dataDir) removeStandInState(this.opts.dataDir, LAMBDA_STATE_FILE);
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
    // No declared function is granted lambda:InvokeFunction: only an operator's tool may call this. IAM decides
    // before Lambda looks the function up.
    this.opts.access?.check(
      request.headers,
      'lambda:InvokeFunction',
      this.functionArn(named.name, named.qualifier),
      () => false,
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
    const requestId = await this.opts.sqs.invokeAsync(fn.id, payload);
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
