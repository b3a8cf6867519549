import { PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { connectionsApi } from '../../core/clients-connections';
import { logger } from '../../core/logger';
import { FrameError, frameErrorOf, readClientFrame } from '../../domain/realtime/client-frames';
import { errorFrame, type ServerFrame } from '../../domain/realtime/frames';
import type { WebSocketMessageEvent } from './frame';

const encoder = new TextEncoder();

/** The answer to a heartbeat: its ack, or the error any other frame type would get (size, id, shape). */
const answerTo = (event: WebSocketMessageEvent): ServerFrame => {
  try {
    const body =
      event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    const { id } = readClientFrame(event.requestContext.routeKey, body);
    return id === undefined ? { type: 'heartbeat.ack' } : { type: 'heartbeat.ack', id };
  } catch (error) {
    if (error instanceof FrameError) return frameErrorOf(error);
    logger.error('heartbeat failed', { error: error as Error });
    return errorFrame('internal', 'Something went wrong; the frame was not processed');
  }
};

/**
 * `heartbeat` → `heartbeat.ack`, and nothing else: no table read or write, so a heartbeat costs two messages
 * and one short invocation. Silence is detected by the sweeper from API Gateway's LastActiveAt.
 */
export const handler = async (event: WebSocketMessageEvent): Promise<{ statusCode: number }> => {
  try {
    await connectionsApi().send(
      new PostToConnectionCommand({
        ConnectionId: event.requestContext.connectionId,
        Data: encoder.encode(JSON.stringify(answerTo(event))),
      }),
    );
  } catch (error) {
    // The client left between its heartbeat and our answer: nothing to do.
    if ((error as Error).name !== 'GoneException') throw error;
  }
  return { statusCode: 200 };
};
