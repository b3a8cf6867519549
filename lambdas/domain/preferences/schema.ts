import { identifierSchema } from '../../core/identifier-schema';
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { NAMED_USER_RULE } from '../../core/principal';
import * as z from '../../core/zod';
import { MAX_CATEGORY_CHARACTERS } from '../notifications/categories';
import { CHANNELS } from '../notifications/channels';
import { digestFields, oneClose, timeOfDaySchema, windowSecsSchema } from '../notifications/digest-schema';
import { fallbackSchema } from '../notifications/fallback-schema';
import { isTimeZone, TIME_OF_DAY } from '../time-zones';
import { TOPIC_NAME } from '../topics/names';
import { EVENT_TYPE_PATTERN } from '../webhooks/filters';
import { WEEKDAYS } from './quiet-hours';
import { THROTTLE_SUMMARY, throttleFields } from './throttle-schema';

/** A default rule's throttle: counted together for what the rule's pattern matches (event types or categories). */
export const throttleSchema = z.strictObject(throttleFields).check(z.describe(THROTTLE_SUMMARY));

/** A default rule's digest: its key is the rule's pattern. */
export const defaultDigestSchema = z
  .strictObject(digestFields)
  .check(
    oneClose,
    z.describe(
      "Batch what the rule matches per recipient, as a notification's `digest` does, under the rule's pattern as " +
        'key; for notifications with no `digest` of their own, unless the user chose a digest for them or the ' +
        'type is required (docs/digests.md). Exactly one of `window_secs` and `at`.',
    ),
  );

/** Rules per user and per defaults set; muted topics per user. docs/preferences.md. */
export const MAX_RULES = 200;
export const MAX_MUTED_TOPICS = 200;
/** Quiet-hour windows per user: one a day with room to split a day in two. */
export const MAX_QUIET_WINDOWS = 14;

const pattern = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(IDENTIFIER_CHARACTERS.eventPattern),
    z.regex(EVENT_TYPE_PATTERN, 'must be an event type, `prefix.*` or `*`'),
  );

/** Unknown channels are refused by the strict object. */
export const channelSwitches = z.strictObject(
  Object.fromEntries(CHANNELS.map((channel) => [channel, z.optional(z.boolean())])) as Record<
    (typeof CHANNELS)[number],
    z.ZodMiniOptional<z.ZodMiniBoolean>
  >,
);

/** A category pattern: an exact category, `prefix.*` or `*` (categories are lower-case dotted names). */
export const CATEGORY_PATTERN = /^(?:\*|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*(?:\.\*)?)$/;

const categoryPattern = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(MAX_CATEGORY_CHARACTERS + 2),
    z.regex(CATEGORY_PATTERN, 'must be a category, `prefix.*` or `*`'),
  );

/** Each pattern once per kind: an event-type rule and a category rule may share a pattern (`*`). */
const uniquePatterns = <T extends { event_type?: string | undefined; category?: string | undefined }>() =>
  z.superRefine<T[]>((rules, context) => {
    const seen = new Set<string>();
    rules.forEach((rule, index) => {
      const kind = rule.category !== undefined ? 'category' : 'event_type';
      const key = `${kind}:${rule[kind]}`;
      if (seen.has(key))
        context.addIssue({ code: 'custom', path: [index, kind], message: 'duplicate pattern' });
      seen.add(key);
    });
  });

/** A rule names an event-type pattern or a category pattern: exactly one. */
const namesOne = <T extends { event_type?: string | undefined; category?: string | undefined }>() =>
  z.superRefine<T>((rule, context) => {
    if ((rule.event_type === undefined) === (rule.category === undefined)) {
      context.addIssue({
        code: 'custom',
        path: [rule.event_type === undefined ? 'event_type' : 'category'],
        message: 'a rule names either event_type or category',
      });
    }
  });

const ruleNames = {
  event_type: z.optional(pattern),
  category: z.optional(categoryPattern),
};

const userRule = z.strictObject({ ...ruleNames, channels: channelSwitches }).check(namesOne());

/** A user's digest choices: at most this many (docs/digests.md). */
export const MAX_DIGEST_CHOICES = 20;

/** "Daily digest for marketing.*": an `event_type` or a `category` pattern, and when its batches close. */
const digestChoice = z
  .strictObject({
    ...ruleNames,
    window_secs: z.optional(windowSecsSchema),
    at: z.optional(timeOfDaySchema),
  })
  .check(
    oneClose,
    z.superRefine((choice, context) => {
      if ((choice.event_type === undefined) === (choice.category === undefined)) {
        context.addIssue({
          code: 'custom',
          path: ['event_type'],
          message: 'give exactly one of event_type and category',
        });
      }
    }),
  );

const localTime = z.string().check(z.regex(TIME_OF_DAY, 'must be a local time HH:MM (00:00–23:59)'));

/** A window from `start` on each of `days` to `end` (the next day when not later than `start`). */
const quietWindow = z.strictObject({
  days: z.array(z.enum(WEEKDAYS)).check(
    z.minLength(1),
    z.refine((days) => new Set(days).size === days.length, { message: 'must not repeat a day' }),
    z.meta({ uniqueItems: true }),
  ),
  start: localTime,
  end: localTime.check(z.describe('The next day when not later than `start` (equal: 24 hours).')),
});

export const quietHoursSchema = z.strictObject({
  windows: z.array(quietWindow).check(z.minLength(1), z.maxLength(MAX_QUIET_WINDOWS)),
});

/** An IANA zone name Node's zone database knows (`Europe/Berlin`); offsets like `+01:00` are refused. */
const timeZone = z.string().check(z.refine(isTimeZone, { message: 'must be an IANA time zone name' }));

export const putPreferencesSchema = z
  .strictObject({
    rules: z.array(userRule).check(z.maxLength(MAX_RULES), uniquePatterns()),
    muted_topics: z._default(
      z.array(z.string().check(z.regex(TOPIC_NAME, 'must be a topic name'))).check(
        z.maxLength(MAX_MUTED_TOPICS),
        z.refine((topics) => new Set(topics).size === topics.length, { message: 'must not repeat a topic' }),
        z.meta({ uniqueItems: true }),
      ),
      [],
    ),
    time_zone: z._default(
      z.nullable(timeZone).check(z.describe('IANA time zone name (`Europe/Berlin`); needed by quiet_hours.')),
      null,
    ),
    quiet_hours: z._default(
      z
        .nullable(quietHoursSchema)
        .check(
          z.describe(
            'Local windows during which push and toast are held (the feed item still arrives) and released at the ' +
              "window's end. docs/delivery-rules.md.",
          ),
        ),
      null,
    ),
    digests: z._default(
      z
        .array(digestChoice)
        .check(
          z.maxLength(MAX_DIGEST_CHOICES),
          uniquePatterns(),
          z.describe(
            'Notifications matching a choice (its first match, in this order) are batched into one digest per choice, ' +
              "closing `window_secs` after the first or at `at` in the user's time zone (docs/digests.md). Each names " +
              'exactly one of `event_type` and `category`, and exactly one of `window_secs` and `at`, else a 400. ' +
              'Each pattern once per kind, else a 400.',
          ),
        ),
      [],
    ),
  })
  .check(
    z.superRefine((input, context) => {
      if (input.quiet_hours !== null && input.time_zone === null) {
        context.addIssue({ code: 'custom', path: ['time_zone'], message: 'required with quiet_hours' });
      }
    }),
  );

/** A required type is never held back by a digest: one on the same rule would do nothing, so it is refused. */
const digestNotRequired = z.superRefine(
  (rule: { required: boolean; digest?: object | undefined }, context) => {
    if (rule.required && rule.digest !== undefined) {
      context.addIssue({ code: 'custom', path: ['digest'], message: 'a required rule is never held back' });
    }
  },
);

const defaultRule = z
  .strictObject({
    ...ruleNames,
    channels: z._default(channelSwitches, {}),
    required: z._default(z.boolean(), false),
    throttle: z.optional(throttleSchema),
    digest: z.optional(defaultDigestSchema),
    // Fallback steps of matching notifications (docs/delivery-rules.md, "Fallback").
    fallback: z.optional(fallbackSchema),
  })
  .check(namesOne(), digestNotRequired);

/** Which notifications the users' quiet hours let through at once (both held unless set). */
export const quietHoursDefaults = z.strictObject({
  urgent: z._default(z.boolean(), false),
  required: z._default(z.boolean(), false),
});

export const putDefaultsSchema = z.strictObject({
  rules: z.array(defaultRule).check(z.maxLength(MAX_RULES), uniquePatterns()),
  quiet_hours: z._default(quietHoursDefaults, { urgent: false, required: false }),
});

/** `user_id`: whose preferences a service reads or sets; a user may leave it out or name itself. */
export const preferencesQuerySchema = z.strictObject({
  // Checked against the caller by preferencesOwner (preferences.ts).
  user_id: z.optional(identifierSchema('userId', NAMED_USER_RULE)),
});

export type PutPreferencesInput = z.output<typeof putPreferencesSchema>;
export type PutDefaultsInput = z.output<typeof putDefaultsSchema>;
export type PreferencesQuery = z.output<typeof preferencesQuerySchema>;
