import { describe, expect, it } from 'vitest';
import { WEBSOCKET_FRAME_MAX_BYTES } from '../../../common/limits';
import type { BatchRecord, DigestItem } from '../../../lambdas/domain/notifications/digest-batches';
import { digestRecord } from '../../../lambdas/domain/notifications/digest-close';
import { notificationFrameBytes } from '../../../lambdas/domain/notifications/frame-size';

/** A closed batch of `count` members whose items take the most bytes a member may give them. */
const batch = (count: number, channels: BatchRecord['opener']['channels']): BatchRecord => {
  const items: DigestItem[] = Array.from({ length: Math.min(count, 50) }, (_, index) => ({
    notification_id: `0196a3b2-7c00-7abc-8def-${String(index).padStart(12, '0')}`,
    event_type: `reports.${'e'.repeat(120)}`,
    source: `billing.${'s'.repeat(120)}`,
    // A control character takes 6 bytes in the frame's JSON (\u0001).
    title: '\u0001'.repeat(256),
    created_at: '2026-11-27T20:00:00.000Z',
  }));
  return {
    user_id: 'alice',
    entry: 'batch#reports#b-1',
    key: 'reports',
    batch_id: 'b-1',
    state: 'closed',
    opened_at: 0,
    closes_at: Date.parse('2026-11-27T21:00:00Z'),
    count,
    items,
    latest: items.at(-1) as DigestItem,
    max_items: 50,
    opener: {
      source: 'billing',
      event_type: 'reports.weekly',
      channels,
      priority: 'normal',
      created_by: 'service:billing',
    },
    ttl: 0,
  };
};

type DigestData = { digest: { count: number; items: DigestItem[] } };

describe('the digest built to fit one frame', () => {
  it('keeps the first items that fit, in data and body, with the exact count', () => {
    const digest = digestRecord(batch(80, ['in_app', 'realtime']));
    expect(notificationFrameBytes(digest)).toBeLessThanOrEqual(WEBSOCKET_FRAME_MAX_BYTES);
    const { count, items } = (digest.data as DigestData).digest;
    expect(count).toBe(80);
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThan(50);
    expect(items).toEqual(batch(80, ['in_app']).items.slice(0, items.length));
    // One more item would not fit.
    const oneMore = digestRecord({
      ...batch(80, ['in_app', 'realtime']),
      items: batch(80, []).items.slice(0, items.length + 1),
    });
    expect((oneMore.data as DigestData).digest.items).toHaveLength(items.length);
  });

  it('keeps every item when it sends no frame', () => {
    const digest = digestRecord(batch(80, ['in_app']));
    expect((digest.data as DigestData).digest.items).toHaveLength(50);
  });
});

describe('the digest title and body, at their length limits', () => {
  const titled = (count: number, title: string): BatchRecord => {
    const closed = batch(count, ['in_app']);
    const items = closed.items.map((item) => ({ ...item, title }));
    return { ...closed, items, latest: items.at(-1) as DigestItem };
  };

  it('keeps "(and n more)" after a newest title of full length, within 256 characters', () => {
    const digest = digestRecord(titled(2, 'x'.repeat(256)));
    expect(digest.title).toHaveLength(256);
    expect(digest.title).toMatch(/^x+… \(and 1 more\)$/);
  });

  it('lists whole titles that fit 4,096 characters, then how many members it leaves out', () => {
    const title = 'y'.repeat(256);
    const digest = digestRecord(titled(30, title));
    expect(digest.body.length).toBeLessThanOrEqual(4096);
    const lines = digest.body.split('\n');
    const listed = lines.slice(0, -1);
    expect(listed.length).toBeGreaterThan(10);
    expect(listed.every((line) => line === title)).toBe(true);
    expect(lines.at(-1)).toBe(`(and ${30 - listed.length} more)`);
    // Every title fits: the body is the list alone.
    expect(digestRecord(titled(3, 'short')).body).toBe('short\nshort\nshort');
  });
});
