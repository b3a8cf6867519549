import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../lambdas/core/errors';
import { parseOrThrow } from '../../../lambdas/core/validation';
import {
  channelsFor,
  patternWithin,
  resolveDefaults,
  switchesFor,
} from '../../../lambdas/domain/preferences/rules';
import { putDefaultsSchema } from '../../../lambdas/domain/preferences/schema';

const all = ['in_app', 'toast', 'realtime'] as const;

describe('preference rules', () => {
  it('the most specific rule that sets a channel wins: exact, then the longer prefix, then *', () => {
    const rules = [
      { event_type: '*', channels: { toast: false, realtime: false } },
      { event_type: 'a.*', channels: { toast: true, in_app: false } },
      { event_type: 'a.b.*', channels: { in_app: true } },
      { event_type: 'a.b.c', channels: { realtime: true } },
    ];
    expect(switchesFor(rules, 'a.b.c')).toEqual({ toast: true, in_app: true, realtime: true });
    expect(switchesFor(rules, 'a.b.d')).toEqual({ toast: true, in_app: true, realtime: false });
    expect(switchesFor(rules, 'a.x')).toEqual({ toast: true, in_app: false, realtime: false });
    expect(switchesFor(rules, 'a')).toEqual({ toast: false, realtime: false });
  });

  it('a user rule beats a default; the defaults decide what the user left open; else on', () => {
    const notification = {
      event_type: 'promo.sale',
      channels: all,
      preference_defaults: resolveDefaults(
        [{ event_type: 'promo.*', channels: { toast: false, in_app: false } }],
        { event_type: 'promo.sale' },
      ),
    };
    const user = { rules: [{ event_type: '*', channels: { toast: true } }], muted_topics: [] };
    expect(channelsFor(notification, user)).toEqual(['toast', 'realtime']);
    expect(channelsFor(notification, undefined)).toEqual(['realtime']);
    expect(channelsFor({ event_type: 'x', channels: all }, undefined)).toEqual([...all]);
  });

  it('a muted topic stops what comes through it, but not a required type', () => {
    const user = { rules: [{ event_type: '*', channels: { in_app: false } }], muted_topics: ['news'] };
    expect(channelsFor({ event_type: 'n.x', channels: ['in_app', 'toast'] }, user, 'news')).toEqual([]);
    expect(channelsFor({ event_type: 'n.x', channels: ['in_app', 'toast'] }, user, 'other')).toEqual([
      'toast',
    ]);
    const required = {
      event_type: 'sec.login',
      channels: ['in_app'] as const,
      preference_defaults: resolveDefaults([{ event_type: 'sec.*', required: true }], {
        event_type: 'sec.login',
      }),
    };
    expect(channelsFor(required, user, 'news')).toEqual(['in_app']);
  });

  it('a category rule mutes a category on a channel; where an event-type rule and a category rule both set a channel, off wins', () => {
    const every = [...all, 'push'] as const;
    const social = { event_type: 'friend.request', category: 'social.friends', channels: every };
    const mutes = {
      rules: [
        { category: 'social.*', channels: { toast: false, push: false } },
        { event_type: 'friend.request', channels: { toast: true, in_app: false } },
        { category: 'social.friends', channels: { realtime: true } },
      ],
      muted_topics: [],
    };
    // toast: on by type, off by category → off; in_app: off by type; realtime: on; push: off by category.
    expect(channelsFor(social, mutes)).toEqual(['realtime']);
    // Without a category (or another one) only the event-type rules apply.
    expect(channelsFor({ event_type: 'friend.request', channels: every }, mutes)).toEqual([
      'toast',
      'realtime',
      'push',
    ]);
    expect(channelsFor({ ...social, category: 'billing' }, mutes)).toEqual(['toast', 'realtime', 'push']);
    // `*` as a category pattern matches every notification that has a category, and none without.
    const everything = { rules: [{ category: '*', channels: { in_app: false } }], muted_topics: [] };
    expect(channelsFor(social, everything)).toEqual(['toast', 'realtime', 'push']);
    expect(channelsFor({ event_type: 'x', channels: every }, everything)).toEqual([...every]);
  });

  it('defaults may name categories: their switches and `required` apply as the event types’ do', () => {
    const defaults = resolveDefaults(
      [
        { category: 'security', required: true },
        { category: 'digest.*', channels: { push: false } },
      ],
      { event_type: 'login.new', category: 'security' },
    );
    expect(defaults.required).toBe(true);
    const user = { rules: [{ category: 'security', channels: { in_app: false } }], muted_topics: [] };
    expect(
      channelsFor(
        { event_type: 'login.new', category: 'security', channels: all, preference_defaults: defaults },
        user,
      ),
    ).toEqual([...all]);
    const weekly = resolveDefaults([{ category: 'digest.*', channels: { push: false } }], {
      event_type: 'x',
      category: 'digest.weekly',
    });
    expect(weekly).toEqual({
      channels: { push: false },
      required: false,
      quiet_hours: { urgent: false, required: false },
    });
  });

  it('patternWithin: which user rules lie wholly inside a required pattern', () => {
    expect(patternWithin('sec.login', 'sec.*')).toBe(true);
    expect(patternWithin('sec.a.*', 'sec.*')).toBe(true);
    expect(patternWithin('sec.*', 'sec.*')).toBe(true);
    expect(patternWithin('sec', 'sec.*')).toBe(false);
    expect(patternWithin('*', 'sec.*')).toBe(false);
    expect(patternWithin('secure.x', 'sec.*')).toBe(false);
    expect(patternWithin('anything', '*')).toBe(true);
    expect(patternWithin('sec.login', 'sec.login')).toBe(true);
    expect(patternWithin('sec.*', 'sec.login')).toBe(false);
  });

  it('the defaults schema: throttles and digests on rules of either kind; `per` is not a rule’s; a digest needs one close and no `required`', () => {
    const issuesOf = (rule: Record<string, unknown>) => {
      try {
        parseOrThrow(putDefaultsSchema, { rules: [rule] });
      } catch (error) {
        if (error instanceof ServiceError) return (error.details ?? []).map((detail) => detail.field);
      }
      return [];
    };
    expect(issuesOf({ category: 'social', throttle: { limit: 3, window_secs: 60, over: 'digest' } })).toEqual(
      [],
    );
    expect(
      issuesOf({ event_type: 'a.*', digest: { window_secs: 600, max_items: 5, title: '{count} new' } }),
    ).toEqual([]);
    expect(issuesOf({ category: '*', digest: { at: '09:00' } })).toEqual([]);
    expect(
      issuesOf({ category: 'social', throttle: { limit: 3, window_secs: 60, per: 'category' } }),
    ).toEqual(['rules[0].throttle.per']);
    expect(issuesOf({ event_type: 'a.*', digest: { at: '09:00', window_secs: 60 } })).toEqual([
      'rules[0].digest.window_secs',
    ]);
    expect(issuesOf({ event_type: 'a.*', digest: {} })).toEqual(['rules[0].digest.window_secs']);
    expect(issuesOf({ event_type: 'a.*', digest: { window_secs: 60, key: 'k' } })).toEqual([
      'rules[0].digest.key',
    ]);
    expect(issuesOf({ event_type: 'a.*', required: true, digest: { window_secs: 60 } })).toEqual([
      'rules[0].digest',
    ]);
    expect(
      parseOrThrow(putDefaultsSchema, { rules: [{ event_type: 'a.*', digest: { at: '09:00' } }] }).rules,
    ).toEqual([{ event_type: 'a.*', channels: {}, required: false, digest: { at: '09:00', max_items: 10 } }]);
  });
});
