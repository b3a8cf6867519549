import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../lambdas/core/errors';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { fallbackOf } from '../../../lambdas/domain/notifications/fallback-steps';
import { createNotificationSchema } from '../../../lambdas/domain/notifications/schema';
import { resolveDefaults } from '../../../lambdas/domain/preferences/rules';
import { putDefaultsSchema } from '../../../lambdas/domain/preferences/schema';

const valid = {
  event_type: 'order.shipped',
  title: 'Shipped',
  recipient_ids: ['alice'],
  channels: ['in_app', 'push', 'toast'],
};
const issuesOf = (schema: Parameters<typeof parseOrThrow>[0], input: unknown) => {
  try {
    parseOrThrow(schema, input);
  } catch (error) {
    if (error instanceof ServiceError) return error.details ?? [];
    throw error;
  }
  return [];
};
const notificationIssues = (body: Record<string, unknown>) =>
  issuesOf(createNotificationSchema, { ...valid, ...body });

describe('fallback steps: validation', () => {
  it('takes 1-3 steps, `unless` defaulting to read, and keeps their order', () => {
    const parsed = parseOrThrow(createNotificationSchema, {
      ...valid,
      fallback: [
        { channel: 'toast', after_secs: 60, unless: 'seen' },
        { channel: 'push', after_secs: 600 },
      ],
    });
    expect(parsed.fallback).toEqual([
      { channel: 'toast', after_secs: 60, unless: 'seen' },
      { channel: 'push', after_secs: 600, unless: 'read' },
    ]);
    expect(notificationIssues({ fallback: [] })).toEqual([
      { field: 'fallback', issue: 'must have at least 1 item' },
    ]);
    const four = [1, 2, 3, 4].map((after) => ({ channel: 'push', after_secs: after }));
    expect(notificationIssues({ fallback: four }).map((issue) => issue.field)).toContain('fallback');
  });

  it('names the step whose after_secs is not after the previous one, or out of bounds', () => {
    expect(
      notificationIssues({
        fallback: [
          { channel: 'toast', after_secs: 600 },
          { channel: 'push', after_secs: 600 },
        ],
      }),
    ).toEqual([{ field: 'fallback[1].after_secs', issue: 'must be greater than fallback[0].after_secs' }]);
    expect(
      notificationIssues({
        fallback: [
          { channel: 'toast', after_secs: 60 },
          { channel: 'push', after_secs: 30 },
        ],
      }).map((issue) => issue.field),
    ).toEqual(['fallback[1].after_secs']);
    expect(
      notificationIssues({ fallback: [{ channel: 'push', after_secs: 0 }] }).map((i) => i.field),
    ).toEqual(['fallback[0].after_secs']);
    expect(
      notificationIssues({ fallback: [{ channel: 'push', after_secs: 604_801 }] }).map((i) => i.field),
    ).toEqual(['fallback[0].after_secs']);
    expect(notificationIssues({ fallback: [{ channel: 'push', after_secs: 604_800 }] })).toEqual([]);
  });

  it('names a bad channel, a repeated channel, a bad `unless` and unknown fields of a step', () => {
    expect(
      notificationIssues({ fallback: [{ channel: 'email', after_secs: 60 }] }).map((i) => i.field),
    ).toEqual(['fallback[0].channel']);
    expect(
      notificationIssues({
        fallback: [
          { channel: 'push', after_secs: 60 },
          { channel: 'push', after_secs: 120 },
        ],
      }),
    ).toEqual([{ field: 'fallback[1].channel', issue: 'duplicate channel' }]);
    expect(
      notificationIssues({ fallback: [{ channel: 'push', after_secs: 60, unless: 'clicked' }] }).map(
        (i) => i.field,
      ),
    ).toEqual(['fallback[0].unless']);
    expect(notificationIssues({ fallback: [{ channel: 'push', after_secs: 60, later: true }] })).toEqual([
      { field: 'fallback[0].later', issue: 'unknown field' },
    ]);
  });

  it("needs each step's channel and in_app in channels, and is not given with push.when unread", () => {
    expect(
      notificationIssues({ channels: ['in_app', 'toast'], fallback: [{ channel: 'push', after_secs: 60 }] }),
    ).toEqual([{ field: 'fallback', issue: "each step's channel must be in channels" }]);
    expect(
      notificationIssues({ channels: ['push'], fallback: [{ channel: 'push', after_secs: 60 }] }),
    ).toEqual([{ field: 'fallback', issue: 'needs `in_app` in channels' }]);
    expect(
      notificationIssues({
        push: { when: 'unread', after_secs: 60 },
        fallback: [{ channel: 'toast', after_secs: 60 }],
      }),
    ).toEqual([
      { field: 'fallback', issue: 'not with `push.when: unread` (which is the one-step fallback of push)' },
    ]);
  });

  it('validates default rules the same way, naming the rule and step', () => {
    const issues = issuesOf(putDefaultsSchema, {
      rules: [
        { event_type: 'social.*', fallback: [{ channel: 'push', after_secs: 60 }] },
        {
          category: 'billing',
          fallback: [
            { channel: 'push', after_secs: 60 },
            { channel: 'toast', after_secs: 10 },
          ],
        },
      ],
    });
    expect(issues).toEqual([
      { field: 'rules[1].fallback[1].after_secs', issue: 'must be greater than fallback[0].after_secs' },
    ]);
  });
});

describe('fallback steps: which apply', () => {
  const base = { channels: ['in_app', 'push', 'toast'] as const };
  const ownSteps = [{ channel: 'toast', after_secs: 30, unless: 'seen' }] as const;
  const defaultSteps = [
    { channel: 'toast', after_secs: 60, unless: 'read' },
    { channel: 'push', after_secs: 600, unless: 'read' },
  ] as const;

  it('push.when unread is the one-step fallback of push', () => {
    expect(
      fallbackOf({ ...base, push: { when: 'unread', after_secs: 120, collapse_key: null, silent: false } }),
    ).toEqual([{ channel: 'push', after_secs: 120, unless: 'read' }]);
    expect(fallbackOf({ ...base, push: { when: 'always', collapse_key: null, silent: false } })).toEqual([]);
  });

  it("a notification's own fallback replaces the defaults'; the defaults' keep only the channels it uses", () => {
    const withDefaults = { ...base, preference_defaults: { fallback: defaultSteps } };
    expect(fallbackOf({ ...withDefaults, fallback: ownSteps })).toEqual(ownSteps);
    expect(fallbackOf(withDefaults)).toEqual(defaultSteps);
    expect(fallbackOf({ ...withDefaults, channels: ['in_app', 'push'] })).toEqual([defaultSteps[1]]);
    // No feed item to test: the defaults' steps do not apply (the channels go with the delivery).
    expect(fallbackOf({ ...withDefaults, channels: ['push', 'toast'] })).toEqual([]);
  });

  it('the most specific matching default rule with a fallback applies, of event-type and category rules', () => {
    const steps = (after: number) => [
      { channel: 'push' as const, after_secs: after, unless: 'read' as const },
    ];
    const rules = [
      { event_type: '*', fallback: steps(1) },
      { event_type: 'social.*', fallback: steps(2) },
      { category: 'social.mentions', fallback: steps(3) },
      { event_type: 'social.comment.created', channels: { push: true } },
      { category: 'social.*', fallback: steps(4) },
    ];
    const pick = (event_type: string, category?: string) =>
      resolveDefaults(rules, { event_type, ...(category ? { category } : {}) }).fallback;
    expect(pick('billing.paid')).toEqual(steps(1));
    // The exact-type rule has no fallback: the prefix rule's applies.
    expect(pick('social.comment.created')).toEqual(steps(2));
    // An exact category beats a prefix type.
    expect(pick('social.comment.created', 'social.mentions')).toEqual(steps(3));
    // Same specificity (`social.*` both): the event-type rule.
    expect(pick('social.comment.created', 'social.other')).toEqual(steps(2));
    expect(resolveDefaults([], { event_type: 'x' }).fallback).toBeUndefined();
  });
});
