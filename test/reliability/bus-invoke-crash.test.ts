import { describe, expect, it } from 'vitest';
import { webhookCrash } from '../support/webhook-crash';

/**
 * The matcher is invoked by the bus directly (Lambda asynchronous invocation, no queue): when the runtime dies
 * while the matcher's first attempt waits on the receiver, the event is still in the matcher's asynchronous
 * queue (journaled) and is invoked again after the restart under the same request id, once the dead invocation's
 * deadline and the slack of its claim have passed (as Lambda retries a dead invocation a minute later). That
 * invocation takes the expired claim over and sends again (or, should the claim still be live, hands the attempt
 * to the delivery queue for after its expiry, which does so). The receiver gets the one delivery under one
 * `webhook-id`, with the same body and a valid signature (the cut-off POST's answer never came back, so it is
 * sent again, as docs/webhooks.md says: at-least-once, receivers drop repeats by `webhook-id`), and the delivery
 * is recorded once, succeeded, with the one attempt that got an answer.
 */
const crash = webhookCrash('bus-crash', {
  NOTIFY_LOCAL_TIME_SCALE: '0.1',
  // The matcher's 30 s timeout shortened: the dead attempt's claim expires 15 s after it started, not 35 s.
  NOTIFY_LOCAL_FUNCTION_TIMEOUTS: 'webhooks.match=10',
});

describe('the runtime killed while the matcher makes a first attempt', () => {
  it('delivers the event once under one webhook-id after the restart', async () => {
    // The first POST is held unanswered until the kill; the next ones are answered at once.
    const { eventId, settledDeliveries } = await crash.cutOffAttempt(
      [{ status: 200, delayMs: 600_000 }, { status: 200 }],
      1,
    );
    const delivery = await settledDeliveries(240_000);
    expect(delivery, crash.stderr()).toHaveLength(1);
    expect(delivery?.[0]).toMatchObject({ id: eventId, status: 'succeeded' });
    // The cut-off attempt never recorded an outcome; the one answered is the delivery's only attempt.
    expect(delivery?.[0]?.attempts).toHaveLength(1);
    const received = crash.received();
    expect(received.length).toBeGreaterThanOrEqual(2);
    expect(new Set(received.map((request) => request.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(new Set(received.map((request) => request.body)).size).toBe(1);
    for (const request of received) expect(request.verifyError).toBeUndefined();
    // Nothing comes after the success (the retry that took over is the last POST).
    const count = received.length;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(crash.received()).toHaveLength(count);
  }, 420_000);
});
