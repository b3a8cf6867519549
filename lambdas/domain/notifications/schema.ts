import { identifierSchema } from '../../core/identifier-schema';
import { jsonLimits } from '../../core/json-limits';
import { SOURCE_RULE } from '../../core/principal';
import * as z from '../../core/zod';
import { notificationThrottleSchema } from '../preferences/throttle-schema';
import {
  COLLAPSE_KEY,
  DEFAULT_PUSH_ROUTING,
  DEFAULT_UNREAD_AFTER_SECS,
  MAX_UNREAD_AFTER_SECS,
  PUSH_WHEN,
  type PushRouting,
} from '../push/routing';
import { TOPIC_NAME } from '../topics/names';
import { categorySchema, MAX_TAGS, tagSchema } from './categories';
import { CHANNELS } from './channels';
import { digestSchema } from './digest-schema';
import { fallbackSchema } from './fallback-schema';
import { timestamp } from './input-timestamp';
import { eventTypeSchema, PRIORITIES, sourceSchema } from './shared-fields';

/** Contract §3 "Notifications": sizes, enumerations and defaults of POST /notifications. */
export const MAX_RECIPIENTS = 1000;
export const MAX_DATA_BYTES = 16 * 1024;
export const MAX_SCHEDULE_AHEAD_MS = 365 * 24 * 3600 * 1000;
/** Topics one notification may name (each fans out to all its subscribers). */
export const MAX_TOPICS = 10;

/** A duplicate in `items` is an issue at its index (and `field` of it, for objects told apart by one field). */
const uniqueStrings = (
  items: readonly string[],
  context: Pick<z.core.$RefinementCtx, 'addIssue'>,
  what: string,
  field?: string,
) => {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    if (seen.has(item)) {
      context.addIssue({
        code: 'custom',
        path: field === undefined ? [index] : [index, field],
        message: `duplicate ${what}`,
      });
    }
    seen.add(item);
  });
};

/** Buttons one notification may carry. */
const MAX_ACTIONS = 3;

/**
 * An absolute URL of any scheme (`https:`, an app's deep link `myapp:`), at most 2048 characters. Never a
 * `javascript:`, `vbscript:` or `data:` URL: an inbox that renders it as a link would run or show the sender's
 * content in its own page.
 */
const absoluteUrl = z.string().check(
  z.maxLength(2048),
  // Aborts: a value that is not `scheme:…` at all is not also reported as unparseable.
  z.regex(/^[A-Za-z][A-Za-z0-9+.-]*:[^\s\p{Cc}]+$/u, {
    error: 'must be an absolute URL (scheme:…) without spaces',
    abort: true,
  }),
  z.refine((value) => URL.canParse(value), { message: 'must be an absolute URL' }),
  z.refine((value) => !/^(javascript|vbscript|data):/i.test(value), {
    message: 'must not be a javascript:, vbscript: or data: URL',
  }),
);

/** A button's id: what a click names (`action_id`) and the bus event carries. */
const actionIdSchema = z
  .string()
  .check(z.regex(/^[a-z0-9_-]{1,32}$/, 'must be 1 to 32 characters of a-z, 0-9, _ and -'));

const actionSchema = z.strictObject({
  id: actionIdSchema,
  label: z.string().check(z.minLength(1), z.maxLength(64)),
  url: z.optional(
    absoluteUrl.check(
      z.describe(
        'a link button; absent: a backend action, whose click reaches the sender only as a bus event',
      ),
    ),
  ),
});

const fields = z.strictObject({
  // The rules stated in descriptions are checked against the caller by createNotification (create.ts).
  source: z.optional(
    sourceSchema.check(
      z.describe(`Default: the caller's own (the service's name, or \`user\`); given, ${SOURCE_RULE}.`),
    ),
  ),
  event_type: eventTypeSchema,
  title: z.string().check(z.minLength(1), z.maxLength(256)),
  body: z._default(
    z
      .string()
      .check(
        z.maxLength(4096),
        z.describe(
          'With `toast` or `realtime` in `channels`, the `notification` frame made of the title, body, `data`, `url` ' +
            'and `actions` must fit 32 KiB (32,768 bytes of JSON), else a 400 naming the bulkiest of them.',
        ),
      ),
    '',
  ),
  data: z._default(
    z.record(z.string(), z.unknown()).check(...jsonLimits<Record<string, unknown>>(MAX_DATA_BYTES)),
    {},
  ),
  priority: z._default(z.enum(PRIORITIES), 'normal'),
  channels: z._default(
    z.array(z.enum(CHANNELS)).check(
      z.minLength(1),
      z.superRefine((items, context) => uniqueStrings(items, context, 'channel')),
      z.meta({ uniqueItems: true }),
    ),
    ['in_app'],
  ),
  // Absent: the caller itself for a user token; a service must name recipients unless `topics` names an audience
  // (checked with the principal: lambdas/domain/notifications/create.ts, audienceOf). Empty: only with topics.
  recipient_ids: z.optional(
    z.array(identifierSchema('userId')).check(
      z.maxLength(MAX_RECIPIENTS),
      z.superRefine((items, context) => uniqueStrings(items, context, 'recipient')),
      z.meta({ uniqueItems: true }),
      z.describe(
        'Unique user ids; required (non-empty) unless `topics` is given. A user may name only itself (another ' +
          'id is a 403).',
      ),
    ),
  ),
  topics: z.optional(
    z.array(z.string().check(z.regex(TOPIC_NAME, 'must be a topic name'))).check(
      z.minLength(1),
      z.maxLength(MAX_TOPICS),
      z.superRefine((items, context) => uniqueStrings(items, context, 'topic')),
      z.meta({ uniqueItems: true }),
      z.describe(
        'Unique names of existing topics (an unknown one is a 404): every subscriber is reached, each user ' +
          'once. Services only (a user naming topics is a 403).',
      ),
    ),
  ),
  push: z.optional(
    z
      .strictObject({
        when: z._default(
          z
            .enum(PUSH_WHEN)
            .check(
              z.describe(
                '`always`: with the delivery; `offline`: only to a recipient none of whose open connections ' +
                  'received the frame; `unread`: `after_secs` later, only if the feed item is still unread, or the ' +
                  'recipient turned `in_app` off (needs `in_app`): the same as `fallback: [{"channel": "push", ' +
                  '"after_secs": N, "unless": "read"}]`.',
              ),
            ),
          'always',
        ),
        after_secs: z.optional(
          z
            .int()
            .check(
              z.gte(1),
              z.lte(MAX_UNREAD_AFTER_SECS),
              z.describe(`\`unread\` only; default ${DEFAULT_UNREAD_AFTER_SECS}.`),
            ),
        ),
        collapse_key: z._default(
          z.nullable(
            z
              .string()
              .check(
                z.regex(COLLAPSE_KEY, 'must be 1 to 32 characters of A-Z, a-z, 0-9, _ and -'),
                z.describe('Pushes with the same key replace each other on the device.'),
              ),
          ),
          null,
        ),
        silent: z._default(
          z.boolean().check(z.describe('Data-only: nothing is shown; the app wakes with `data`.')),
          false,
        ),
      })
      .check(z.describe('How the `push` channel reaches devices; only with `push` in `channels`.')),
  ),
  digest: z.optional(digestSchema),
  fallback: z.optional(fallbackSchema),
  url: z.optional(absoluteUrl.check(z.describe('The primary link: where a click on the item leads.'))),
  actions: z.optional(
    z.array(actionSchema).check(
      z.minLength(1),
      z.maxLength(MAX_ACTIONS),
      z.superRefine((items, context) =>
        uniqueStrings(
          items.map((action) => action.id),
          context,
          'action id',
          'id',
        ),
      ),
      z.describe(
        'Buttons (unique ids). A click, on one of them or on the item, is recorded by `POST ' +
          '/notifications/{receiver_id}/interact` and published as `notify.notification.interacted`.',
      ),
    ),
  ),
  throttle: z.optional(notificationThrottleSchema),
  category: z._default(z.nullable(categorySchema), null),
  tags: z._default(
    z.array(tagSchema).check(
      z.maxLength(MAX_TAGS),
      z.superRefine((items, context) => uniqueStrings(items, context, 'tag')),
      z.meta({ uniqueItems: true }),
    ),
    [],
  ),
  scheduled_at: z._default(
    z.nullable(timestamp).check(z.describe('At most 365 days ahead; null or absent: now.')),
    null,
  ),
  expires_at: z._default(
    z.nullable(timestamp).check(z.describe('After now and after `scheduled_at`; null or absent: never.')),
    null,
  ),
});

/** The stored routing of a notification with the `push` channel: defaults filled in. */
const pushRouting = (push: z.output<typeof fields>['push']): PushRouting => {
  if (!push) return DEFAULT_PUSH_ROUTING;
  const { when, collapse_key, silent } = push;
  return when === 'unread'
    ? { when, after_secs: push.after_secs ?? DEFAULT_UNREAD_AFTER_SECS, collapse_key, silent }
    : { when, collapse_key, silent };
};

export const createNotificationSchema = z.pipe(
  fields.check(
    // Runs even when other fields failed, so a body with other mistakes hears about recipient_ids too.
    z.superRefine(
      (input, context) => {
        const { recipient_ids: recipients, topics } = input as { recipient_ids?: unknown; topics?: unknown };
        if (Array.isArray(recipients) && recipients.length === 0 && topics === undefined) {
          context.addIssue({
            code: 'custom',
            path: ['recipient_ids'],
            message: 'must name at least one recipient (or give topics)',
          });
        }
      },
      { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
    ),
    z.superRefine((input: z.output<typeof fields>, context) => {
      const now = Date.now();
      const scheduledAt = input.scheduled_at ? Date.parse(input.scheduled_at) : null;
      const expiresAt = input.expires_at ? Date.parse(input.expires_at) : null;
      if (scheduledAt !== null && scheduledAt > now + MAX_SCHEDULE_AHEAD_MS) {
        context.addIssue({
          code: 'custom',
          path: ['scheduled_at'],
          message: 'must be at most 365 days ahead',
        });
      }
      const { push } = input;
      if (push !== undefined && !input.channels.includes('push')) {
        context.addIssue({ code: 'custom', path: ['push'], message: 'needs `push` in channels' });
      }
      if (push?.when === 'unread' && !input.channels.includes('in_app')) {
        context.addIssue({
          code: 'custom',
          path: ['push', 'when'],
          message: '`unread` needs `in_app` in channels',
        });
      }
      if (push?.after_secs !== undefined && push.when !== 'unread') {
        context.addIssue({
          code: 'custom',
          path: ['push', 'after_secs'],
          message: 'only with `when: unread`',
        });
      }
      if (input.throttle?.per === 'category' && input.category === null) {
        context.addIssue({
          code: 'custom',
          path: ['throttle', 'per'],
          message: '`category` needs a category',
        });
      }
      const { fallback } = input;
      if (fallback && !fallback.every((step) => input.channels.includes(step.channel))) {
        context.addIssue({
          code: 'custom',
          path: ['fallback'],
          message: "each step's channel must be in channels",
        });
      }
      if (fallback && !input.channels.includes('in_app')) {
        context.addIssue({ code: 'custom', path: ['fallback'], message: 'needs `in_app` in channels' });
      }
      if (fallback && push?.when === 'unread') {
        context.addIssue({
          code: 'custom',
          path: ['fallback'],
          message: 'not with `push.when: unread` (which is the one-step fallback of push)',
        });
      }
      if (expiresAt !== null && expiresAt <= now) {
        context.addIssue({ code: 'custom', path: ['expires_at'], message: 'must be in the future' });
      }
      if (expiresAt !== null && scheduledAt !== null && expiresAt <= scheduledAt) {
        context.addIssue({ code: 'custom', path: ['expires_at'], message: 'must be after scheduled_at' });
      }
    }),
  ),
  z.transform(({ recipient_ids, topics, push, ...rest }: z.output<typeof fields>) => ({
    ...rest,
    recipient_ids: recipient_ids ?? [],
    topics: topics ?? [],
    push: rest.channels.includes('push') ? pushRouting(push) : undefined,
  })),
);

export type CreateNotificationInput = z.output<typeof createNotificationSchema>;
