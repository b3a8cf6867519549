import { sqsWorker } from '../../core/sqs-worker';
import { type BroadcastChunk, continueBroadcast } from '../../domain/realtime/broadcast';

/** One broadcast chunk per message: deliver a page, then enqueue the rest of the audience as the next chunk. */
export const handler = sqsWorker('broadcast.fanout', (body) =>
  continueBroadcast(JSON.parse(body) as BroadcastChunk),
);
