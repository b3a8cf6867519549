import { forbidden, validationError } from '../../core/errors';
import { logger } from '../../core/logger';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { type Principal, sourceOf } from '../../core/principal';
import { enqueue } from '../../core/sqs-send';
import type { StoredResponse } from '../idempotency';
import { defaultsFor } from '../preferences/preferences';
import { categoryKey, type Throttle } from '../preferences/rules';
import { subscriberCounts } from '../topics/topics';
import {
  channelsDeliveredNow,
  chunkProgress,
  deliverChunk,
  deliveryByRequest,
  handOverAfterDelivery,
  type RecipientState,
  readRecipientState,
} from './delivery';
import { type Audience, fanoutQueue, planMessages } from './fanout-messages';
import { scheduleOnFanout } from './fanout-schedule';
import { checkFrameFits } from './frame-size';
import { FEED_RETENTION_MS, type NotificationRecord } from './model';
import { storeOnce } from './notification-store';
import type { CreateNotificationInput } from './schema';

/** Scheduled less than this far ahead, a notification is simply sent now. */
const SCHEDULE_THRESHOLD_MS = 1000;
/**
 * Up to this many named recipients, the accepting request delivers them itself before answering 202: no
 * queue hop, no second invocation, no read-back of the notification (docs/notifications.md, "Flow").
 */
export const REQUEST_DELIVERY_MAX_RECIPIENTS = 10;
/**
 * A request still delivering this long after it started (a slow or throttling dependency; usually it takes
 * tens of ms) queues the recipients not settled yet and answers 202, with about 4 s left of the HTTP
 * functions' 10 s timeout to do so: the client is not left with a 503 for a stored, half-delivered notification.
 */
const REQUEST_DELIVERY_BUDGET_MS = 6000;

/** A notification's own throttle, counted under its event type or (`per: category`) its category. */
const ownThrottle = (
  input: CreateNotificationInput,
  { per, ...limit }: NonNullable<CreateNotificationInput['throttle']>,
): Throttle => ({
  key: per === 'category' && input.category !== null ? categoryKey(input.category) : input.event_type,
  ...limit,
});

const deliversInRequest = (scheduled: boolean, recipients: readonly string[]): boolean =>
  !scheduled && recipients.length <= REQUEST_DELIVERY_MAX_RECIPIENTS;

/** Contract §2/§3: a user may notify only itself; a service needs `notifications:write` (checked by the route). */
/**
 * Who the notification is for: the named recipients and topics, or — when a user token names neither — the
 * user itself. A service names its audience; a user may notify only itself.
 */
const audienceOf = (principal: Principal, input: CreateNotificationInput): CreateNotificationInput => {
  sourceOf(principal, input.source);
  const named = input.recipient_ids.length > 0 || input.topics.length > 0;
  if (principal.kind !== 'user') {
    if (!named) {
      throw validationError('Invalid request body', [{ field: 'recipient_ids', issue: 'required' }]);
    }
    return input;
  }
  if (!named) return { ...input, recipient_ids: [principal.id] };
  if (input.recipient_ids.some((id) => id !== principal.id) || input.topics.length > 0) {
    throw forbidden('A user may create notifications only for itself');
  }
  return input;
};

/**
 * Stores the notification once, delivers a few named recipients itself and hands the rest of the fan-out to SQS
 * (now) or EventBridge Scheduler (later); what it has not delivered after `deliveryBudgetMs` goes to SQS too.
 * Safe to run twice with the same id: every step is conditional or idempotent downstream.
 */
export const createNotification = async (
  principal: Principal,
  request: CreateNotificationInput,
  id: string,
  deliveryBudgetMs = REQUEST_DELIVERY_BUDGET_MS,
): Promise<StoredResponse> => {
  const input = audienceOf(principal, request);
  const now = Date.now();
  const deliverUntil = now + deliveryBudgetMs;
  const scheduledAt = input.scheduled_at ? Date.parse(input.scheduled_at) : null;
  const scheduled = scheduledAt !== null && scheduledAt > now + SCHEDULE_THRESHOLD_MS;
  const deliverAt = scheduled ? scheduledAt : now;
  const expiresAt = input.expires_at ? Date.parse(input.expires_at) : null;
  // Delivered here (fanOutNow): what it reads about the recipients does not wait for the reads and write below.
  const recipientState = deliversInRequest(scheduled, input.recipient_ids)
    ? readRecipientState(channelsDeliveredNow(input), input.recipient_ids, true)
    : undefined;
  recipientState?.catch(() => undefined); // awaited (and its error thrown) in fanOutNow, unless a 4xx comes first
  // Unknown topics are a 404 before anything is stored; their counts bound recipient_count from above.
  const [topicCounts, preferenceDefaults] = await Promise.all([
    subscriberCounts(input.topics),
    defaultsFor({ event_type: input.event_type, category: input.category ?? undefined }),
  ]);
  const record: NotificationRecord = {
    id,
    source: sourceOf(principal, input.source),
    event_type: input.event_type,
    title: input.title,
    body: input.body,
    data: input.data,
    priority: input.priority,
    channels: input.channels,
    ...(input.url === undefined ? {} : { url: input.url }),
    ...(input.actions === undefined ? {} : { actions: input.actions }),
    ...(input.push ? { push: input.push } : {}),
    ...(input.digest ? { digest: input.digest } : {}),
    ...(input.fallback ? { fallback: input.fallback } : {}),
    ...(input.throttle ? { throttle: ownThrottle(input, input.throttle) } : {}),
    ...(input.category === null ? {} : { category: input.category }),
    ...(input.tags.length > 0 ? { tags: input.tags } : {}),
    recipient_count: recipientCount(
      { id, recipient_ids: input.recipient_ids, topics: input.topics },
      topicCounts,
    ),
    // Only a schedule's plan reads the list back; sent now, the recipients go out from here (docs/notifications.md).
    ...(scheduled ? { recipient_ids: input.recipient_ids } : {}),
    topics: input.topics.length > 0 ? input.topics : undefined,
    scheduled_at: scheduled ? new Date(deliverAt).toISOString() : null,
    expires_at: input.expires_at ? new Date(Date.parse(input.expires_at)).toISOString() : null,
    created_at: new Date(now).toISOString(),
    deliver_at: deliverAt,
    status: scheduled ? 'scheduled' : 'accepted',
    created_by: `${principal.kind}:${principal.id}`,
    // Fixed now: a later change of the defaults applies to notifications created after it (docs/preferences.md).
    preference_defaults: preferenceDefaults,
    ttl: Math.ceil(Math.max(expiresAt ?? 0, deliverAt + FEED_RETENTION_MS) / 1000),
  };
  checkFrameFits(record);
  const stored = await storeOnce(record);
  // A retried request finds the earlier record: only the first store counts as a created notification.
  if (stored === record) countMetric(SERVICE_METRICS.notificationsCreated);
  // A retry (same Idempotency-Key) has the same body as the attempt that stored the record: same recipients.
  const audience: Audience = { id: stored.id, recipient_ids: input.recipient_ids, topics: stored.topics };
  if (stored.status === 'scheduled') await scheduleFanout(stored);
  else await fanOutNow(stored, audience, recipientState, deliverUntil);
  return {
    status: 202,
    body: {
      id: stored.id,
      status: stored.status,
      recipient_count: stored.recipient_count ?? recipientCount(audience, topicCounts),
      scheduled_at: stored.scheduled_at,
    },
  };
};

/**
 * The recipients plus, per named topic, its subscriber count at request time: an upper bound of the users
 * reached (a user in several of them is counted each time but delivered once; a user whose preferences turn
 * it off is counted too). docs/events-topics-devices.md, docs/preferences.md.
 */
const recipientCount = (record: Audience, topicCounts: ReadonlyMap<string, number>): number =>
  record.recipient_ids.length +
  (record.topics ?? []).reduce((sum, topic) => sum + Math.max(0, topicCounts.get(topic) ?? 0), 0);

/**
 * Fan-out of a notification due now. A small list of named recipients is delivered here, before the 202, so
 * the answer means it is done; what this request could not finish goes to the queue under this request's
 * delivery id (so the frames it owns are still sent once), and then the 202 means it is queued. A crash
 * before the 202 leaves the client's retry to finish it (with the same Idempotency-Key, the same id).
 * Topics and larger lists always go through the queue, as chunks of 100 and topic pages sent from here (up to
 * 1,000 recipients: one SendMessageBatch), so the notification item does not carry the list for a `plan`.
 */
const fanOutNow = async (
  record: NotificationRecord,
  audience: Audience,
  state: Promise<RecipientState> | undefined,
  deliverUntil: number,
) => {
  if (!deliversInRequest(false, audience.recipient_ids)) {
    await enqueue(fanoutQueue, planMessages(audience));
    return;
  }
  await enqueue(fanoutQueue, planMessages({ ...audience, recipient_ids: [] }));
  const delivery = deliveryByRequest(record.id);
  const progress = chunkProgress();
  const outcome = await withinBudget(
    deliverChunk(record, audience.recipient_ids, delivery, { progress, ...(state ? { state } : {}) }),
    deliverUntil - Date.now(),
  );
  if (outcome === 'done') return;
  // From here on the delivery sends no frame it has not started: the queued chunk owns them. It also owns the
  // recipients whose push waits on frames still in flight (`offline`): it sends those frames again (the client
  // drops the repeat by id) and decides the push on them; every other push due is in `progress.pushes` already.
  progress.stopped = true;
  const rest = audience.recipient_ids.filter(
    (userId) => !progress.settled.has(userId) || progress.awaitingFrames.has(userId),
  );
  logger.warn('delivery in the request did not finish; the rest goes to the fan-out queue', {
    notification_id: record.id,
    queued: rest.length,
    error: outcome === 'late' ? `not done by ${new Date(deliverUntil).toISOString()}` : String(outcome.error),
  });
  // The pushes and steps of the recipients settled so far: the delivery, no longer awaited, may hand them over too late.
  await handOverAfterDelivery(record, progress, undefined);
  if (rest.length === 0) return;
  await enqueue(fanoutQueue, [
    { kind: 'chunk', notification_id: record.id, recipients: rest, delivery_id: delivery.id },
  ]);
};

/** How `work` ended within `budgetMs`; 'late' leaves it running. */
const withinBudget = (
  work: Promise<void>,
  budgetMs: number,
): Promise<'done' | 'late' | { error: unknown }> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), budgetMs);
  });
  return Promise.race([
    work.then(
      () => 'done' as const,
      (error: unknown) => ({ error }),
    ),
    late,
  ]).finally(() => clearTimeout(timer));
};

const scheduleFanout = (record: NotificationRecord) =>
  scheduleOnFanout(`notification-${record.id}`, record.deliver_at, {
    kind: 'plan',
    notification_id: record.id,
  });
