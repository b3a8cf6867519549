// Apart from schema.ts so that the fan-out worker, which validates nothing, does not load zod.
import type { Channel } from '../notifications/channels';
import type { DigestPreference } from '../notifications/digest-rules';
import { filterMatches } from '../webhooks/filters';
import type { QuietHours } from './quiet-hours';

/** Per channel on (true) or off (false); a channel a rule leaves out is decided by a less specific rule. */
export type ChannelSwitches = Partial<Record<Channel, boolean>>;

/** At most `limit` pushes or toasts per recipient in each window of `window_secs` (docs/delivery-rules.md). */
export interface ThrottleLimit {
  readonly limit: number;
  readonly window_secs: number;
}

/** A throttle as fixed on a notification: its limit and the key it is counted under (a pattern or event type). */
export interface Throttle extends ThrottleLimit {
  readonly key: string;
}

/** One rule: an event-type pattern (exact type, `prefix.*` or `*`) and the channels it switches. */
export interface PreferenceRule {
  readonly event_type: string;
  readonly channels?: ChannelSwitches;
  /** Defaults only: matching types reach users whatever their own rules and mutes say. */
  readonly required?: boolean;
  /** Defaults only: the throttle of matching types, counted across all of them per recipient. */
  readonly throttle?: ThrottleLimit;
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
  /** The most specific matching default rule's throttle, keyed by its pattern. */
  readonly throttle?: Throttle;
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

/** The rules that match a type, the least specific first. */
const matchingRules = (rules: readonly PreferenceRule[], eventType: string): PreferenceRule[] =>
  rules
    .filter((rule) => filterMatches(rule.event_type, eventType))
    .sort((a, b) => specificity(a.event_type) - specificity(b.event_type));

/** Per channel, the value of the most specific matching rule that sets it. */
export const switchesFor = (rules: readonly PreferenceRule[], eventType: string): ChannelSwitches => {
  const matching = matchingRules(rules, eventType);
  const switches: ChannelSwitches = {};
  for (const rule of matching) Object.assign(switches, rule.channels ?? {}); // most specific assigned last
  return switches;
};

export const resolveDefaults = (
  rules: readonly PreferenceRule[],
  eventType: string,
  quietHours: QuietHoursPass = HOLD_ALL,
): ResolvedDefaults => {
  const throttled = matchingRules(rules, eventType).findLast((rule) => rule.throttle !== undefined);
  return {
    channels: switchesFor(rules, eventType),
    required: rules.some((rule) => rule.required === true && filterMatches(rule.event_type, eventType)),
    quiet_hours: quietHours,
    ...(throttled?.throttle ? { throttle: { key: throttled.event_type, ...throttled.throttle } } : {}),
  };
};

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
  readonly channels: readonly Channel[];
  readonly preference_defaults?: ResolvedDefaults;
}

/**
 * The channels a notification reaches one recipient on (empty: nothing at all). Required types ignore the
 * user's rules and mutes; a muted topic stops what comes through it; otherwise per channel the user's most
 * specific rule, else the defaults' most specific rule, else on.
 */
export const channelsFor = (
  notification: DeliveryFacts,
  preferences: UserPreferences | undefined,
  viaTopic?: string,
): Channel[] => {
  const defaults = notification.preference_defaults ?? { channels: {}, required: false };
  if (defaults.required) return [...notification.channels];
  if (viaTopic !== undefined && preferences?.muted_topics.includes(viaTopic)) return [];
  const own = preferences ? switchesFor(preferences.rules, notification.event_type) : {};
  return notification.channels.filter((channel) => own[channel] ?? defaults.channels[channel] ?? true);
};
