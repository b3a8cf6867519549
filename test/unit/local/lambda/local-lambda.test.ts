import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalAccess } from '../../../../local/access';
import { LocalLambda } from '../../../../local/lambda/local-lambda';
import { LambdaInvocationError, localFunctionName } from '../../../../local/lambda/runner';
import { LocalSqs } from '../../../../local/sqs/local-sqs';
import { waitUntil } from '../../../support/await';
import { ordersSink } from '../../../support/fixtures/wiring';

/**
 * The Lambda `Invoke` stand-in (local/lambda/local-lambda.ts) against the real @aws-sdk/client-lambda: an
 * asynchronous invocation of a bus function, named as Lambda lets callers name it, is answered 202 and goes to
 * the function's asynchronous queue (with its retries and on-failure record); anything else gets Lambda's errors.
 */
const sink = ordersSink;
const NAME = localFunctionName(sink);
const ARN = `arn:aws:lambda:us-east-1:000000000000:function:${NAME}`;

let failing = false;
const invoked: { event: unknown; requestId: string | undefined }[] = [];
const access = new LocalAccess('000000000000', 'us-east-1');
let sqs: LocalSqs;
let lambda: LocalLambda;
let operator: LambdaClient;

const clientWith = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
  new LambdaClient({ endpoint: lambda.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });

const invokeEvent = (client: LambdaClient, functionName: string, payload: string, qualifier?: string) =>
  client.send(
    new InvokeCommand({
      FunctionName: functionName,
      InvocationType: 'Event',
      Payload: new TextEncoder().encode(payload),
      ...(qualifier ? { Qualifier: qualifier } : {}),
    }),
  );

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected an error');
    },
    (error: Error & { $metadata?: { httpStatusCode?: number } }) => ({
      name: error.name,
      message: error.message,
      status: error.$metadata?.httpStatusCode,
    }),
  );

beforeAll(async () => {
  sqs = new LocalSqs({ queues: [], log: () => {} });
  lambda = new LocalLambda({
    sqs,
    workers: [],
    busFunctions: [sink],
    invoke: async (fn, event, options) => {
      invoked.push({ event, requestId: options?.requestId });
      if (failing) throw new LambdaInvocationError(fn.id, 'Error', 'the sink is down');
      return null;
    },
    access,
    log: () => {},
  });
  await sqs.start();
  await lambda.start();
  operator = clientWith({ accessKeyId: 'local', secretAccessKey: 'local' });
});
afterAll(async () => {
  operator?.destroy();
  await lambda?.stop();
  await sqs?.stop();
});
beforeEach(() => {
  invoked.length = 0;
  failing = false;
});

describe('the local Lambda Invoke stand-in', () => {
  it('answers an asynchronous invocation 202 and invokes the function with the event under the request id', async () => {
    const event = { id: 'e-1', detail: { n: 1 }, 'replay-name': 'r' };
    const answer = await invokeEvent(operator, NAME, JSON.stringify(event));
    expect(answer.StatusCode).toBe(202);
    await waitUntil(() => invoked.length === 1, 20);
    expect(invoked[0]).toEqual({ event, requestId: answer.$metadata.requestId });
  });

  it('takes every form of the function’s name Lambda takes: name, ARN, partial ARN, $LATEST', async () => {
    for (const [name, qualifier] of [
      [ARN, undefined],
      [`${ARN}:$LATEST`, undefined],
      [`000000000000:function:${NAME}`, undefined],
      [NAME, '$LATEST'],
    ] as const) {
      expect((await invokeEvent(operator, name, `{"name":"${name}"}`, qualifier)).StatusCode).toBe(202);
    }
    await waitUntil(() => invoked.length === 4, 20);
  });

  it('gives the event Lambda’s retries and on-failure record, as a bus invocation', async () => {
    failing = true;
    await invokeEvent(operator, ARN, '{"id":"e-dead"}');
    await waitUntil(() => sqs.stats('ordersSink-dlq').ApproximateNumberOfMessages === 1, 20);
  });

  it('refuses what it does not serve with Lambda’s errors', async () => {
    expect(await errorOf(invokeEvent(operator, 'notify-local-other', '{}'))).toMatchObject({
      name: 'ResourceNotFoundException',
      message: expect.stringContaining(
        'Function not found: arn:aws:lambda:us-east-1:000000000000:function:notify-local-other',
      ),
      status: 404,
    });
    // No versions or aliases locally; another region or account is another function.
    for (const [name, qualifier] of [
      [NAME, '1'],
      [`arn:aws:lambda:eu-west-1:000000000000:function:${NAME}`, undefined],
      [`111111111111:function:${NAME}`, undefined],
    ] as const) {
      expect((await errorOf(invokeEvent(operator, name, '{}', qualifier))).name).toBe(
        'ResourceNotFoundException',
      );
    }
    expect(
      await errorOf(
        operator.send(new InvokeCommand({ FunctionName: NAME, Payload: new TextEncoder().encode('{}') })),
      ),
    ).toMatchObject({
      name: 'UnsupportedOperation',
      message: expect.stringContaining(
        'only asynchronous invocation (X-Amz-Invocation-Type: Event), not RequestResponse',
      ),
      status: 400,
    });
    expect((await errorOf(invokeEvent(operator, 'not a name!', '{}'))).name).toBe('ValidationException');
    expect(await errorOf(invokeEvent(operator, NAME, '{not json'))).toMatchObject({
      name: 'InvalidRequestContentException',
      status: 400,
    });
    expect(await errorOf(invokeEvent(operator, NAME, `"${'x'.repeat(1_048_576)}"`))).toMatchObject({
      name: 'RequestTooLargeException',
      status: 413,
    });
    expect(invoked).toEqual([]);
  });

  it('lets a function invoke exactly the functions it declares in `invokes`, unqualified, as its IAM grant does', async () => {
    const caller = clientWith(
      access.credentialsFor({ id: 'orders.create', handler: 'orders.ts', invokes: [sink.id] }),
    );
    try {
      expect((await invokeEvent(caller, ARN, '{"granted":true}')).StatusCode).toBe(202);
      await waitUntil(() => invoked.length === 1);
      expect(invoked.splice(0).map(({ event }) => event)).toEqual([{ granted: true }]);
      // The grant is on the function's ARN alone: no version or alias, no other function.
      for (const [name, qualifier] of [
        [NAME, '$LATEST'],
        ['notify-local-other', undefined],
      ] as const) {
        expect((await errorOf(invokeEvent(caller, name, '{}', qualifier))).name).toBe(
          'AccessDeniedException',
        );
      }
    } finally {
      caller.destroy();
    }
    expect(invoked).toEqual([]);
  });

  it('refuses the credentials of a function that declares no `invokes` of it', async () => {
    const asFunction = clientWith(access.credentialsFor({ ...sink, id: 'webhooks.match' }));
    try {
      expect(await errorOf(invokeEvent(asFunction, NAME, '{}'))).toMatchObject({
        name: 'AccessDeniedException',
        message: expect.stringContaining(
          `is not authorized to perform: lambda:InvokeFunction on resource: ${ARN}`,
        ),
        status: 403,
      });
      // IAM decides before Lambda looks the function up.
      expect((await errorOf(invokeEvent(asFunction, 'notify-local-other', '{}'))).name).toBe(
        'AccessDeniedException',
      );
    } finally {
      asFunction.destroy();
    }
    expect(invoked).toEqual([]);
  });
});
