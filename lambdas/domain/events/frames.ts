import { type DeliveryResult, deliverToChannel } from '../realtime/deliver';
import type { EventFrame } from '../realtime/frames';
import type { BusEnvelope } from './envelope';

export { type BusEnvelope, parseBusEnvelope } from './envelope';

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
