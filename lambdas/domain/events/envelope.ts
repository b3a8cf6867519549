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
