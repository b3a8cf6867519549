import { PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { connectionsApi } from '../../core/clients-connections';
import type { WebSocketMessageEvent } from './frame';

const encoder = new TextEncoder();

const frameIdOf = (body: string | null | undefined): string | undefined => {
  try {
    const id = (JSON.parse(body ?? '') as { id?: unknown }).id;
    return typeof id === 'string' && id.length <= 64 ? id : undefined;
  } catch {
    return undefined;
  }
};

/**
 * `heartbeat` → `heartbeat.ack`, and nothing else: no table read or write, so a heartbeat costs two messages
 * and one short invocation. Silence is detected by the sweeper from API Gateway's LastActiveAt.
 */
export const handler = async (event: WebSocketMessageEvent): Promise<{ statusCode: number }> => {
  const id = frameIdOf(event.body);
  const frame = id === undefined ? { type: 'heartbeat.ack' } : { type: 'heartbeat.ack', id };
  try {
    await connectionsApi().send(
      new PostToConnectionCommand({
        ConnectionId: event.requestContext.connectionId,
        Data: encoder.encode(JSON.stringify(frame)),
      }),
    );
  } catch (error) {
    // The client left between its heartbeat and our answer: nothing to do.
    if ((error as Error).name !== 'GoneException') throw error;
  }
  return { statusCode: 200 };
};
