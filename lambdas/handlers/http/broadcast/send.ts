import { httpRoute } from '../../../core/http/route';
import { broadcast } from '../../../domain/realtime/broadcast';
import { broadcastSchema } from '../../../domain/realtime/broadcast-schema';
import type { BroadcastFrame } from '../../../domain/realtime/frames';

/** POST /broadcast → 202 {recipients}; large audiences are fanned out by the broadcast worker. */
export const handler = httpRoute('broadcast.send', { body: broadcastSchema }, async (request) => {
  const recipients = await broadcast(request.body.channel, request.body.payload as BroadcastFrame);
  return { status: 202, body: { recipients } };
});
