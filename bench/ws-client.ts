import { WebSocket } from 'ws';

export type Frame = Record<string, unknown> & { type: string };

/**
 * A light WebSocket client for the benchmarks: it notes when each frame arrives (performance.now()) and lets
 * a caller wait for a frame; it keeps nothing else, so a thousand of them stay cheap.
 */
export class BenchClient {
  /** Arrival time of each `notification` frame, by notification id. */
  readonly notificationArrivals = new Map<string, number>();
  private waiters: { match: (frame: Frame) => boolean; resolve: (frame: Frame) => void }[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const at = performance.now();
      const frame = JSON.parse(data.toString()) as Frame;
      if (frame.type === 'notification' && typeof frame.notification_id === 'string') {
        this.notificationArrivals.set(frame.notification_id, at);
      }
      const index = this.waiters.findIndex((waiter) => waiter.match(frame));
      if (index >= 0) this.waiters.splice(index, 1)[0]?.resolve(frame);
    });
    socket.on('error', () => {});
  }

  /** Connects with `?token=` and waits for the `session` frame (the connection is then subscribed). */
  static async open(wsUrl: string, token: string): Promise<BenchClient> {
    const socket = new WebSocket(`${wsUrl}?token=${token}`);
    const client = new BenchClient(socket);
    const session = client.next((frame) => frame.type === 'session', 15_000);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) =>
        reject(new Error(`handshake refused with ${response.statusCode}`)),
      );
      socket.once('error', reject);
    });
    await session;
    return client;
  }

  next(match: (frame: Frame) => boolean, timeoutMs = 15_000): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter.resolve !== done);
        reject(new Error('no matching frame in time'));
      }, timeoutMs);
      const done = (frame: Frame) => {
        clearTimeout(timer);
        resolve(frame);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  /** Resolves when the notification's frame has arrived (at once if it already has). */
  waitForNotification(notificationId: string, timeoutMs = 30_000): Promise<number> {
    const arrived = this.notificationArrivals.get(notificationId);
    if (arrived !== undefined) return Promise.resolve(arrived);
    return this.next(
      (frame) => frame.type === 'notification' && frame.notification_id === notificationId,
      timeoutMs,
    ).then(() => this.notificationArrivals.get(notificationId) ?? performance.now());
  }

  send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close(1000);
    });
  }
}

/** Runs `task` over `items` with at most `limit` at a time (bounded, so 1,000 connects fit 2 cores). */
export const inBatches = async <T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
};
