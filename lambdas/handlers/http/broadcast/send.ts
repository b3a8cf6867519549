import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { queueUrl } from '../../../core/clients';
import { sqs } from '../../../core/clients-sqs';
import { unavailable } from '../../../core/errors';
import { httpRoute } from '../../../core/http/route';
import { planBroadcast } from '../../../domain/realtime/broadcast';
import { broadcastSchema } from '../../../domain/realtime/broadcast-schema';
import type { BroadcastFrame } from '../../../domain/realtime/frames';

/** POST /broadcast → 202 {recipients}; large audiences are fanned out by the broadcast worker. */
export const handler = httpRoute('broadcast.send', { body: broadcastSchema }, async (request) => {
  const plan = await planBroadcast(request.body.channel, request.body.payload as BroadcastFrame);
  for (let start = 0; start < plan.chunks.length; start += 10) {
    const result = await sqs().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl('broadcast'),
        Entries: plan.chunks.slice(start, start + 10).map((chunk, index) => ({
          Id: String(start + index),
          MessageBody: JSON.stringify(chunk),
        })),
      }),
    );
    // A chunk that did not reach the queue would silently shrink the audience: fail instead.
    if (result.Failed?.length) throw unavailable('The broadcast could not be queued, try again later');
  }
  return { status: 202, body: { recipients: plan.recipients } };
});
