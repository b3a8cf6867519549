import { busWorker } from '../../core/workers';
import { asBusEnvelope, sendEventFrames } from '../../domain/events/frames';

export const handler = busWorker('events.frames', (event) => sendEventFrames(asBusEnvelope(event)));
