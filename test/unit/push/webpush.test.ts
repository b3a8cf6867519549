import { createECDH } from 'node:crypto';
import fc from 'fast-check';
import { decrypt } from 'http_ece';
import { describe, expect, it } from 'vitest';
import {
  createWebPushSender,
  encryptPushPayload,
  generateVapidCredentials,
  MAX_PLAINTEXT_BYTES,
  parseWebPushCredentials,
  topicFor,
} from '../../../lambdas/domain/push/webpush';

const b64u = (text: string) => Buffer.from(text, 'base64url');

/** RFC 8291 Appendix A: fixed keys and salt, and the body byte for byte. */
const RFC8291 = {
  plaintext: 'When I grow up, I want to be a watermelon',
  senderPrivate: 'yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw',
  userAgentPublic: 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
  salt: 'DGv6ra1nlYgDCS1FRnbzlw',
  auth: 'BTBZMqHH6r4Tts7J_aSIgg',
  body:
    'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQ' +
    'pu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
};

describe('aes128gcm encryption (RFC 8291)', () => {
  it("reproduces the RFC's example body byte for byte", () => {
    const sender = createECDH('prime256v1');
    sender.setPrivateKey(b64u(RFC8291.senderPrivate));
    const body = encryptPushPayload(
      Buffer.from(RFC8291.plaintext),
      { p256dh: b64u(RFC8291.userAgentPublic), auth: b64u(RFC8291.auth) },
      sender,
      b64u(RFC8291.salt),
    );
    expect(body.toString('base64url')).toBe(RFC8291.body);
  });

  it('gives bodies that http_ece, an implementation we did not write, decrypts to the plaintext', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: MAX_PLAINTEXT_BYTES }),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        (plaintext, authBytes) => {
          const userAgent = createECDH('prime256v1');
          const auth = Buffer.from(authBytes);
          const body = encryptPushPayload(plaintext, { p256dh: userAgent.generateKeys(), auth });
          const read = decrypt(body, { version: 'aes128gcm', privateKey: userAgent, authSecret: auth });
          expect(read.equals(Buffer.from(plaintext))).toBe(true);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('fits the largest plaintext it sends in the 4,096 bytes a push service must take, and no more', () => {
    const userAgent = createECDH('prime256v1');
    const keys = { p256dh: userAgent.generateKeys(), auth: Buffer.alloc(16, 7) };
    expect(MAX_PLAINTEXT_BYTES).toBe(3993);
    expect(encryptPushPayload(Buffer.alloc(MAX_PLAINTEXT_BYTES, 0x61), keys)).toHaveLength(4096);
    expect(encryptPushPayload(Buffer.alloc(MAX_PLAINTEXT_BYTES + 1, 0x61), keys)).toHaveLength(4097);
  });

  it('uses a fresh key and salt for every message', () => {
    const keys = { p256dh: createECDH('prime256v1').generateKeys(), auth: Buffer.alloc(16, 1) };
    const first = encryptPushPayload(Buffer.from('same'), keys);
    const second = encryptPushPayload(Buffer.from('same'), keys);
    expect(first.subarray(0, 16).equals(second.subarray(0, 16))).toBe(false); // salt
    expect(first.subarray(21, 86).equals(second.subarray(21, 86))).toBe(false); // sender key
  });
});

describe('VAPID credentials', () => {
  const good = generateVapidCredentials('mailto:ops@example.com');
  const other = generateVapidCredentials('https://example.com/contact');

  it('are generated in the shape of the secret and read back as they are', () => {
    expect(b64u(good.public_key)).toHaveLength(65);
    expect(b64u(good.private_key)).toHaveLength(32);
    expect(parseWebPushCredentials(good)).toEqual(good);
    expect(parseWebPushCredentials({ ...other, extra: 1 })).toEqual(other);
  });

  it.each([
    ['null', null, /expected an object/],
    ['public_key missing', { ...good, public_key: undefined }, /public_key must be/],
    [
      'public_key compressed',
      { ...good, public_key: b64u(good.public_key).subarray(0, 33).toString('base64url') },
      /public_key must be/,
    ],
    [
      'public_key not base64url',
      { ...good, public_key: `${good.public_key.slice(1)}+` },
      /public_key must be/,
    ],
    ['private_key too short', { ...good, private_key: good.private_key.slice(0, 20) }, /private_key must be/],
    [
      'private_key zero',
      { ...good, private_key: Buffer.alloc(32).toString('base64url') },
      /private_key is not a valid/,
    ],
    [
      'keys of two pairs',
      { ...good, public_key: other.public_key },
      /public_key is not the public key of private_key/,
    ],
    [
      'subject an address',
      { ...good, subject: 'ops@example.com' },
      /subject must be a mailto: address or an https: URL/,
    ],
    ['subject http', { ...good, subject: 'http://example.com' }, /subject must be/],
    ['subject missing', { ...good, subject: undefined }, /subject must be/],
  ])('refuse %s, naming the field', (_case, value, message) => {
    expect(() => parseWebPushCredentials(value)).toThrow(message);
    expect(() => createWebPushSender(value as never)).toThrow(message);
  });

  it('refuse a subject generateVapidCredentials is given wrong', () => {
    expect(() => generateVapidCredentials('nobody')).toThrow(/subject must be/);
  });
});

describe('Topic', () => {
  it('is the collapse key when that is a valid RFC 8030 topic', () => {
    expect(topicFor('order-42_shipping')).toBe('order-42_shipping');
    expect(topicFor('a'.repeat(32))).toBe('a'.repeat(32));
  });

  it('is else a 32-character base64url digest, the same for the same key', () => {
    for (const key of ['order #42', 'a'.repeat(33), 'commande-n°42']) {
      expect(topicFor(key)).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(topicFor(key)).toBe(topicFor(key));
    }
    expect(topicFor('order #42')).not.toBe(topicFor('order #43'));
  });
});
