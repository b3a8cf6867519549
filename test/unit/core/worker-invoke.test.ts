/**
 * The hand-off to a worker by asynchronous invocation (lambdas/core/worker-invoke.ts) signs its own `Invoke`
 * instead of carrying @aws-sdk/client-lambda: here its request is compared with the one the SDK's client sends for
 * the same function, payload, credentials and time (a loopback server stands for Lambda and answers as Lambda does).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { envNames } from '../../../common/env';
import { messageQueue } from '../../../lambdas/core/message-queue';
import { invokeWorker } from '../../../lambdas/core/worker-invoke';
import * as z from '../../../lambdas/core/zod';
import { readBody } from '../../../local/push/stand-in';
import { listenOnLoopback, stopServer } from '../../support/loopback-server';

const ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:notify-prod-push-deliver';
const queue = messageQueue('kinds', [z.object({ kind: z.literal('greet'), name: z.string() })]);
const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

interface Seen {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}
const seen: Seen[] = [];
/** Lambda's answers, in turn (then 202). */
let answers: number[] = [];
const server = createServer(async (request, response) => {
  const body = (await readBody(request, 1 << 20))?.toString('utf8') ?? '';
  seen.push({ method: request.method, url: request.url, headers: request.headers, body });
  const status = answers.shift() ?? 202;
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': 'r-1' });
  response.end(status === 202 ? '' : JSON.stringify({ Type: 'Service', Message: `status ${status}` }));
});
let endpoint = '';
const saved = { ...process.env };

beforeAll(async () => {
  endpoint = await listenOnLoopback(server);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_LAMBDA: endpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    [envNames.functionArn('push.deliver')]: ARN,
  });
  delete process.env.AWS_SESSION_TOKEN;
});
afterEach(() => {
  vi.useRealTimers();
  seen.length = 0;
  answers = [];
});
afterAll(async () => {
  process.env = saved;
  await stopServer(server);
});

/**
 * What both send and sign: method, path, body, invocation type, time and the signature's scope and signed headers
 * (the SDK also signs headers of its own making: `amz-sdk-*`, `x-amz-user-agent`, `content-length`).
 */
const comparable = ({ method, url, headers, body }: Seen) => ({
  method,
  url,
  body,
  type: headers['x-amz-invocation-type'],
  date: headers['x-amz-date'],
  credential: /Credential=([^,]+)/.exec(String(headers.authorization))?.[1],
  signs: /SignedHeaders=([^,]+)/
    .exec(String(headers.authorization))?.[1]
    ?.split(';')
    .filter((name) => !/^(amz-sdk-|x-amz-user-agent$|content-length$)/.test(name)),
});

describe('invokeWorker', () => {
  it('sends the request @aws-sdk/client-lambda sends for Invoke with InvocationType Event', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T12:00:00Z') });
    await invokeWorker('push.deliver', queue, [{ kind: 'greet', name: 'ann' }]);
    const client = new LambdaClient({ endpoint, region: 'eu-west-1', credentials, maxAttempts: 1 });
    try {
      const answer = await client.send(
        new InvokeCommand({
          FunctionName: ARN,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(JSON.stringify({ kind: 'greet', name: 'ann' })),
        }),
      );
      expect(answer.StatusCode).toBe(202);
    } finally {
      client.destroy();
    }
    const [ours, sdk] = seen as [Seen, Seen];
    expect(comparable(ours)).toEqual(comparable(sdk));
    expect(ours.url).toBe(`/2015-03-31/functions/${encodeURIComponent(ARN)}/invocations`);
    expect(comparable(ours).credential).toBe('AKIDEXAMPLE/20261127/eu-west-1/lambda/aws4_request');
  });

  it('tries again when Lambda throttles or fails, and throws what it finally answered', async () => {
    answers = [429, 503];
    await invokeWorker('push.deliver', queue, [{ kind: 'greet', name: 'ben' }]);
    expect(seen).toHaveLength(3);
    answers = [500, 500, 500];
    await expect(invokeWorker('push.deliver', queue, [{ kind: 'greet', name: 'cy' }])).rejects.toThrow(
      /Lambda answered 500/,
    );
    seen.length = 0;
    answers = [403];
    await expect(invokeWorker('push.deliver', queue, [{ kind: 'greet', name: 'dee' }])).rejects.toThrow(
      /Lambda answered 403/,
    );
    expect(seen).toHaveLength(1);
  });

  it('checks every message against the queue’s schema before it sends any', async () => {
    await expect(
      invokeWorker('push.deliver', queue, [{ kind: 'greet', name: 'eve' }, { kind: 'greet' } as never]),
    ).rejects.toThrow(/not a kinds message/);
    expect(seen).toEqual([]);
  });
});
