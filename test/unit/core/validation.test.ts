// zod/mini has no messages of its own: lambdas/core/zod.ts gives it the project's ("must be ..."), the voice
// of the messages written by hand. Nothing else in this file imports full zod (which would install English
// itself), so a lost error map shows here as "Invalid input".
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../lambdas/core/errors';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { createNotificationSchema } from '../../../lambdas/domain/notifications/schema';
import type { OutboundFrame } from '../../../lambdas/domain/realtime/frames';
import { handleClientFrame } from '../../../lambdas/domain/realtime/operations';

const detailsOf = (input: unknown) => {
  try {
    parseOrThrow(createNotificationSchema, input);
  } catch (error) {
    if (error instanceof ServiceError) return error.details;
  }
  throw new Error('expected a validation error');
};

describe('validation messages', () => {
  it("speak in the project's voice for the built-in checks of a request body", () => {
    expect(
      detailsOf({
        event_type: 'a',
        title: 'x'.repeat(257),
        recipient_ids: ['u', ''],
        priority: 'asap',
        channels: [],
      }),
    ).toEqual([
      { field: 'title', issue: 'must be at most 256 characters' },
      { field: 'priority', issue: 'must be one of "low", "normal", "high", "urgent"' },
      { field: 'channels', issue: 'must have at least 1 item' },
      { field: 'recipient_ids[1]', issue: 'must be 1 to 512 bytes in UTF-8' },
    ]);
  });

  it('say "required" for a missing field and name the expected type for a wrong one', () => {
    expect(detailsOf({ title: 'x', recipient_ids: ['u'] })).toEqual([
      { field: 'event_type', issue: 'required' },
    ]);
    // A missing field of a fixed set of values too: not "must be one of", which reads as a wrong value sent.
    expect(
      detailsOf({
        event_type: 'a',
        title: 'x',
        recipient_ids: ['u'],
        channels: ['in_app', 'push'],
        fallback: [{ after_secs: 60 }],
      }),
    ).toEqual([{ field: 'fallback[0].channel', issue: 'required' }]);
    expect(detailsOf({ event_type: 5, title: 'x', recipient_ids: ['u', 7] })).toEqual([
      { field: 'event_type', issue: 'must be a string, not a number' },
      { field: 'recipient_ids[1]', issue: 'must be a string, not a number' },
    ]);
  });

  it('speak in the same voice in the error frame of an invalid client frame', async () => {
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
        message: 'Invalid subscribe frame: channel: must be at least 1 character',
      },
    ]);
  });
});
