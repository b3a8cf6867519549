/**
 * Messages on the `fanout` queue. A `plan` splits a notification's audience into `chunk`s; each chunk is
 * delivered by one worker invocation, so a large audience is processed in parallel and no single request
 * walks the whole list.
 */
export type FanoutMessage =
  | { readonly kind: 'plan'; readonly notification_id: string }
  | { readonly kind: 'chunk'; readonly notification_id: string; readonly recipients: readonly string[] };

/** Recipients per chunk: 100 × 256-character ids stays far below SQS's 256 KiB message limit. */
export const CHUNK_SIZE = 100;

export const chunksOf = <T>(items: readonly T[], size: number): T[][] => {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
};

export const parseFanoutMessage = (body: string): FanoutMessage => {
  const message = JSON.parse(body) as Partial<FanoutMessage>;
  if (typeof message.notification_id !== 'string') throw new Error('fan-out message without notification_id');
  if (message.kind === 'plan') return { kind: 'plan', notification_id: message.notification_id };
  if (message.kind === 'chunk' && Array.isArray(message.recipients)) {
    return { kind: 'chunk', notification_id: message.notification_id, recipients: message.recipients };
  }
  throw new Error(`unknown fan-out message kind ${String(message.kind)}`);
};
