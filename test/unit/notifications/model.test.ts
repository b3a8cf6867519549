import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../lambdas/core/errors';
import { newIdAt, timeOfId } from '../../../lambdas/core/ids';
import {
  decodeCursor,
  encodeCursor,
  isReceiverId,
  receiverIdFor,
} from '../../../lambdas/domain/notifications/model';

describe('receiver ids', () => {
  const notificationId = newIdAt(Date.UTC(2026, 0, 1));

  it('are the same for the same notification and recipient, and differ across recipients', () => {
    const at = Date.UTC(2026, 0, 1, 12);
    expect(receiverIdFor(notificationId, 'alice', at)).toBe(receiverIdFor(notificationId, 'alice', at));
    expect(receiverIdFor(notificationId, 'alice', at)).not.toBe(receiverIdFor(notificationId, 'bob', at));
  });

  it('are UUID v7 carrying the delivery time, so they sort by it', () => {
    const earlier = receiverIdFor(notificationId, 'zed', Date.UTC(2026, 0, 1, 12));
    const later = receiverIdFor(notificationId, 'amy', Date.UTC(2026, 0, 1, 12, 0, 0, 1));
    expect(isReceiverId(earlier)).toBe(true);
    expect(timeOfId(earlier)).toBe(Date.UTC(2026, 0, 1, 12));
    expect(earlier < later).toBe(true);
  });
});

describe('feed cursors', () => {
  const receiverId = receiverIdFor(newIdAt(Date.now()), 'alice', Date.now());
  process.env.NOTIFY_CURSOR_KEY ??= 'unit-test-cursor-key-0123456789abcdef';

  it('round-trip for their user', async () => {
    expect(await decodeCursor('alice', await encodeCursor('alice', receiverId))).toBe(receiverId);
  });

  it('are refused when edited, foreign, garbage, or signed without the key', async () => {
    const cursor = await encodeCursor('alice', receiverId);
    const edited = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    const payload = Buffer.from(receiverId).toString('base64url');
    // What a client can compute: a digest of what it knows, or a MAC under a key it guessed.
    const unkeyed = `${payload}.${createHash('sha256').update(`feed:alice\n${receiverId}`).digest().subarray(0, 16).toString('base64url')}`;
    const guessedKey = `${payload}.${createHmac('sha256', 'guess').update(`feed:alice\n${receiverId}`).digest().subarray(0, 16).toString('base64url')}`;
    for (const bad of [edited, `${cursor}x`, `${cursor}.x`, 'not-a-cursor', '', unkeyed, guessedKey]) {
      await expect(decodeCursor('alice', bad), bad).rejects.toThrow(ServiceError);
    }
    await expect(decodeCursor('bob', cursor)).rejects.toThrow(ServiceError);
  });
});
