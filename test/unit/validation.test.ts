// zod/mini has no messages of its own: lambdas/core/zod.ts loads the English ones. Nothing else in this file
// imports full zod (which would install English itself), so a lost locale shows here as "Invalid input".
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../lambdas/core/errors';
import { parseOrThrow } from '../../lambdas/core/validation';
import { createNotificationSchema } from '../../lambdas/domain/notifications/schema';
import type { OutboundFrame } from '../../lambdas/domain/realtime/frames';
import { handleClientFrame } from '../../lambdas/domain/realtime/operations';

const detailsOf = (input: unknown) => {
  try {
    parseOrThrow(createNotificationSchema, input);
  } catch (error) {
    if (error instanceof ServiceError) return error.details;
  }
  throw new Error('expected a validation error');
};

describe('validation messages', () => {
  it('are zod English texts for the built-in checks of a request body', () => {
    expect(
      detailsOf({ event_type: 'a', title: 'x'.repeat(257), recipient_ids: ['u'], priority: 'asap' }),
    ).toEqual([
      { field: 'title', issue: 'Too big: expected string to have <=256 characters' },
      { field: 'priority', issue: 'Invalid option: expected one of "low"|"normal"|"high"|"urgent"' },
    ]);
  });

  it('say "required" for a missing field and name the expected type for a wrong one', () => {
    expect(detailsOf({ title: 'x', recipient_ids: ['u'] })).toEqual([
      { field: 'event_type', issue: 'required' },
    ]);
    expect(detailsOf({ event_type: 5, title: 'x', recipient_ids: ['u', 7] })).toEqual([
      { field: 'event_type', issue: 'Invalid input: expected string, received number' },
      { field: 'recipient_ids[1]', issue: 'Invalid input: expected string, received number' },
    ]);
  });

  it('are zod English texts in the error frame of an invalid client frame', async () => {
    const sent: OutboundFrame[] = [];
    await handleClientFrame(
      'subscribe',
      JSON.stringify({ type: 'subscribe', id: 'f1', channel: '' }),
      { connectionId: 'c1', send: async (frame) => sent.push(frame) },
      {
        subscribe: async () => {
          throw new Error('not reached: the frame fails validation first');
        },
      },
    );
    expect(sent).toEqual([
      {
        type: 'error',
        id: 'f1',
        code: 'validation',
        message: 'Invalid subscribe frame: channel: Too small: expected string to have >=1 characters',
      },
    ]);
  });
});
