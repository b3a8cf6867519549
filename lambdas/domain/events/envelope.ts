import type { EventDetail } from './schema';

/** The EventBridge envelope a bus rule invokes its function with. */
export interface BusEnvelope {
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly time: string;
  readonly detail: EventDetail;
  readonly 'replay-name'?: string;
}

/** The event a bus rule invoked a bus function with, checked to be one published through POST /events. */
export const asBusEnvelope = (value: unknown): BusEnvelope => {
  const envelope = (value ?? {}) as Partial<BusEnvelope>;
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
