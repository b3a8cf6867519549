import { fromEnv } from '@aws-sdk/credential-provider-env';
import { Sha256 } from '@smithy/core/checksum';
import { SignatureV4 } from '@smithy/signature-v4';
import { functionArn, requiredEnv } from './clients';
import { type MessageQueue, messageBody } from './message-queue';

/*
 * Lambda's `Invoke` with `InvocationType: Event`, made here rather than through @aws-sdk/client-lambda: its client
 * class alone would add ≈ 70 KiB to each function that hands work over (`notifications.create` included, whose cold
 * start matters most), for one REST call. The request is the one the SDK sends (REST-JSON, `POST
 * /2015-03-31/functions/{FunctionName}/invocations`, `X-Amz-Invocation-Type: Event`), signed with SigV4 by the
 * signer every SDK client in the bundle already carries, with the function's credentials from its environment.
 */

/** What Lambda answers an asynchronous `Invoke` it accepted: the event is then kept in its queue, durably. */
const ACCEPTED = 202;
/** Per try: the handing function has seconds, not minutes (an HTTP route times out after 10 s). */
const TRY_TIMEOUT_MS = 3_000;

/** Lambda's endpoint: AWS_ENDPOINT_URL_LAMBDA (the local runtime's stand-in), as the SDK reads it, else the region's. */
const endpoint = (): string =>
  process.env.AWS_ENDPOINT_URL_LAMBDA ?? `https://lambda.${requiredEnv('AWS_REGION')}.amazonaws.com`;

let signer: SignatureV4 | undefined;

/** The signer, made once: the function's own credentials from its environment, as the SDK clients read them. */
const lambdaSigner = (): SignatureV4 => {
  signer ??= new SignatureV4({
    service: 'lambda',
    region: requiredEnv('AWS_REGION'),
    credentials: fromEnv(),
    sha256: Sha256,
  });
  return signer;
};

/**
 * One asynchronous invocation of `functionName` with `payload` (JSON text); resolves once Lambda answered 202.
 * Throttled or failed on Lambda's side (429, 5xx), it is tried again, `triesLeft` more times.
 */
const invokeAsync = async (functionName: string, payload: string, triesLeft = 2): Promise<void> => {
  const url = new URL(`/2015-03-31/functions/${encodeURIComponent(functionName)}/invocations`, endpoint());
  const { host: _, ...headers } = (
    await lambdaSigner().sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'content-type': 'application/json', 'x-amz-invocation-type': 'Event' },
      body: payload,
    })
  ).headers;
  const answer = await fetch(url, {
    method: 'POST',
    headers,
    body: payload,
    signal: AbortSignal.timeout(TRY_TIMEOUT_MS),
  });
  const text = await answer.text();
  if (answer.status === ACCEPTED) return;
  if (triesLeft > 0 && (answer.status === 429 || answer.status >= 500)) {
    return invokeAsync(functionName, payload, triesLeft - 1);
  }
  throw new Error(`Lambda answered ${answer.status} to an asynchronous invocation: ${text.slice(0, 500)}`);
};

/**
 * Hands messages of `queue` to its worker `workerId` by asynchronous invocations (Lambda `Invoke`,
 * `InvocationType: Event`; the worker declares `invokedAsync` and the caller `invokes` it in lib/wiring), one
 * invocation per message, each checked against the queue's schema first (message-queue.ts), as `enqueue` checks
 * what it sends. Resolves once Lambda accepted every one (202): Lambda then keeps, retries and, failing, sends it
 * to the queue's DLQ. Throws otherwise, so the caller's own retry takes over, as after a failed SendMessage.
 */
export const invokeWorker = async <T>(
  workerId: string,
  queue: MessageQueue<T>,
  messages: readonly T[],
): Promise<void> => {
  // Checked before any is sent; one over Lambda's 1 MiB is refused by it (413), as SQS refuses an oversized message.
  const payloads = messages.map((message) => messageBody(queue, message));
  const target = functionArn(workerId);
  await Promise.all(payloads.map((payload) => invokeAsync(target, payload)));
};
