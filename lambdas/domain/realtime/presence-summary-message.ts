import { messageQueue } from '../../core/message-queue';
import * as z from '../../core/zod';

/** What sends a large room's presence summary (presence-summary.ts): the claim names the one arming that is current. */
export const presenceSummaryMessage = z.object({
  kind: z.literal('presence.summary'),
  room: z.string(),
  claim: z.string(),
});

export type PresenceSummaryMessage = z.infer<typeof presenceSummaryMessage>;

/**
 * The `broadcast` queue (broadcast-queue.ts) as the presence summary's sender sees it: this kind alone. Every
 * function that ends a connection may arm a summary; with the whole queue each would carry the schemas of the
 * broadcast chunks too (≈ 3 KiB: esbuild keeps every top-level zod call of a module imported). The worker reads
 * the queue with all of its kinds.
 */
export const presenceSummaryQueue = messageQueue('broadcast', [presenceSummaryMessage]);
