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

  it('round-trip for their user', () => {
    expect(decodeCursor('alice', encodeCursor('alice', receiverId))).toBe(receiverId);
  });

  it('are refused when edited, foreign or garbage', () => {
    const cursor = encodeCursor('alice', receiverId);
    const edited = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    for (const bad of [edited, `${cursor}x`, 'not-a-cursor', '']) {
      expect(() => decodeCursor('alice', bad)).toThrow(ServiceError);
    }
    expect(() => decodeCursor('bob', cursor)).toThrow(ServiceError);
  });
});
