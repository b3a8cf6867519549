import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { mintServiceToken, readDevAuth } from '../../local/dev-auth';
import { type Answer, type Received, WebhookReceiver } from '../e2e/webhook-receiver';
import { apiClient, eventually } from './api';
import { type RuntimeProcess, startRuntimeProcess } from './runtime-process';

/** A delivery as GET /webhooks/{id}/deliveries lists it (what these tests read of it). */
export interface ListedDelivery {
  readonly id: string;
  readonly status: string;
  readonly attempts: unknown[];
}

/**
 * A webhook attempt cut off by a crash: `npm start --data` in a child process (test/support/runtime-process.ts)
 * with a webhook whose receiver holds one POST unanswered, killed once that POST has arrived and started again
 * on the same data. The runtime, the receiver and the folder go after the file.
 */
export const webhookCrash = (name: string, env: Record<string, string>) => {
  const work = mkdtempSync(join(tmpdir(), `notify-${name}-`));
  const dataDir = join(work, 'data');
  const receiver = new WebhookReceiver();
  const path = `/${name}`;
  let runtime: RuntimeProcess | undefined;

  afterAll(async () => {
    await runtime?.crash();
    await receiver.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const current = (): RuntimeProcess => {
    if (!runtime) throw new Error('the runtime is not started');
    return runtime;
  };

  /**
   * Starts the runtime with a webhook answering `answers` (the one with a long `delayMs` is held until the
   * kill), publishes one event to it, and once the receiver has `heldPost` POSTs, kills the runtime and starts
   * it again. The event's id, and a reader of the webhook's deliveries.
   */
  const cutOffAttempt = async (answers: Answer[], heldPost: number) => {
    await receiver.start();
    const start = (port?: number) => startRuntimeProcess({ work, dataDir, ...(port ? { port } : {}), env });
    runtime = await start();
    const port = runtime.port;
    const settings = readDevAuth(join(work, 'dev-auth.json'));
    if (!settings) throw new Error('npm start wrote no dev-auth.json');
    const service = await mintServiceToken(settings, name, ['events:publish', 'webhooks:admin']);
    const api = apiClient(() => runtime?.restUrl ?? '');
    const secret = `${name}-secret-${randomUUID()}`;
    const eventType = `${name}.happened`;
    const hook = await api('POST', '/webhooks', service, {
      url: receiver.endpoint(path, secret, answers),
      secret,
      event_filters: [eventType],
      name,
    });
    expect(hook.status).toBe(201);
    const published = await api('POST', '/events', service, {
      event_type: eventType,
      source: name,
      version: 1,
      data: { n: 1 },
    });
    expect(published.status).toBe(202);
    // The held POST has reached the receiver and waits for its answer: kill everything now.
    await eventually(
      async () => receiver.at(path).length,
      (count) => count === heldPost,
      120_000,
    );
    await runtime.crash();
    runtime = await start(port);
    /** The webhook's deliveries once the first is `succeeded` (or as they are when `timeoutMs` is up). */
    const settledDeliveries = (timeoutMs: number) =>
      eventually(
        async () => {
          const listed = await api('GET', `/webhooks/${hook.body.id}/deliveries`, service);
          return listed.body.items as ListedDelivery[] | undefined;
        },
        (items) => items?.[0]?.status === 'succeeded',
        timeoutMs,
      );
    return { eventId: published.body.id as string, settledDeliveries };
  };

  return {
    dataDir,
    cutOffAttempt,
    /** The POSTs the receiver got. */
    received: (): Received[] => receiver.at(path),
    /** The runtime's stderr, for failure messages. */
    stderr: (): string => current().stderr(),
  };
};
