import { identifierSchema } from '../../core/identifier-schema';
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { NAMED_USER_RULE } from '../../core/principal';
import * as z from '../../core/zod';
import { CHANNELS } from '../notifications/channels';
import { oneClose, timeOfDaySchema, windowSecsSchema } from '../notifications/digest-schema';
import { TOPIC_NAME } from '../topics/names';
import { EVENT_TYPE_PATTERN } from '../webhooks/filters';

/** Rules per user and per defaults set; muted topics per user. docs/preferences.md. */
export const MAX_RULES = 200;
export const MAX_MUTED_TOPICS = 200;

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

const uniquePatterns = <T extends { event_type: string }>() =>
  z.superRefine<T[]>((rules, context) => {
    const seen = new Set<string>();
    rules.forEach((rule, index) => {
      if (seen.has(rule.event_type)) {
        context.addIssue({ code: 'custom', path: [index, 'event_type'], message: 'duplicate pattern' });
      }
      seen.add(rule.event_type);
    });
  });

const userRule = z.strictObject({ event_type: pattern, channels: channelSwitches });

/** A user's digest choices: at most this many (docs/digests.md). */
export const MAX_DIGEST_CHOICES = 20;

/** "Daily digest for marketing.*": an `event_type` or a `category` pattern, and when its batches close. */
const digestChoice = z
  .strictObject({
    event_type: z.optional(pattern),
    category: z.optional(pattern),
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

export const putPreferencesSchema = z.strictObject({
  rules: z.array(userRule).check(z.maxLength(MAX_RULES), uniquePatterns()),
  muted_topics: z._default(
    z.array(z.string().check(z.regex(TOPIC_NAME, 'must be a topic name'))).check(
      z.maxLength(MAX_MUTED_TOPICS),
      z.refine((topics) => new Set(topics).size === topics.length, { message: 'must not repeat a topic' }),
      z.meta({ uniqueItems: true }),
    ),
    [],
  ),
  digests: z._default(
    z
      .array(digestChoice)
      .check(
        z.maxLength(MAX_DIGEST_CHOICES),
        z.describe(
          'Notifications matching a choice (its first match, in this order) are batched into one digest per choice, ' +
            "closing `window_secs` after the first or at `at` in the user's time zone (docs/digests.md). Each names " +
            'exactly one of `event_type` and `category`, and exactly one of `window_secs` and `at`, else a 400.',
        ),
      ),
    [],
  ),
});

const defaultRule = z.strictObject({
  event_type: pattern,
  channels: z._default(channelSwitches, {}),
  required: z._default(z.boolean(), false),
});

export const putDefaultsSchema = z.strictObject({
  rules: z.array(defaultRule).check(z.maxLength(MAX_RULES), uniquePatterns()),
});

/** `user_id`: whose preferences a service reads or sets; a user may leave it out or name itself. */
export const preferencesQuerySchema = z.strictObject({
  // Checked against the caller by preferencesOwner (preferences.ts).
  user_id: z.optional(identifierSchema('userId', NAMED_USER_RULE)),
});

export type PutPreferencesInput = z.output<typeof putPreferencesSchema>;
export type PutDefaultsInput = z.output<typeof putDefaultsSchema>;
export type PreferencesQuery = z.output<typeof preferencesQuerySchema>;
