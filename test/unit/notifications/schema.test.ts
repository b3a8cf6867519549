import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../lambdas/core/errors';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { feedQuerySchema } from '../../../lambdas/domain/notifications/feed-query';
import { createNotificationSchema } from '../../../lambdas/domain/notifications/schema';

const valid = { event_type: 'order.shipped', title: 'Shipped', recipient_ids: ['alice'] };
const issuesOf = (input: unknown) => {
  try {
    parseOrThrow(createNotificationSchema, input);
  } catch (error) {
    if (error instanceof ServiceError) return error.details ?? [];
  }
  return [];
};
const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('POST /notifications body', () => {
  it('applies the contract defaults', () => {
    expect(parseOrThrow(createNotificationSchema, valid)).toEqual({
      ...valid,
      body: '',
      data: {},
      priority: 'normal',
      channels: ['in_app'],
      topics: [],
      category: null,
      tags: [],
      scheduled_at: null,
      expires_at: null,
    });
  });

  it('names each missing required field (recipient_ids may be absent: a user token means itself)', () => {
    expect(issuesOf({})).toEqual([
      { field: 'event_type', issue: 'required' },
      { field: 'title', issue: 'required' },
    ]);
  });

  it('rejects unknown fields by name', () => {
    expect(issuesOf({ ...valid, colour: 'red' })).toEqual([{ field: 'colour', issue: 'unknown field' }]);
  });

  it('points at the offending recipient', () => {
    const fields = issuesOf({ ...valid, recipient_ids: ['a', 'b', 'c', 'a'] }).map((issue) => issue.field);
    expect(fields).toEqual(['recipient_ids[3]']);
    expect(issuesOf({ ...valid, recipient_ids: ['a', ''] }).map((issue) => issue.field)).toEqual([
      'recipient_ids[1]',
    ]);
    for (const tooLong of ['x'.repeat(513), 'é'.repeat(257), '😀'.repeat(129)]) {
      expect(issuesOf({ ...valid, recipient_ids: ['a', tooLong] })).toEqual([
        { field: 'recipient_ids[1]', issue: 'must be 1 to 512 bytes in UTF-8' },
      ]);
    }
    expect(issuesOf({ ...valid, recipient_ids: ['😀'.repeat(128)] })).toEqual([]);
  });

  it('bounds recipients to 1..1000', () => {
    expect(issuesOf({ ...valid, recipient_ids: [] }).map((issue) => issue.field)).toEqual(['recipient_ids']);
    const many = Array.from({ length: 1001 }, (_, index) => `u${index}`);
    expect(issuesOf({ ...valid, recipient_ids: many }).map((issue) => issue.field)).toEqual([
      'recipient_ids',
    ]);
    expect(issuesOf({ ...valid, recipient_ids: many.slice(0, 1000) })).toEqual([]);
  });

  it('checks enumerations and uniqueness of channels and priority', () => {
    expect(issuesOf({ ...valid, priority: 'extreme' }).map((issue) => issue.field)).toEqual(['priority']);
    expect(issuesOf({ ...valid, channels: ['sms'] }).map((issue) => issue.field)).toEqual(['channels[0]']);
    expect(issuesOf({ ...valid, channels: [] }).map((issue) => issue.field)).toEqual(['channels']);
    expect(issuesOf({ ...valid, channels: ['toast', 'toast'] }).map((issue) => issue.field)).toEqual([
      'channels[1]',
    ]);
  });

  it('limits sizes of title, body and data', () => {
    expect(issuesOf({ ...valid, title: 't'.repeat(257) }).map((issue) => issue.field)).toEqual(['title']);
    expect(issuesOf({ ...valid, body: 'b'.repeat(4097) }).map((issue) => issue.field)).toEqual(['body']);
    expect(issuesOf({ ...valid, data: { blob: 'x'.repeat(16 * 1024) } }).map((issue) => issue.field)).toEqual(
      ['data'],
    );
    expect(issuesOf({ ...valid, data: [] }).map((issue) => issue.field)).toEqual(['data']);
  });

  it('checks timestamps: RFC 3339, expiry in the future and after the schedule, schedule within a year', () => {
    expect(issuesOf({ ...valid, scheduled_at: 'tomorrow' }).map((issue) => issue.field)).toEqual([
      'scheduled_at',
    ]);
    expect(issuesOf({ ...valid, expires_at: inFuture(-1000) }).map((issue) => issue.field)).toEqual([
      'expires_at',
    ]);
    expect(
      issuesOf({ ...valid, scheduled_at: inFuture(60_000), expires_at: inFuture(30_000) }).map(
        (issue) => issue.field,
      ),
    ).toEqual(['expires_at']);
    expect(
      issuesOf({ ...valid, scheduled_at: inFuture(366 * 24 * 3600 * 1000) }).map((issue) => issue.field),
    ).toEqual(['scheduled_at']);
    const withOffset = new Date(Date.now() + 30 * 24 * 3600 * 1000).toISOString().replace('Z', '+00:00');
    expect(issuesOf({ ...valid, scheduled_at: withOffset, expires_at: null })).toEqual([]);
  });

  it('a throttle counts by event type or category (`per`), over the limit to the feed or a digest (`over`)', () => {
    const throttle = { limit: 2, window_secs: 600 };
    expect(
      issuesOf({ ...valid, throttle: { ...throttle, per: 'category', over: 'digest' }, category: 'social' }),
    ).toEqual([]);
    expect(issuesOf({ ...valid, throttle: { ...throttle, per: 'event_type', over: 'feed' } })).toEqual([]);
    expect(issuesOf({ ...valid, throttle: { ...throttle, per: 'category' } })).toEqual([
      { field: 'throttle.per', issue: '`category` needs a category' },
    ]);
    expect(issuesOf({ ...valid, throttle: { ...throttle, per: 'tag' } }).map((issue) => issue.field)).toEqual(
      ['throttle.per'],
    );
    expect(
      issuesOf({ ...valid, throttle: { ...throttle, over: 'later' } }).map((issue) => issue.field),
    ).toEqual(['throttle.over']);
  });
});

describe('GET /notifications query', () => {
  it('defaults limit to 20 and bounds it to 1..100', () => {
    expect(parseOrThrow(feedQuerySchema, {})).toEqual({ limit: 20 });
    expect(parseOrThrow(feedQuerySchema, { limit: '100' })).toEqual({ limit: 100 });
    expect(() => parseOrThrow(feedQuerySchema, { limit: '0' })).toThrow(ServiceError);
    expect(() => parseOrThrow(feedQuerySchema, { limit: '101' })).toThrow(ServiceError);
    expect(() => parseOrThrow(feedQuerySchema, { limit: 'ten' })).toThrow(ServiceError);
  });
});
