import { z } from 'zod';
import { TOPIC_NAME } from '../topics/schema';

/** Contract §3 "Notifications": sizes, enumerations and defaults of POST /notifications. */
export const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const CHANNELS = ['in_app', 'toast', 'realtime'] as const;
export const MAX_RECIPIENTS = 1000;
export const MAX_DATA_BYTES = 16 * 1024;
export const MAX_SCHEDULE_AHEAD_MS = 365 * 24 * 3600 * 1000;
/** Topics one notification may name (each fans out to all its subscribers). */
export const MAX_TOPICS = 10;

export type Priority = (typeof PRIORITIES)[number];
export type Channel = (typeof CHANNELS)[number];

const timestamp = z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp' });

const uniqueStrings = <T extends string>(items: readonly T[], context: z.RefinementCtx, what: string) => {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item)) context.addIssue({ code: 'custom', path: [index], message: `duplicate ${what}` });
    seen.add(item);
  });
};

export const createNotificationSchema = z
  .strictObject({
    source: z.string().min(1).max(128).optional(),
    event_type: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be a dotted event name'),
    title: z.string().min(1).max(256),
    body: z.string().max(4096).default(''),
    data: z
      .record(z.string(), z.unknown())
      .default({})
      .refine((data) => Buffer.byteLength(JSON.stringify(data)) <= MAX_DATA_BYTES, {
        message: `must serialize to at most ${MAX_DATA_BYTES} bytes`,
      }),
    priority: z.enum(PRIORITIES).default('normal'),
    channels: z
      .array(z.enum(CHANNELS))
      .min(1)
      .superRefine((items, context) => uniqueStrings(items, context, 'channel'))
      .default(['in_app']),
    // Required unless `topics` names an audience; then it may be empty or absent.
    recipient_ids: z
      .array(z.string().min(1).max(256))
      .max(MAX_RECIPIENTS)
      .superRefine((items, context) => uniqueStrings(items, context, 'recipient'))
      .optional(),
    topics: z
      .array(z.string().regex(TOPIC_NAME, 'must be a topic name'))
      .min(1)
      .max(MAX_TOPICS)
      .superRefine((items, context) => uniqueStrings(items, context, 'topic'))
      .optional(),
    scheduled_at: timestamp.nullable().default(null),
    expires_at: timestamp.nullable().default(null),
  })
  // Runs even when other fields failed, so a body missing everything hears about recipient_ids too.
  .superRefine(
    (input, context) => {
      const { recipient_ids: recipients, topics } = input as { recipient_ids?: unknown; topics?: unknown };
      if (recipients === undefined && topics === undefined) {
        context.addIssue({ code: 'custom', path: ['recipient_ids'], message: 'required' });
      } else if (Array.isArray(recipients) && recipients.length === 0 && topics === undefined) {
        context.addIssue({
          code: 'custom',
          path: ['recipient_ids'],
          message: 'must name at least one recipient (or give topics)',
        });
      }
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  )
  .superRefine((input, context) => {
    const now = Date.now();
    const scheduledAt = input.scheduled_at ? Date.parse(input.scheduled_at) : null;
    const expiresAt = input.expires_at ? Date.parse(input.expires_at) : null;
    if (scheduledAt !== null && scheduledAt > now + MAX_SCHEDULE_AHEAD_MS) {
      context.addIssue({ code: 'custom', path: ['scheduled_at'], message: 'must be at most 365 days ahead' });
    }
    if (expiresAt !== null && expiresAt <= now) {
      context.addIssue({ code: 'custom', path: ['expires_at'], message: 'must be in the future' });
    }
    if (expiresAt !== null && scheduledAt !== null && expiresAt <= scheduledAt) {
      context.addIssue({ code: 'custom', path: ['expires_at'], message: 'must be after scheduled_at' });
    }
  })
  .transform(({ recipient_ids, topics, ...rest }) => ({
    ...rest,
    recipient_ids: recipient_ids ?? [],
    topics: topics ?? [],
  }));

export type CreateNotificationInput = z.output<typeof createNotificationSchema>;

export const feedQuerySchema = z.strictObject({
  cursor: z.string().min(1).max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
