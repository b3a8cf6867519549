import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintServiceToken, readDevAuth } from '../../local/dev-auth';
import { WebhookReceiver } from '../e2e/webhook-receiver';
import { apiClient, eventually } from '../support/api';
import { type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process';

/**
 * The matcher is invoked by the bus directly (Lambda asynchronous invocation, no queue): when the runtime dies
 * while the matcher's first attempt waits on the receiver, the event is still in the matcher's asynchronous
 * queue (journaled) and is invoked again after the restart under the same request id. That invocation finds the
 * attempt claimed by its own request id while the claim may be live, and hands it to the delivery queue for after
 * the claim's expiry, which takes the claim over and sends again. The receiver gets the one delivery under one
 * `webhook-id`, with the same body and a valid signature (the cut-off POST's answer never came back, so it is
 * sent again, as docs/webhooks.md says: at-least-once, receivers drop repeats by `webhook-id`), and the delivery
 * is recorded once, succeeded, with the one attempt that got an answer.
 */
const work = mkdtempSync(join(tmpdir(), 'notify-bus-crash-'));
const dataDir = join(work, 'data');
const receiver = new WebhookReceiver();
let runtime: RuntimeProcess | undefined;

afterAll(async () => {
  await runtime?.crash();
  await receiver.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the runtime killed while the matcher makes a first attempt', () => {
  it('delivers the event once under one webhook-id after the restart', async () => {
    await receiver.start();
    const start = (port?: number) =>
      startRuntimeProcess({
        work,
        dataDir,
        ...(port ? { port } : {}),
        // The matcher's 30 s timeout shortened: the dead attempt's claim expires 15 s after it started, not 35 s.
        env: { NOTIFY_LOCAL_TIME_SCALE: '0.1', NOTIFY_LOCAL_FUNCTION_TIMEOUTS: 'webhooks.match=10' },
      });
    runtime = await start();
    const port = runtime.port;
    const settings = readDevAuth(join(work, 'dev-auth.json'));
    if (!settings) throw new Error('npm start wrote no dev-auth.json');
    const service = await mintServiceToken(settings, 'bus-crash', ['events:publish', 'webhooks:admin']);
    const api = apiClient(() => runtime?.restUrl ?? '');
    const secret = `bus-crash-secret-${randomUUID()}`;
    // The first POST is held unanswered until the kill; the next ones are answered at once.
    const hook = await api('POST', '/webhooks', service, {
      url: receiver.endpoint('/bus-crash', secret, [{ status: 200, delayMs: 600_000 }, { status: 200 }]),
      secret,
      event_filters: ['bus.crash'],
      name: 'bus crash',
    });
    expect(hook.status).toBe(201);

    const published = await api('POST', '/events', service, {
      event_type: 'bus.crash',
      source: 'bus-crash',
      version: 1,
      data: { n: 1 },
    });
    expect(published.status).toBe(202);
    const eventId = published.body.id as string;
    // The matcher's first attempt has reached the receiver and waits for its answer: kill everything now.
    await eventually(
      async () => receiver.at('/bus-crash').length,
      (count) => count === 1,
      120_000,
    );
    await runtime.crash();
    runtime = await start(port);

    const delivery = await eventually(
      async () => {
        const listed = await api('GET', `/webhooks/${hook.body.id}/deliveries`, service);
        return listed.body.items as { id: string; status: string; attempts: unknown[] }[] | undefined;
      },
      (items) => items?.[0]?.status === 'succeeded',
      240_000,
    );
    expect(delivery, runtime.stderr()).toHaveLength(1);
    expect(delivery?.[0]).toMatchObject({ id: eventId, status: 'succeeded' });
    // The cut-off attempt never recorded an outcome; the one answered is the delivery's only attempt.
    expect(delivery?.[0]?.attempts).toHaveLength(1);
    const received = receiver.at('/bus-crash');
    expect(received.length).toBeGreaterThanOrEqual(2);
    expect(new Set(received.map((request) => request.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(new Set(received.map((request) => request.body)).size).toBe(1);
    for (const request of received) expect(request.verifyError).toBeUndefined();
    // Nothing comes after the success (the retry that took over is the last POST).
    const count = received.length;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(receiver.at('/bus-crash')).toHaveLength(count);
  }, 420_000);
});
