import { broadcast } from './broadcast';
import type { PresenceSummaryFrame } from './frames';
import { roomMemberCount } from './presence';
import { pendingSummary, settleSummary } from './presence-summary';
import type { PresenceSummaryMessage } from './presence-summary-message';

/**
 * The `broadcast.fanout` worker's part of presence in large rooms: sends the room's summary through the same
 * segments as `POST /broadcast` (docs/realtime.md), then subtracts what it announced. Safe twice: a repeat
 * before the settle sends the summary again (at-least-once, as every frame); after it, does nothing.
 */
export const sendPresenceSummary = async (message: PresenceSummaryMessage): Promise<void> => {
  const pending = await pendingSummary(message);
  if (!pending) return;
  const { at } = pending;
  const frame: PresenceSummaryFrame = {
    type: 'presence.summary',
    id: message.claim,
    scope: message.room,
    members: await roomMemberCount(message.room),
    joined: pending.joins,
    left: pending.leaves,
    updated: pending.updates,
    since: pending.since,
    at,
  };
  await broadcast(message.room, frame);
  await settleSummary(message, pending, at);
};
