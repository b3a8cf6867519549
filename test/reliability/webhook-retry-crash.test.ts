import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SQS_STATE_FILE, type SqsState } from '../../local/sqs/local-sqs';
import { readStandInState } from '../../local/stand-in-state';
import { webhookCrash } from '../support/webhook-crash';

/**
 * The runtime killed while the delivery worker makes a retry (a receive of a delivery-queue message that claimed
 * the attempt and waits on the receiver). The claim holds until that invocation's deadline plus slack; the
 * message must not come back before then, as on SQS, whose visibility timeout (180 s) outlasts any invocation
 * (30 s): SQS keeps a received message hidden whether or not its consumer lives. Were it handed out again at
 * once after the restart, each receive would find the dead receive's claim live and fail, and at this time scale
 * (visibility 0.9 s) the message would run through its five receives into the DLQ before the claim expired,
 * leaving the delivery `sending` for good (docs/local-standins.md, Persistence).
 */
const crash = webhookCrash('retry-crash', {
  NOTIFY_LOCAL_TIME_SCALE: '0.005',
  // The delivery worker's 30 s timeout shortened: the dead receive's claim expires 20 s after it began.
  NOTIFY_LOCAL_FUNCTION_TIMEOUTS: 'webhooks.deliver=15',
  NOTIFY_WEBHOOK_RETRY_SCHEDULE: '1s',
});

/** Messages in the runtime's webhook delivery DLQ (a delivery given up on by SQS, not by the service). */
const deadLetters = async (): Promise<string | undefined> => {
  const state = readStandInState<SqsState>(crash.dataDir, [SQS_STATE_FILE]);
  const sqs = new SQSClient({
    endpoint: state.endpoint,
    region: state.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: `${state.endpoint}/${state.accountId}/webhookDeliveries-dlq`,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    return attributes.Attributes?.ApproximateNumberOfMessages;
  } finally {
    sqs.destroy();
  }
};

describe('the runtime killed while the delivery worker makes a retry', () => {
  it('makes the attempt again once its claim has expired, and loses nothing to the DLQ', async () => {
    // The matcher's first attempt fails, so attempt 2 goes through the delivery queue; its POST is held
    // unanswered until the kill; the next one is answered.
    const { eventId, settledDeliveries } = await crash.cutOffAttempt(
      [{ status: 500 }, { status: 200, delayMs: 600_000 }, { status: 200 }],
      2,
    );
    const delivery = await settledDeliveries(120_000);
    expect(await deadLetters(), crash.stderr()).toBe('0');
    expect(delivery, crash.stderr()).toHaveLength(1);
    expect(delivery?.[0]).toMatchObject({ id: eventId, status: 'succeeded' });
    // The 500, then the attempt made again after the claim (the cut-off one never recorded an outcome).
    expect(delivery?.[0]?.attempts).toHaveLength(2);
    const received = crash.received();
    expect(received).toHaveLength(3);
    expect(new Set(received.map((request) => request.headers['webhook-id']))).toEqual(new Set([eventId]));
  }, 300_000);
});
