import { describe, expect, it } from 'vitest';
import {
  channelsFor,
  patternWithin,
  resolveDefaults,
  switchesFor,
} from '../../../lambdas/domain/preferences/rules';

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
});
