import { WebSocket } from 'ws';
import { asyncApiProblems } from './api-conformance';

export type Frame = Record<string, unknown> & { type: string };

/**
 * A WebSocket test client that keeps every frame it receives and waits for the ones a test expects. Every
 * frame is checked against docs/api/asyncapi.json (api-conformance.ts): waiting on or closing a client that
 * received an undocumented frame throws.
 */
export class TestClient {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | undefined;
  /** Frames that do not conform to the AsyncAPI document, with what is wrong. */
  readonly undocumented: string[] = [];
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      const problems = asyncApiProblems(frame);
      if (problems.length > 0) this.undocumented.push(`${JSON.stringify(frame)}: ${problems.join('; ')}`);
      this.frames.push(frame);
      this.wake();
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
    socket.on('error', () => {});
  }

  private wake() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Opens a connection; rejects with the handshake's HTTP status when the server refuses it. */
  static open(url: string): Promise<TestClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(new TestClient(socket)));
      socket.once('unexpected-response', (_request, response) =>
        reject(new HandshakeError(response.statusCode ?? 0)),
      );
      socket.once('error', reject);
    });
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Throws when a frame received so far differs from docs/api/asyncapi.json. */
  assertDocumentedFrames(): void {
    if (this.undocumented.length > 0)
      throw new Error(`Frames differ from docs/api/asyncapi.json:\n${this.undocumented.join('\n')}`);
  }

  /** Sends one message in two WebSocket fragments (API Gateway checks its 32 KiB per frame, not per message). */
  sendFragmented(text: string): void {
    const half = Math.ceil(text.length / 2);
    this.socket.send(text.slice(0, half), { fin: false });
    this.socket.send(text.slice(half), { fin: true });
  }

  /** Waits until a received frame (not taken before) matches, and takes it. */
  async next(match: (frame: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    let drained = false;
    for (;;) {
      this.assertDocumentedFrames();
      const index = this.frames.findIndex(match);
      if (index >= 0) return this.frames.splice(index, 1)[0] as Frame;
      if (this.closed)
        throw new Error(
          `closed (${this.closed.code}) before the frame arrived: ${JSON.stringify(this.frames)}`,
        );
      const left = deadline - Date.now();
      if (left <= 0 && !drained) {
        // After a stall of this process that outlasted the deadline, the timer runs before the socket's pending
        // reads: let them in (one turn of the event loop) before deciding that the frame never came.
        drained = true;
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      if (left <= 0) throw new Error(`no matching frame; received ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  nextOfType(type: string, timeoutMs?: number): Promise<Frame> {
    return this.next((frame) => frame.type === type, timeoutMs);
  }

  /** Sends a frame with an id and waits for its ack or error. */
  async request(frame: Record<string, unknown>): Promise<Frame> {
    const id = `r-${Math.random().toString(36).slice(2)}`;
    this.send({ ...frame, id });
    return this.next((answer) => answer.id === id && (answer.type === 'ack' || answer.type === 'error'));
  }

  async waitClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) {
        // As in `next`: a close pending on the socket after a stall gets its turn first.
        await new Promise((resolve) => setImmediate(resolve));
        if (this.closed) break;
        throw new Error('the connection stayed open');
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    this.assertDocumentedFrames();
    return this.closed;
  }

  async close(): Promise<void> {
    this.assertDocumentedFrames();
    if (this.closed) return;
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close(1000);
    });
  }
}

export class HandshakeError extends Error {
  constructor(readonly status: number) {
    super(`handshake refused with ${status}`);
  }
}
