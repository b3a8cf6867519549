import { messageQueue } from '../../core/message-queue';
import * as z from '../../core/zod';
import { presenceSummaryMessage } from './presence-summary-message';

/** A frame a service broadcasts: its own fields beside `type` (docs/contract.md, POST /broadcast). */
const broadcastFrame = z.looseObject({ type: z.string() });

/** Where the next page of a Query starts (DynamoDB's LastEvaluatedKey). */
const startKey = z.optional(z.record(z.string(), z.unknown()));

/** One unit of broadcast work: a page of a channel or of one connection shard (broadcast.ts). */
const channelChunk = z.object({
  kind: z.literal('channel'),
  channel: z.string(),
  frame: broadcastFrame,
  startKey,
  /** The segment of a large channel this chain delivers; absent: the whole channel. */
  range: z.optional(z.object({ from: z.string(), to: z.string() })),
});
const shardChunk = z.object({ kind: z.literal('shard'), shard: z.string(), frame: broadcastFrame, startKey });

export type BroadcastChunk = z.infer<typeof channelChunk> | z.infer<typeof shardChunk>;

/**
 * The `broadcast` queue: broadcast chunks, and the presence summaries of large rooms, which start such chunks (their
 * kind declared in presence-summary-message.ts, which its sender imports alone).
 */
export const broadcastQueue = messageQueue('broadcast', [channelChunk, shardChunk, presenceSummaryMessage]);
