import type { IncomingMessage } from 'node:http';

export interface ReceivedPush {
  readonly provider: string;
  readonly token: string;
  readonly push_id: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: unknown;
  readonly at: string;
}
export interface PushStandIn {
  readonly provider: string;
  readonly url: string;
  received(): readonly ReceivedPush[];
  markDead(token: string): void;
  close(): Promise<void>;
}

/** A request's body, read whole; null when it is over `limit` bytes (read to the end all the same, then dropped). */
export const readBody = (req: IncomingMessage, limit: number): Promise<Buffer | null> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= limit ? Buffer.concat(chunks) : null));
    req.on('error', reject);
  });
