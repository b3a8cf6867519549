import { sqsWorker } from '../../core/workers';
import { continueBroadcast } from '../../domain/realtime/broadcast';
import { broadcastQueue } from '../../domain/realtime/broadcast-queue';
import { sendPresenceSummary } from '../../domain/realtime/presence-summary-broadcast';

/**
 * One message per invocation: a broadcast chunk (deliver a page, then enqueue the rest of the audience as the
 * next chunk), or a large room's presence summary, which starts such chunks.
 */
export const handler = sqsWorker('broadcast.fanout', broadcastQueue, (message) =>
  message.kind === 'presence.summary' ? sendPresenceSummary(message) : continueBroadcast(message),
);
