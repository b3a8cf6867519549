import { describe, expect, it } from 'vitest';
import { fitPayload, type PushContent } from '../../../lambdas/domain/push/provider';
import { pushContent } from '../../support/push-content';

const content = (overrides: Partial<PushContent> = {}): PushContent =>
  pushContent({ body: 'Alice replied', data: { post: 42 }, ...overrides });

const encode = (c: PushContent) => JSON.stringify({ title: c.title, body: c.body, data: c.data });
/** With the link, the buttons and the feed item, as every provider encodes them in some shape. */
const encodeAll = (c: PushContent) =>
  JSON.stringify({
    title: c.title,
    body: c.body,
    data: c.data,
    receiver_id: c.receiver_id,
    url: c.url,
    actions: c.actions,
  });

const RECEIVER = '0196a3b2-7c00-7abc-8def-0123456789ab';
const linked = (overrides: Partial<PushContent> = {}): PushContent =>
  content({
    receiver_id: RECEIVER,
    url: 'https://app.example/posts/42',
    actions: [
      { id: 'reply', label: 'Reply', url: 'https://app.example/posts/42#reply' },
      { id: 'like', label: 'Like', url: null },
    ],
    ...overrides,
  });
const parsed = (fitted: { payload: string } | null) => JSON.parse(fitted?.payload ?? 'null');

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

  describe('with a link and buttons, in the documented order', () => {
    it('drops data first and keeps the link, the buttons and the body', () => {
      const fitted = fitPayload(linked({ data: { blob: 'x'.repeat(5000) } }), encodeAll);
      expect(parsed(fitted)).toEqual({ ...JSON.parse(encodeAll(linked())), data: {} });
    });

    it('then drops the buttons, keeping the link and the whole body when that is enough', () => {
      const limit = Buffer.byteLength(encodeAll(linked({ data: {}, actions: [] })));
      const fitted = fitPayload(linked({ data: { blob: 'x'.repeat(50) } }), encodeAll, limit);
      expect(parsed(fitted)).toMatchObject({
        actions: [],
        url: 'https://app.example/posts/42',
        body: 'Alice replied',
        receiver_id: RECEIVER,
      });
    });

    it('then cuts the body, keeping the link', () => {
      const body = 'b'.repeat(3000);
      const url = `https://app.example/${'u'.repeat(500)}`;
      const fitted = fitPayload(linked({ body, url }), encodeAll, 2000);
      const payload = parsed(fitted);
      expect(payload).toMatchObject({ url, actions: [], data: {}, receiver_id: RECEIVER });
      expect(payload.body.endsWith('…')).toBe(true);
      expect(Buffer.byteLength(fitted?.payload ?? '')).toBeLessThanOrEqual(2000);
    });

    it('then drops the link when even an empty body does not fit with it, and fits the body again without it', () => {
      const url = `https://app.example/${'u'.repeat(3000)}`;
      const fitted = fitPayload(linked({ body: 'b'.repeat(1500), url }), encodeAll, 2000);
      const payload = parsed(fitted);
      expect(payload.url).toBeNull();
      expect(payload.receiver_id).toBe(RECEIVER); // a tap still opens the item
      expect(payload.body.length).toBeGreaterThan(1000);
    });

    it('then cuts the title; never drops the feed item; null when nothing fits', () => {
      const fitted = fitPayload(linked({ title: 't'.repeat(3000), body: 'b'.repeat(3000) }), encodeAll, 1000);
      const payload = parsed(fitted);
      expect(payload).toMatchObject({ body: '', url: null, actions: [], receiver_id: RECEIVER });
      expect(payload.title.endsWith('…')).toBe(true);
      expect(fitPayload(linked(), encodeAll, 60)).toBeNull();
    });

    it('keeps a silent push’s data, dropping only its buttons and then its link', () => {
      const silent = linked({ silent: true, data: { sync: 'x'.repeat(300) } });
      const withoutButtons = fitPayload(
        silent,
        encodeAll,
        Buffer.byteLength(encodeAll({ ...silent, actions: [] })),
      );
      expect(parsed(withoutButtons)).toMatchObject({ actions: [], url: 'https://app.example/posts/42' });
      const bare = fitPayload(
        silent,
        encodeAll,
        Buffer.byteLength(encodeAll({ ...silent, actions: [], url: null })),
      );
      expect(parsed(bare)).toMatchObject({ actions: [], url: null, data: silent.data });
      expect(fitPayload(silent, encodeAll, 300)).toBeNull();
    });

    it('encodes a bounded number of candidates however large the content: no loop', () => {
      let encodings = 0;
      const counting = (c: PushContent) => {
        encodings += 1;
        return encodeAll(c);
      };
      fitPayload(
        linked({
          title: '😀'.repeat(256),
          body: '😀'.repeat(4096),
          url: `https://a.example/${'u'.repeat(2000)}`,
        }),
        counting,
        100,
      );
      // A few whole-content steps, then bisections over 4,096 and 256 code points (twice for the body).
      expect(encodings).toBeLessThan(60);
    });
  });
});
