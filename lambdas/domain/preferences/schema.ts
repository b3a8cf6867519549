import { identifierSchema } from '../../core/identifier-schema';
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { NAMED_USER_RULE } from '../../core/principal';
import * as z from '../../core/zod';
import { MAX_CATEGORY_CHARACTERS } from '../notifications/categories';
import { CHANNELS } from '../notifications/channels';
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
});

const defaultRule = z
  .strictObject({
    ...ruleNames,
    channels: z._default(channelSwitches, {}),
    required: z._default(z.boolean(), false),
  })
  .check(namesOne());

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
