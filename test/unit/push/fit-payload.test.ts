import { describe, expect, it } from 'vitest';
import { fitPayload, type PushContent } from '../../../lambdas/domain/push/provider';

const content = (overrides: Partial<PushContent> = {}): PushContent => ({
  push_id: '0b0f9d4e-7d55-4b43-9d5f-0d5a3c1f6a10',
  notification_id: 'n-1',
  event_type: 'comment.created',
  title: 'New comment',
  body: 'Alice replied',
  data: { post: 42 },
  priority: 'normal',
  expires_at: null,
  collapse_key: null,
  badge: null,
  silent: false,
  ...overrides,
});

const encode = (c: PushContent) => JSON.stringify({ title: c.title, body: c.body, data: c.data });

describe('fitPayload', () => {
  it('keeps a payload that fits as it is', () => {
    expect(fitPayload(content(), encode)).toEqual({ payload: encode(content()), shrunk: false });
  });

  it('drops data first, and keeps the body whole when that is enough', () => {
    const fitted = fitPayload(content({ data: { blob: 'x'.repeat(5000) } }), encode);
    expect(fitted?.shrunk).toBe(true);
    expect(JSON.parse(fitted?.payload ?? '')).toEqual({
      title: 'New comment',
      body: 'Alice replied',
      data: {},
    });
  });

  it('then cuts the body on a code point, with an ellipsis, to the longest that fits', () => {
    const body = '😀'.repeat(3000); // 12,000 bytes
    const fitted = fitPayload(content({ body, data: { a: 1 } }), encode, 1000);
    const parsed = JSON.parse(fitted?.payload ?? '');
    expect(Buffer.byteLength(fitted?.payload ?? '')).toBeLessThanOrEqual(1000);
    expect(parsed.body.endsWith('…')).toBe(true);
    expect(body.startsWith(parsed.body.slice(0, -1))).toBe(true);
    // One more code point would not fit.
    const longer = `${[...body].slice(0, [...parsed.body].length).join('')}…`;
    expect(Buffer.byteLength(encode(content({ body: longer, data: {} })))).toBeGreaterThan(1000);
  });

  it('is null when not even an empty body and title fit', () => {
    expect(fitPayload(content(), () => 'x'.repeat(200), 100)).toBeNull();
  });
});
