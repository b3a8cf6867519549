import { sqsWorker } from '../../core/sqs-worker';
import { parseBusEnvelope, sendEventFrames } from '../../domain/events/frames';

export const handler = sqsWorker('events.frames', (body) => sendEventFrames(parseBusEnvelope(body)));
