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
        'promo.sale',
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
      preference_defaults: resolveDefaults([{ event_type: 'sec.*', required: true }], 'sec.login'),
    };
    expect(channelsFor(required, user, 'news')).toEqual(['in_app']);
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
