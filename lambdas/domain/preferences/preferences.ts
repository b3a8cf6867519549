import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { forbidden, validationError } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type * as z from '../../core/zod';
import type { defaultsSchema, preferencesSchema } from './responses';
import {
  HOLD_ALL,
  type PreferenceRule,
  patternWithin,
  type QuietHoursPass,
  type ResolvedDefaults,
  resolveDefaults,
  type UserPreferences,
} from './rules';
import type { PutDefaultsInput, PutPreferencesInput } from './schema';

/**
 * One item per user who set preferences (`owner` = `user:<id>`) and one for the service defaults
 * (`owner` = `defaults`). Users who never set any have no item, so they cost the fan-out a missing key only.
 */
const DEFAULTS_OWNER = 'defaults';
const userOwner = (userId: string) => `user:${userId}`;

interface PreferencesRecord extends UserPreferences {
  readonly owner: string;
  readonly updated_at: string;
}

interface DefaultsRecord {
  readonly owner: typeof DEFAULTS_OWNER;
  readonly rules: readonly PreferenceRule[];
  readonly quiet_hours?: QuietHoursPass;
  readonly updated_at: string;
}

/**
 * Whose preferences a request reads or sets: a user its own (naming another is 403); a service (the route
 * requires `notifications:write`) the user it names in `user_id`.
 */
export const preferencesOwner = (principal: Principal, userId: string | undefined): string => {
  if (principal.kind === 'user') {
    if (userId !== undefined && userId !== principal.id)
      throw forbidden('A user may see and set only its own preferences');
    return principal.id;
  }
  if (userId === undefined) {
    throw validationError('Name the user', [{ field: 'user_id', issue: 'required for a service token' }]);
  }
  return userId;
};

export type Preferences = z.output<typeof preferencesSchema>;

/** What a stored rule names: its event-type pattern or its category pattern. */
const namedBy = (rule: PreferenceRule): { event_type: string } | { category: string } =>
  rule.category !== undefined ? { category: rule.category } : { event_type: rule.event_type ?? '*' };
export type Defaults = z.output<typeof defaultsSchema>;

const getItem = async <T>(owner: string): Promise<T | undefined> => {
  const result = await documentClient().send(
    new GetCommand({ TableName: tableName('preferences'), Key: { owner }, ConsistentRead: true }),
  );
  return result.Item as T | undefined;
};

export const getDefaults = async (): Promise<Defaults> => {
  const record = await getItem<DefaultsRecord>(DEFAULTS_OWNER);
  return {
    rules: (record?.rules ?? []).map((rule) => ({
      ...namedBy(rule),
      channels: rule.channels ?? {},
      required: rule.required === true,
      ...(rule.throttle ? { throttle: rule.throttle } : {}),
      ...(rule.digest ? { digest: rule.digest } : {}),
      ...(rule.fallback ? { fallback: [...rule.fallback] } : {}),
    })),
    quiet_hours: { ...(record?.quiet_hours ?? HOLD_ALL) },
    updated_at: record?.updated_at ?? null,
  };
};

/** PUT /preferences/defaults: replaces the whole set in one write. */
export const putDefaults = async (input: PutDefaultsInput): Promise<Defaults> => {
  const record: DefaultsRecord = {
    owner: DEFAULTS_OWNER,
    rules: input.rules,
    quiet_hours: input.quiet_hours,
    updated_at: new Date().toISOString(),
  };
  await documentClient().send(new PutCommand({ TableName: tableName('preferences'), Item: record }));
  return { rules: input.rules, quiet_hours: input.quiet_hours, updated_at: record.updated_at };
};

/** What the defaults say about one event type: read once per notification, when it is created. */
export const defaultsFor = async (notification: {
  readonly event_type: string;
  readonly category?: string | undefined;
}): Promise<ResolvedDefaults> => {
  const record = await getItem<DefaultsRecord>(DEFAULTS_OWNER);
  return resolveDefaults(record?.rules ?? [], notification, record?.quiet_hours ?? HOLD_ALL);
};

/** The user's preferences and the defaults they apply over (shown together, so apps see the required types). */
export const getPreferences = async (userId: string): Promise<Preferences> => {
  const [record, defaults] = await Promise.all([
    getItem<PreferencesRecord>(userOwner(userId)),
    getDefaults(),
  ]);
  return {
    user_id: userId,
    rules: (record?.rules ?? []).map((rule) => ({ ...namedBy(rule), channels: rule.channels ?? {} })),
    muted_topics: [...(record?.muted_topics ?? [])],
    digests: [...(record?.digests ?? [])],
    time_zone: record?.time_zone ?? null,
    quiet_hours: record?.quiet_hours
      ? {
          windows: record.quiet_hours.windows.map(({ days, start, end }) => ({
            days: [...days],
            start,
            end,
          })),
        }
      : null,
    updated_at: record?.updated_at ?? null,
    defaults,
  };
};

/**
 * PUT /preferences: replaces the user's rules and mutes in one write, after checking that no rule turns a
 * channel off for types a required default covers (400 naming each such rule). A broader rule (`*`) is
 * accepted; required types are exempt from it at delivery.
 */
export const putPreferences = async (userId: string, input: PutPreferencesInput): Promise<Preferences> => {
  const defaults = await getDefaults();
  const required = defaults.rules.filter((rule) => rule.required);
  const refused = input.rules.flatMap((rule: PreferenceRule, index) => {
    const turnsOff = Object.values(rule.channels ?? {}).some((on) => on === false);
    const kind = rule.category !== undefined ? 'category' : 'event_type';
    const pattern = rule[kind] as string;
    // Within its own kind: a category rule over a required event type (or the reverse) is exempt at delivery.
    const cover = required.find((requiredRule) => {
      const covering: string | undefined = (requiredRule as PreferenceRule)[kind];
      return covering !== undefined && patternWithin(pattern, covering);
    });
    return turnsOff && cover
      ? [
          {
            field: `rules[${index}].${kind}`,
            issue: `${(cover as PreferenceRule)[kind]} is required and cannot be turned off`,
          },
        ]
      : [];
  });
  if (refused.length > 0) {
    throw validationError('Some rules turn off notifications that are required', refused);
  }
  const record: PreferencesRecord = {
    owner: userOwner(userId),
    rules: input.rules,
    muted_topics: input.muted_topics,
    digests: input.digests,
    time_zone: input.time_zone,
    quiet_hours: input.quiet_hours,
    updated_at: new Date().toISOString(),
  };
  await documentClient().send(new PutCommand({ TableName: tableName('preferences'), Item: record }));
  return {
    user_id: userId,
    rules: input.rules,
    muted_topics: input.muted_topics,
    digests: input.digests,
    time_zone: input.time_zone,
    quiet_hours: input.quiet_hours,
    updated_at: record.updated_at,
    defaults,
  };
};

/**
 * The preferences of a chunk's recipients: one BatchGetItem per 100 (eventually consistent, 0.5 RRU a key
 * whether or not the user has an item).
 */
export const preferencesOf = async (userIds: readonly string[]): Promise<Map<string, UserPreferences>> => {
  const items = (await batchGetAll(
    tableName('preferences'),
    userIds.map((id) => ({ owner: userOwner(id) })),
  )) as unknown as PreferencesRecord[];
  // Every stored field goes on (digests, time zone...): the delivery reads what it needs through its accessors.
  return new Map(
    items.map(({ owner, updated_at: _, ...stored }) => [
      owner.slice('user:'.length),
      { ...stored, rules: stored.rules ?? [], muted_topics: stored.muted_topics ?? [] },
    ]),
  );
};
