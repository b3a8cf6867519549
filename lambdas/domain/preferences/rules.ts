// Apart from schema.ts so that the fan-out worker, which validates nothing, does not load zod.
import type { Channel } from '../notifications/channels';
import type { FallbackStep } from '../notifications/fallback-steps';
import { filterMatches } from '../webhooks/filters';
import type { QuietHours } from './quiet-hours';

/** Per channel on (true) or off (false); a channel a rule leaves out is decided by a less specific rule. */
export type ChannelSwitches = Partial<Record<Channel, boolean>>;

/**
 * At most `limit` pushes or toasts per recipient in each window of `window_secs`; over it the feed only, or a
 * digest at the window's end (`over`, absent: feed). docs/delivery-rules.md.
 */
export interface ThrottleLimit {
  readonly limit: number;
  readonly window_secs: number;
  readonly over?: 'feed' | 'digest';
}

/**
 * A throttle as fixed on a notification: its limit and the key it is counted under: an event type or event-type
 * pattern, or `category:` and a category or category pattern (event types have no `:`, so the two never meet).
 */
export interface Throttle extends ThrottleLimit {
  readonly key: string;
}

/** A default rule's digest: how its batches close and what the digest says (its key is the rule's pattern). */
export interface DefaultDigest {
  readonly window_secs?: number;
  readonly at?: string;
  readonly max_items: number;
  readonly title?: string;
}

/** The counter key of a category or category pattern. */
export const categoryKey = (category: string): string => `category:${category}`;

/**
 * One rule: an event-type pattern or a category pattern (exact name, `prefix.*` or `*`; one of the two) and the
 * channels it switches.
 */
export interface PreferenceRule {
  readonly event_type?: string;
  readonly category?: string;
  readonly channels?: ChannelSwitches;
  /** Defaults only: matching types reach users whatever their own rules and mutes say. */
  readonly required?: boolean;
  /** Defaults only: the throttle of what the rule matches, counted across all of it per recipient. */
  readonly throttle?: ThrottleLimit;
  /** Defaults only: batch what the rule matches (docs/digests.md). */
  readonly digest?: DefaultDigest;
  /** Defaults only: the fallback steps of matching notifications (docs/delivery-rules.md, "Fallback"). */
  readonly fallback?: readonly FallbackStep[];
}

/** A user's digest choice (preferences `digests`): notifications matching it are batched (docs/digests.md). */
export interface DigestPreference {
  readonly event_type?: string;
  readonly category?: string;
  readonly window_secs?: number;
  readonly at?: string;
}

/** A user's preferences as stored (absent for a user who never set any). */
export interface UserPreferences {
  readonly rules: readonly PreferenceRule[];
  readonly muted_topics: readonly string[];
  /** The user's digest choices (docs/digests.md); absent when none were set. */
  readonly digests?: readonly DigestPreference[];
  readonly time_zone?: string | null;
  readonly quiet_hours?: QuietHours | null;
}

/** Which notifications the users' quiet hours let through at once: `urgent` priority, `required` types. */
export interface QuietHoursPass {
  readonly urgent: boolean;
  readonly required: boolean;
}

/** Neither passes: what the defaults say when they set nothing (and what a notification stored before says). */
export const HOLD_ALL: QuietHoursPass = { urgent: false, required: false };

/** What the service defaults say about one event type, fixed on the notification when it is created. */
export interface ResolvedDefaults {
  readonly channels: ChannelSwitches;
  readonly required: boolean;
  readonly quiet_hours?: QuietHoursPass;
  /** The most specific matching event-type rule's throttle, keyed by its pattern. */
  readonly throttle?: Throttle;
  /** The most specific matching category rule's throttle, keyed by `category:` and its pattern. */
  readonly category_throttle?: Throttle;
  /** The digest of the most specific matching event-type rule with one, else of the category rule; its key the pattern. */
  readonly digest?: DefaultDigest & { readonly key: string };
  /** The fallback of the most specific matching default rule (event type or category) that has one. */
  readonly fallback?: readonly FallbackStep[];
}

/**
 * How specific a pattern is: an exact type beats every `prefix.*`, a longer prefix beats a shorter one, and
 * `*` comes last. Event types have at most 64 segments, so 1,000 is above any prefix.
 */
export const specificity = (pattern: string): number => {
  if (pattern === '*') return 0;
  if (!pattern.endsWith('.*')) return 1000;
  return pattern.split('.').length - 1;
};

/** What a rule names: an event type or a category. */
export type RuleKind = 'event_type' | 'category';

/** Per channel, the value of the most specific rule of one kind matching `name` that sets it. */
export const switchesFor = (
  rules: readonly PreferenceRule[],
  name: string,
  kind: RuleKind = 'event_type',
): ChannelSwitches => {
  const matching = rules
    .flatMap((rule) => {
      const pattern = rule[kind];
      return pattern !== undefined && filterMatches(pattern, name) ? [{ pattern, rule }] : [];
    })
    .sort((a, b) => specificity(a.pattern) - specificity(b.pattern));
  const switches: ChannelSwitches = {};
  for (const { rule } of matching) Object.assign(switches, rule.channels ?? {}); // most specific assigned last
  return switches;
};

/**
 * The switches of a set of rules for a notification: its event type's and its category's, each resolved by
 * specificity; where both set a channel, off wins (a mute of either kind holds).
 */
const switchesOf = (
  rules: readonly PreferenceRule[],
  notification: { readonly event_type: string; readonly category?: string | undefined },
): ChannelSwitches => {
  const byType = switchesFor(rules, notification.event_type);
  if (notification.category === undefined) return byType;
  const byCategory = switchesFor(rules, notification.category, 'category');
  const switches: ChannelSwitches = { ...byCategory, ...byType };
  for (const [channel, on] of Object.entries(byCategory))
    if (on === false) switches[channel as Channel] = false;
  return switches;
};

/** Whether a rule matches the notification's event type or its category. */
const ruleMatches = (
  rule: PreferenceRule,
  notification: { readonly event_type: string; readonly category?: string | undefined },
): boolean =>
  rule.event_type !== undefined
    ? filterMatches(rule.event_type, notification.event_type)
    : rule.category !== undefined &&
      notification.category !== undefined &&
      filterMatches(rule.category, notification.category);

/**
 * The most specific rule of one kind matching `name` that carries `field`, with its pattern (a category pattern
 * as `category:<pattern>`, the key it is counted or batched under).
 */
const mostSpecificWith = <F extends 'throttle' | 'digest'>(
  rules: readonly PreferenceRule[],
  field: F,
  kind: RuleKind,
  name: string | undefined,
): { readonly key: string; readonly value: NonNullable<PreferenceRule[F]> } | undefined => {
  if (name === undefined) return undefined;
  const found = rules
    .flatMap((rule) => {
      const pattern = rule[kind];
      const value = rule[field];
      return value !== undefined && pattern !== undefined && filterMatches(pattern, name)
        ? [{ pattern, value }]
        : [];
    })
    .sort((a, b) => specificity(a.pattern) - specificity(b.pattern))
    .at(-1);
  if (!found) return undefined;
  return { key: kind === 'category' ? categoryKey(found.pattern) : found.pattern, value: found.value };
};

/**
 * The defaults for a notification: the switches, whether it is required, what quiet hours let through, the
 * throttles of the most specific event-type rule and the most specific category rule that carry one (both count),
 * and the digest of the most specific rule with one (an event-type rule's before a category rule's).
 */
export const resolveDefaults = (
  rules: readonly PreferenceRule[],
  notification: { readonly event_type: string; readonly category?: string | undefined },
  quietHours: QuietHoursPass = HOLD_ALL,
): ResolvedDefaults => {
  const byType = mostSpecificWith(rules, 'throttle', 'event_type', notification.event_type);
  const byCategory = mostSpecificWith(rules, 'throttle', 'category', notification.category);
  // An event type is the narrower name: its rule's digest before the category's.
  const digest =
    mostSpecificWith(rules, 'digest', 'event_type', notification.event_type) ??
    mostSpecificWith(rules, 'digest', 'category', notification.category);
  const fallback = fallbackRule(rules, notification)?.fallback;
  return {
    channels: switchesOf(rules, notification),
    required: rules.some((rule) => rule.required === true && ruleMatches(rule, notification)),
    quiet_hours: quietHours,
    ...(byType ? { throttle: { key: byType.key, ...byType.value } } : {}),
    ...(byCategory ? { category_throttle: { key: byCategory.key, ...byCategory.value } } : {}),
    ...(digest ? { digest: { key: digest.key, ...digest.value } } : {}),
    ...(fallback ? { fallback } : {}),
  };
};

/**
 * The most specific matching default rule with a fallback, of both kinds: by the specificity of its pattern, an
 * event-type rule before a category rule of the same specificity (the type says more about one notification).
 */
const fallbackRule = (
  rules: readonly PreferenceRule[],
  notification: { readonly event_type: string; readonly category?: string | undefined },
): PreferenceRule | undefined =>
  rules
    .filter((rule) => rule.fallback !== undefined && ruleMatches(rule, notification))
    .map((rule) => ({
      rule,
      rank: specificity(rule.event_type ?? rule.category ?? '*') * 2 + (rule.event_type ? 1 : 0),
    }))
    .sort((a, b) => a.rank - b.rank)
    .at(-1)?.rule;

/** Whether every type `pattern` matches is also matched by `cover` (so a rule on it only touches covered types). */
export const patternWithin = (pattern: string, cover: string): boolean => {
  if (cover === '*' || pattern === cover) return true;
  if (!cover.endsWith('.*')) return false;
  const prefix = cover.slice(0, -1); // `security.`
  return pattern !== '*' && pattern.startsWith(prefix) && pattern.length > prefix.length;
};

/** What one notification needs to decide its channels per recipient. */
export interface DeliveryFacts {
  readonly event_type: string;
  readonly category?: string;
  readonly channels: readonly Channel[];
  readonly preference_defaults?: ResolvedDefaults;
}

/**
 * The channels a notification reaches one recipient on (empty: nothing at all). Required types ignore the
 * user's rules and mutes; a muted topic stops what comes through it; otherwise per channel the user's most
 * specific rule (of its event type and of its category: where both set the channel, off wins), else the
 * defaults' the same way, else on.
 */
export const channelsFor = (
  notification: DeliveryFacts,
  preferences: UserPreferences | undefined,
  viaTopic?: string,
): Channel[] => {
  const defaults = notification.preference_defaults ?? { channels: {}, required: false };
  if (defaults.required) return [...notification.channels];
  if (viaTopic !== undefined && preferences?.muted_topics.includes(viaTopic)) return [];
  const own = preferences ? switchesOf(preferences.rules, notification) : {};
  return notification.channels.filter((channel) => own[channel] ?? defaults.channels[channel] ?? true);
};
