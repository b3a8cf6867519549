import { v5 as uuidv5 } from 'uuid';
import { topicChannel } from '../realtime/channel-names';
import { type DeliveryResult, deliverToChannel } from '../realtime/deliver';
import type { EventFrame } from '../realtime/frames';
import { endGoneConnections } from '../realtime/lifecycle';
import type { BusEnvelope } from './envelope';

export { asBusEnvelope, type BusEnvelope } from './envelope';

/** Names the frame ids of replayed events (UUID v5): one id per (replay, event), whatever the redeliveries. */
const REPLAY_NAMESPACE = '8f6f5f2e-3a3b-4c1e-9d5a-6b7c8d9e0f1a';

/**
 * Contract §4 `event` frame for the `topic:<event_type>` channel. A replayed event (archive replay: the
 * envelope carries `replay-name`) is a new frame: its own `id`, derived from the replay and the event so
 * that a redelivery of it repeats the id, plus `replayed: true` and `original_id`. A client that drops
 * repeats by `id` thus still gets each replay once, and can tell it from the original.
 */
export const eventFrameFor = (envelope: BusEnvelope): EventFrame => {
  const replayName = envelope['replay-name'];
  const frame: EventFrame = {
    type: 'event',
    channel: topicChannel(envelope['detail-type']),
    id: envelope.detail.id,
    event_type: envelope['detail-type'],
    source: envelope.source,
    version: envelope.detail.version,
    data: envelope.detail.data,
    time: envelope.time,
  };
  if (replayName === undefined) return frame;
  return {
    ...frame,
    id: uuidv5(`${replayName}\n${envelope.detail.id}`, REPLAY_NAMESPACE),
    replayed: true,
    original_id: envelope.detail.id,
  };
};

/**
 * Sends the event to the WebSocket subscribers of `topic:<event_type>`, and ends the connections found gone.
 * A redelivered message sends the frame again with the same `id`, so clients can drop repeats; a replay is a
 * new frame (see above).
 */
export const sendEventFrames = async (envelope: BusEnvelope): Promise<DeliveryResult> => {
  const frame = eventFrameFor(envelope);
  const result = await deliverToChannel(frame.channel, frame);
  await endGoneConnections(result.gone);
  return result;
};
