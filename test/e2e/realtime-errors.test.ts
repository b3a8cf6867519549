import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../lambdas/core/logger';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { HandshakeError, TestClient } from '../support/ws-client';

/**
 * Errors reach WebSocket clients as they reach HTTP clients (docs/contract.md §3, §4): a DynamoDB throttle while a
 * frame is handled is an `error` frame `unavailable` (HTTP's 503), and while `$connect` runs, a handshake refused
 * with 503. The throttle is DynamoDB's own error, thrown once by the SDK client of the running service.
 */
let runtime: Runtime;
const open: TestClient[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime();
}, 60_000);
afterAll(() => runtime?.stop());
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((client) => client.close()));
});

const unique = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** DynamoDB throttles the first request of the service that `matches`; the rest go through. */
const throttleOnce = (matches: (command: { input?: unknown }) => boolean) => {
  const send = DynamoDBDocumentClient.prototype.send;
  let throttled = 0;
  vi.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(function (
    this: DynamoDBDocumentClient,
    command: { input?: unknown },
    ...rest: unknown[]
  ) {
    if (throttled === 0 && matches(command)) {
      throttled += 1;
      return Promise.reject(
        new ProvisionedThroughputExceededException({
          message: 'The level of configured provisioned throughput for the table was exceeded (injected)',
          $metadata: { httpStatusCode: 400 },
        }),
      );
    }
    return (send as (...args: unknown[]) => Promise<unknown>).call(this, command, ...rest);
  } as typeof send);
  return () => throttled;
};

const mentioning =
  (text: string) =>
  (command: { input?: unknown }): boolean =>
    JSON.stringify(command.input ?? {}).includes(text);

/** Keeps the runtime's error logs out of the test output, and what they said. */
const quietErrors = () => {
  const logged: { message: unknown; attributes: Record<string, unknown> }[] = [];
  vi.spyOn(logger, 'error').mockImplementation((message: unknown, ...rest: unknown[]) => {
    logged.push({ message, attributes: (rest[0] ?? {}) as Record<string, unknown> });
  });
  return logged;
};

describe('a DynamoDB throttle', () => {
  it('while a frame is handled answers an error frame `unavailable` with the frame’s id, and the frame can be sent again', async () => {
    const userId = unique('throttled-frame');
    const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(userId)}`);
    open.push(client);
    await client.nextOfType('session');
    const room = unique('room');
    const logged = quietErrors();
    const throttled = throttleOnce(mentioning(`room:${room}`));
    const answer = await client.request({ type: 'subscribe', channel: `room:${room}` });
    expect(throttled()).toBe(1);
    expect(answer).toMatchObject({ type: 'error', code: 'unavailable' });
    expect(String(answer.message)).not.toMatch(/Provisioned|Exception|injected/);
    // Logged as HTTP logs a 5xx: with the error, under the route's keys.
    expect(
      logged.some(
        ({ attributes }) =>
          (attributes.error as Error | undefined)?.name === 'ProvisionedThroughputExceededException',
      ),
    ).toBe(true);
    // Nothing was closed: the same frame goes through now.
    expect(await client.request({ type: 'subscribe', channel: `room:${room}` })).toMatchObject({
      type: 'ack',
      op: 'subscribe',
    });
  });

  it('while `$connect` runs refuses the handshake with 503, as HTTP answers `unavailable`', async () => {
    const userId = unique('throttled-connect');
    const token = await runtime.mintUserToken(userId);
    quietErrors();
    const throttled = throttleOnce(mentioning(userId));
    const refused = await TestClient.open(`${runtime.wsUrl}?token=${token}`).then(
      (client) => {
        open.push(client);
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(throttled()).toBe(1);
    expect(refused).toBeInstanceOf(HandshakeError);
    expect((refused as HandshakeError).status).toBe(503);
    // The client's retry connects.
    const client = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
    open.push(client);
    expect(await client.nextOfType('session')).toMatchObject({ user_id: userId });
  });

  it('while `$connect` opens a connection without a token refuses it with 503 too', async () => {
    quietErrors();
    // The unauthenticated connection's one write: its connection item, without a user.
    const throttled = throttleOnce(
      (command) =>
        command instanceof PutCommand &&
        command.input.Item?.connected_at !== undefined &&
        command.input.Item.user_id === undefined,
    );
    const refused = await TestClient.open(runtime.wsUrl).then(
      (client) => {
        open.push(client);
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(throttled()).toBe(1);
    expect((refused as HandshakeError).status).toBe(503);
  });
});
