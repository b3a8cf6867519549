import { randomUUID } from 'node:crypto';
import { canonical } from '../../core/canonical-json';
import { logger } from '../../core/logger';
import { HeldByOtherReceive, holdExpiry, type MessageHandling } from '../../core/message-handling';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { retryAfterSecs } from '../../core/retry-after';
import { AddressRefused } from './address-policy';
import {
  type AttemptLog,
  createDelivery,
  type DeliveryMessage,
  type DeliveryRecord,
  type EventSnapshot,
  enqueueAttempts,
  getDelivery,
  MAX_LOGGED_ATTEMPTS,
  newDeliveryRef,
  queueAttempts,
  ttlFrom,
  updateDelivery,
  waitOutRest,
} from './deliveries';
import { leaseSlot, releaseSlot, type SlotLease } from './endpoint-slots';
import { openSecret } from './secret-box';
import { postTo, type SendResult } from './sender';
import { webhookSettings } from './settings';
import { secretProblem, signatureHeader } from './signature';
import { checkWebhookUrl } from './url-policy';
import { disableWebhook, getWebhook, noteFailure, noteSuccess, type WebhookRecord } from './webhooks';

/**
 * The attempt is claimed by another receive of this same queue message (SQS handed it out twice: a duplicate copy
 * while the first receive runs, or again after that receive died) that may still be running. Acknowledging would
 * delete the message its holder depends on, so the item fails instead: SQS hands it out again after the
 * visibility timeout (180 s), longer than any invocation (30 s), so by then the claim has either been recorded as
 * an outcome or expired, and an expired claim is taken over. (A bus invocation never fails for a live claim: it
 * hands the attempt to the delivery queue, `awaitClaim`.)
 */
export class AttemptHeldByOtherReceive extends HeldByOtherReceive {
  constructor(message: DeliveryMessage, claimExpiresAt: string | undefined) {
    super(
      `attempt ${message.attempt} of delivery ${message.delivery_id} is claimed by another receive of this message until ${claimExpiresAt ?? 'unknown'}; retried later`,
    );
    this.name = 'AttemptHeldByOtherReceive';
  }
}
/** Longest wait of an attempt for a free slot of its endpoint. */
const MAX_DEFERRAL_SECS = 60;

/**
 * Back to the queue: the endpoint has `endpointConcurrency` attempts in flight. The wait doubles with each
 * deferral (1, 2, 4 … 60 s, with jitter), so a backlog behind a slow endpoint costs a few messages a minute each.
 */
const deferAttempt = (message: DeliveryMessage): Promise<void> => {
  const deferrals = (message.deferrals ?? 0) + 1;
  const base = Math.min(MAX_DEFERRAL_SECS, 2 ** (deferrals - 1));
  return enqueueAttempts([{ ...message, deferrals }], base * (1 + Math.random()));
};

/**
 * Contract §3 body: `{"type", "timestamp", "data": {id, event_type, source, version, data, priority, time}}`,
 * byte for byte the same on every attempt: the first is signed from the record the matcher wrote, later ones from
 * the record read back, and DynamoDB keeps no key order in maps — so the fields go in this order and the keys of
 * the event's own `data` sorted.
 */
export const webhookBody = (record: DeliveryRecord): string => {
  const { event } = record;
  return JSON.stringify({
    type: event.event_type,
    timestamp: event.time,
    data: {
      id: event.id,
      event_type: event.event_type,
      source: event.source,
      version: event.version,
      data: canonical(event.data),
      priority: event.priority,
      time: event.time,
    },
  });
};

/** Delay before attempt `attempt + 1`: the schedule's step with ±20 % jitter, never shorter than Retry-After. */
export const retryDelaySecs = (
  schedule: readonly number[],
  attempt: number,
  retryAfter: number | undefined,
  random: () => number = Math.random,
): number => {
  const base = schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 0;
  const jittered = base * (0.8 + 0.4 * random());
  return Math.max(jittered, retryAfter ?? 0);
};

type Outcome =
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'retry'; readonly delaySecs: number }
  | { readonly kind: 'dead_letter'; readonly reason: string };

const describe = (result: SendResult): string =>
  result.status !== undefined ? `HTTP ${result.status}` : (result.error ?? 'no answer');

/** The delivery worker's handling of a message: the rest of a long wait first (`waitOutRest`), then the attempt. */
export const handleDeliveryMessage = async (
  message: DeliveryMessage,
  handling: MessageHandling,
  now = new Date(),
): Promise<void> => {
  if (await waitOutRest(message, now)) return;
  await deliverAttempt(message, handling, now);
};

/**
 * Makes attempt `message.attempt` of a delivery: a conditional claim on (run, attempt) turns duplicate and
 * stale messages into no-ops. Records the attempt, then schedules the next one or dead-letters. A message is
 * acknowledged (this returns) only once the delivery is final or its next attempt is queued, or while another
 * message holds the claim (that message stays unacknowledged until it records an outcome). A claim is taken
 * over only once its holder's invocation is past its deadline: a second receive of the holder's own message
 * may be a duplicate copy running at the same time, so it fails (AttemptHeldByOtherReceive) and comes back.
 * A bus invocation (and a message sent to wait for a claim) that finds a live claim does not rely on the
 * holder's work coming back: it leaves a message on the delivery queue for after the claim (`awaitClaim`).
 */
export const deliverAttempt = async (
  message: DeliveryMessage,
  handling: MessageHandling,
  now = new Date(),
): Promise<void> => {
  const record = await getDelivery(message);
  if (!record || record.run !== message.run) return;
  if (record.status === 'succeeded' || record.status === 'dead_letter') return;
  if (record.status === 'retrying' && record.attempt_count === message.attempt) {
    // This message's run recorded the failure but may have stopped before scheduling the next attempt.
    const at = record.next_attempt_at ? Date.parse(record.next_attempt_at) : now.getTime();
    await enqueueAttempts(
      [{ ...message, attempt: message.attempt + 1 }],
      Math.max(0, (at - now.getTime()) / 1000),
    );
    return;
  }
  const claimExpiresAt = claimExpiry(handling);
  const { webhook, slot } = await webhookWithSlot(message.webhook_id, handling, claimExpiresAt, now);
  if (!webhook) return; // deleted: its deliveries expire with their TTL
  if (!webhook.enabled) {
    await finishRun(record, message, { kind: 'dead_letter', reason: 'webhook disabled' }, undefined, now);
    return;
  }
  if (!slot) {
    await deferAttempt(message);
    return;
  }
  try {
    await claimAndSend(message, handling, record, webhook, slot, claimExpiresAt, now);
  } finally {
    await slot.release();
  }
};

/** A claim (and an endpoint slot) lasts until the holder's invocation is over, with slack for clocks. */
const claimExpiry = holdExpiry;

/**
 * A leased endpoint slot, given back once: as soon as the attempt's POST is over (the slot bounds POSTs in
 * flight), alongside the outcome's write, and at the latest when the attempt's handling ends. Giving it back
 * never fails the attempt: a slot that cannot be given back is logged and frees itself when its lease expires,
 * and failing would end the handling while the outcome's write still runs (a POST made again after the claim).
 */
interface HeldSlot {
  release(): Promise<void>;
}

const heldSlot = (lease: SlotLease): HeldSlot => {
  let released: Promise<void> | undefined;
  return {
    release: () => {
      released ??= releaseSlot(lease).catch((error: unknown) => {
        logger.warn('endpoint slot not given back: it frees itself when its lease expires', {
          slot: lease.key.id,
          error: (error as Error).message,
        });
      });
      return released;
    },
  };
};

/**
 * The webhook, and a slot of its endpoint if it is enabled. Both are asked for at once, as the lease needs only
 * the webhook's id: one round trip fewer on every attempt. A slot leased for a webhook found deleted or
 * disabled, or whose read failed, is given back at once. Each lease has a holder of its own (the handling and a
 * random part): two copies of one queue message handled at once may carry the same receive count, and must not
 * take or give back each other's slot.
 */
const webhookWithSlot = async (
  webhookId: string,
  handling: MessageHandling,
  until: Date,
  now: Date,
): Promise<{ webhook: WebhookRecord | undefined; slot: HeldSlot | undefined }> => {
  const limit = webhookSettings().endpointConcurrency;
  const holder = `${handling.messageId}#${handling.receive}#${randomUUID()}`;
  const [read, leased] = await Promise.allSettled([
    getWebhook(webhookId),
    leaseSlot(webhookId, limit, holder, until, now),
  ]);
  const slot = leased.status === 'fulfilled' && leased.value ? heldSlot(leased.value) : undefined;
  if (read.status === 'rejected' || leased.status === 'rejected' || !read.value?.enabled) {
    await slot?.release();
  }
  if (read.status === 'rejected') throw read.reason;
  if (leased.status === 'rejected') throw leased.reason;
  const webhook = read.value;
  return { webhook, slot: webhook?.enabled ? slot : undefined };
};

/**
 * The first attempt of the delivery of `event` to a webhook, made by the matcher that creates the delivery:
 * with the endpoint's slot leased first, the delivery is created already claimed by this invocation (one write
 * instead of a put, a read and the claim's update), then sent as `deliverAttempt` would. Without a slot
 * (endpoint busy), or for a webhook deleted or disabled meanwhile, the delivery is created unclaimed and
 * handed to `deliverAttempt`'s rules (deferred to the queue, dropped, dead-lettered); so is a delivery that
 * already exists (the event handled again). Returns whether the delivery's first attempt was seen to here.
 */
export const deliverFirstAttempt = async (
  webhookId: string,
  deliveryId: string,
  event: EventSnapshot,
  handling: MessageHandling,
  now = new Date(),
): Promise<boolean> => {
  const ref = newDeliveryRef(webhookId, deliveryId);
  const message: DeliveryMessage = { ...ref, run: 0, attempt: 1 };
  const claimExpiresAt = claimExpiry(handling);
  const { webhook, slot } = await webhookWithSlot(webhookId, handling, claimExpiresAt, now);
  if (!webhook || !slot) {
    const created = await createDelivery(ref, event, now);
    // Endpoint busy: wait on the queue as deliverAttempt would (it would try every slot again first).
    if (typeof created === 'object' && webhook?.enabled) await deferAttempt(message);
    else if (created) await deliverAttempt(message, handling, now);
    return created !== undefined;
  }
  let created: Awaited<ReturnType<typeof createDelivery>>;
  try {
    created = await createDelivery(ref, event, now, {
      messageId: handling.messageId,
      receive: handling.receive,
      expiresAt: claimExpiresAt,
    });
    if (typeof created === 'object') await sendClaimed(message, created.created, webhook, slot, now);
  } finally {
    await slot.release();
  }
  // Exists: the general rules decide (take an expired claim over, queue a retry the last run may have missed…).
  if (created === 'due') await deliverAttempt(message, handling, now);
  return created !== undefined;
};

/** Claims the attempt (see deliverAttempt), sends it, records the outcome and queues what follows. */
const claimAndSend = async (
  message: DeliveryMessage,
  handling: MessageHandling,
  record: DeliveryRecord,
  webhook: WebhookRecord,
  slot: HeldSlot,
  claimExpiresAt: Date,
  now: Date,
): Promise<void> => {
  const key = { webhook_id: record.webhook_id, delivery_id: record.delivery_id };
  const claimed = await updateDelivery(key, {
    set: {
      status: 'sending',
      attempt_count: message.attempt,
      claimed_at: now.toISOString(),
      claim_expires_at: claimExpiresAt.toISOString(),
      claimed_by: handling.messageId,
      claim_receive: handling.receive,
      updated_at: now.toISOString(),
    },
    // Only an expired claim is taken over: another receive of the holder's own message does not prove the holder
    // died, as SQS may hand a message out twice at once (a copy on a server that missed the first receive).
    condition:
      '#run = :run AND ((attempt_count = :previous AND #status IN (:pending, :retrying)) OR ' +
      '(attempt_count = :attempt AND #status = :sending AND (claim_expires_at < :now OR ' +
      // Claims written before claims had an expiry: their invocations are long gone.
      'attribute_not_exists(claim_expires_at))))',
    names: { '#run': 'run', '#status': 'status' },
    values: {
      ':run': message.run,
      ':previous': message.attempt - 1,
      ':attempt': message.attempt,
      ':pending': 'pending',
      ':retrying': 'retrying',
      ':sending': 'sending',
      ':now': now.toISOString(),
    },
  });
  if (!claimed) {
    const current = await getDelivery(message);
    const held =
      current?.run === message.run &&
      current.status === 'sending' &&
      current.attempt_count === message.attempt;
    if (!held) return; // recorded or moved on
    if (handling.redeliveredBy === 'lambda' || message.awaits_claim) {
      // Nothing here may fail the invocation for a live claim (an ordinary duplicate would count as a function
      // error), and whether the holder's own work comes back (Lambda's retries under the same request id) is not
      // this handling's to rely on: the delivery queue looks again once the claim has expired.
      await awaitClaim(message, current.claim_expires_at, now);
      return;
    }
    if (current.claimed_by === handling.messageId) {
      throw new AttemptHeldByOtherReceive(message, current.claim_expires_at);
    }
    // Held by another message (a duplicate), which is not acknowledged before it records an outcome, and comes
    // back to take its own claim over if its invocation dies.
    return;
  }

  await sendClaimed(message, record, webhook, slot, now);
};

/** A message to look at the attempt again on the delivery queue a second after the live claim expires. */
const awaitClaim = (
  message: DeliveryMessage,
  claimExpiresAt: string | undefined,
  now: Date,
): Promise<void> => {
  const expiresAt = claimExpiresAt ? Date.parse(claimExpiresAt) : now.getTime();
  logger.info('attempt claimed by another handling: looked at again after the claim', {
    delivery_id: message.delivery_id,
    attempt: message.attempt,
    claim_expires_at: claimExpiresAt,
  });
  return queueAttempts(
    [{ ...message, awaits_claim: true }],
    Math.max(1, Math.ceil((expiresAt - now.getTime()) / 1000) + 1),
  );
};

/** Sends the attempt this receive has claimed, records its outcome and queues what follows. */
const sendClaimed = async (
  message: DeliveryMessage,
  record: DeliveryRecord,
  webhook: WebhookRecord,
  slot: HeldSlot,
  now: Date,
): Promise<void> => {
  const result = await send(webhook, record, now);
  const released = slot.release(); // never rejects
  const outcome = await decide(webhook, message, result, now);
  await Promise.all([finishRun(record, message, outcome, result, now), released]);
  countMetric(
    outcome.kind === 'succeeded'
      ? SERVICE_METRICS.webhookDeliveries
      : SERVICE_METRICS.webhookDeliveryFailures,
  );
  logger.info('webhook attempt', {
    webhook_id: webhook.id,
    delivery_id: record.delivery_id,
    attempt: message.attempt,
    status_code: result.status,
    error: result.error,
    outcome: outcome.kind,
  });
};

const send = async (webhook: WebhookRecord, record: DeliveryRecord, now: Date): Promise<SendResult> => {
  const settings = webhookSettings();
  let target: Awaited<ReturnType<typeof checkWebhookUrl>>;
  try {
    target = await checkWebhookUrl(webhook.url, settings.allowLoopback);
  } catch (error) {
    if (error instanceof AddressRefused) return { error: `refused: ${error.message}`, durationMs: 0 };
    throw error;
  }
  const secret = await openSecret(webhook.secret, webhook.id);
  // Only a webhook created before the API refused such secrets: never sign with a key a stranger could guess.
  const problem = secretProblem(secret);
  if (problem) return { error: `refused: ${problem}`, durationMs: 0 };
  const body = webhookBody(record);
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers = {
    'webhook-id': record.delivery_id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(secret, record.delivery_id, timestamp, body),
  };
  return postTo(target.url, target.resolved, headers, body, settings.timeoutMs);
};

const decide = async (
  webhook: WebhookRecord,
  message: DeliveryMessage,
  result: SendResult,
  now: Date,
): Promise<Outcome> => {
  const settings = webhookSettings();
  if (result.status !== undefined && result.status >= 200 && result.status < 300) {
    await noteSuccess(webhook);
    return { kind: 'succeeded' };
  }
  if (result.status === 410) {
    await disableWebhook(webhook, 'the endpoint answered 410 Gone', now);
    return { kind: 'dead_letter', reason: 'HTTP 410: webhook disabled' };
  }
  const failingSince = Date.parse(await noteFailure(webhook, now));
  if (now.getTime() - failingSince >= settings.disableAfterSecs * 1000) {
    await disableWebhook(webhook, 'failing without a success for too long', now);
    return { kind: 'dead_letter', reason: `${describe(result)}: webhook disabled after failing too long` };
  }
  const attempts = settings.retryScheduleSecs.length + 1;
  if (message.attempt >= attempts)
    return { kind: 'dead_letter', reason: `${describe(result)} on the last attempt` };
  const delaySecs = retryDelaySecs(
    settings.retryScheduleSecs,
    message.attempt,
    retryAfterSecs(result.retryAfter, now),
  );
  return { kind: 'retry', delaySecs };
};

/** Records the attempt (if one was made) and the run's state, then queues the next attempt. */
const finishRun = async (
  record: DeliveryRecord,
  message: DeliveryMessage,
  outcome: Outcome,
  result: SendResult | undefined,
  now: Date,
): Promise<void> => {
  const attempts: AttemptLog[] = [...record.attempts];
  if (result) {
    attempts.push({
      attempt: (record.attempts.at(-1)?.attempt ?? 0) + 1,
      at: now.toISOString(),
      status_code: result.status ?? null,
      duration_ms: result.durationMs,
      error:
        result.error ??
        (result.status !== undefined && (result.status < 200 || result.status >= 300)
          ? `HTTP ${result.status}`
          : null),
    });
  }
  const nextAt =
    outcome.kind === 'retry' ? new Date(now.getTime() + outcome.delaySecs * 1000).toISOString() : null;
  const status = outcome.kind === 'retry' ? 'retrying' : outcome.kind;
  const recorded = await updateDelivery(
    { webhook_id: record.webhook_id, delivery_id: record.delivery_id },
    {
      set: {
        status,
        attempt_count: result ? message.attempt : record.attempt_count,
        attempts: attempts.slice(-MAX_LOGGED_ATTEMPTS),
        next_attempt_at: nextAt,
        last_error: outcome.kind === 'dead_letter' ? outcome.reason : (attempts.at(-1)?.error ?? null),
        updated_at: now.toISOString(),
        ttl: ttlFrom(now),
      },
      // Only the holder of this run's claim (or, without an attempt, a run not yet claimed) records.
      condition: result
        ? '#run = :run AND attempt_count = :attempt AND #status = :sending'
        : '#run = :run AND #status IN (:pending, :retrying)',
      names: { '#run': 'run', '#status': 'status' },
      values: result
        ? { ':run': message.run, ':attempt': message.attempt, ':sending': 'sending' }
        : { ':run': message.run, ':pending': 'pending', ':retrying': 'retrying' },
    },
  );
  if (recorded && outcome.kind === 'retry') {
    await enqueueAttempts([{ ...message, attempt: message.attempt + 1 }], outcome.delaySecs);
  }
};
