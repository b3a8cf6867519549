import { describe, expect, it } from 'vitest';
import { fitPayload, type PushContent } from '../../../lambdas/domain/push/provider';
import { pushContent } from '../../support/push-content';

const content = (overrides: Partial<PushContent> = {}): PushContent =>
  pushContent({ body: 'Alice replied', data: { post: 42 }, ...overrides });

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

  it('is null for a silent push whose data does not fit: its data is all it carries', () => {
    expect(fitPayload(content({ silent: true, data: { blob: 'x'.repeat(5000) } }), encode)).toBeNull();
  });
});
