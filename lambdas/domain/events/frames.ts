import { type DeliveryResult, deliverToChannel } from '../realtime/deliver';
import type { EventFrame } from '../realtime/frames';
import type { EventDetail } from './schema';

/** The EventBridge envelope a bus rule delivers to its SQS target (the message body). */
export interface BusEnvelope {
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly time: string;
  readonly detail: EventDetail;
  readonly 'replay-name'?: string;
}

export const parseBusEnvelope = (body: string): BusEnvelope => {
  const envelope = JSON.parse(body) as Partial<BusEnvelope>;
  const detail = envelope.detail as Partial<EventDetail> | undefined;
  if (
    typeof envelope['detail-type'] !== 'string' ||
    typeof envelope.source !== 'string' ||
    typeof envelope.time !== 'string' ||
    typeof detail?.id !== 'string' ||
    typeof detail.version !== 'number' ||
    typeof detail.data !== 'object' ||
    detail.data === null
  ) {
    throw new Error('not an event published through POST /events');
  }
  return envelope as BusEnvelope;
};

/** Contract §4 `event` frame for the `topic:<event_type>` channel. */
export const eventFrameFor = (envelope: BusEnvelope): EventFrame => ({
  type: 'event',
  channel: `topic:${envelope['detail-type']}`,
  id: envelope.detail.id,
  event_type: envelope['detail-type'],
  source: envelope.source,
  version: envelope.detail.version,
  data: envelope.detail.data,
  time: envelope.time,
});

/**
 * Sends the event to the WebSocket subscribers of `topic:<event_type>`. A redelivered message (or a replay)
 * sends the frame again: frames carry the event id, so clients can drop repeats.
 */
export const sendEventFrames = (envelope: BusEnvelope): Promise<DeliveryResult> => {
  const frame = eventFrameFor(envelope);
  return deliverToChannel(frame.channel, frame);
};
