import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, with the independent library's verdict on its signature. */
export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The payload as standardwebhooks verified it; undefined when verification failed. */
  readonly verified: unknown;
  readonly verifyError?: string;
}

/** What an endpoint answers: a status, optionally after a delay, with headers. */
export interface Answer {
  readonly status: number;
  readonly delayMs?: number;
  readonly headers?: Record<string, string>;
}

/**
 * A real webhook receiver on 127.0.0.1 (free port). Each endpoint path has a secret (checked with the
 * `standardwebhooks` package, an implementation independent of ours) and a script of answers; the last
 * answer repeats.
 */
export class WebhookReceiver {
  private server: Server | undefined;
  readonly received: Received[] = [];
  private readonly endpoints = new Map<string, { verifier: Webhook; answers: Answer[] }>();
  /** Requests being answered per path now, and the most there ever were at once. */
  private readonly inFlight = new Map<string, { now: number; max: number }>();
  /** Time each request was answered (performance.now()), per path, in order. */
  readonly answeredAt = new Map<string, number[]>();
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        const endpoint = this.endpoints.get(path);
        let verified: unknown;
        let verifyError: string | undefined;
        try {
          verified = endpoint?.verifier.verify(body, req.headers as Record<string, string>);
        } catch (error) {
          verifyError = (error as Error).message;
        }
        this.received.push({
          path,
          headers: req.headers,
          body,
          verified,
          ...(verifyError ? { verifyError } : {}),
        });
        const load = this.inFlight.get(path) ?? { now: 0, max: 0 };
        load.now += 1;
        load.max = Math.max(load.max, load.now);
        this.inFlight.set(path, load);
        const answers = endpoint?.answers ?? [{ status: 404 }];
        const answer = (answers.length > 1 ? answers.shift() : answers[0]) ?? { status: 200 };
        const reply = () => {
          load.now -= 1;
          this.answeredAt.set(path, [...(this.answeredAt.get(path) ?? []), performance.now()]);
          if (res.destroyed) return;
          res.writeHead(answer.status, answer.headers ?? {});
          res.end();
        };
        if (answer.delayMs) setTimeout(reply, answer.delayMs);
        else reply();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Registers an endpoint; `secret` is used as Standard Webhooks libraries read it (whsec_ or raw UTF-8). */
  endpoint(path: string, secret: string, answers: Answer[] = [{ status: 200 }]): string {
    const verifier = secret.startsWith('whsec_')
      ? new Webhook(secret)
      : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
    this.endpoints.set(path, { verifier, answers: [...answers] });
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Replaces an endpoint's script of answers. */
  answer(path: string, answers: Answer[]): void {
    const endpoint = this.endpoints.get(path);
    if (endpoint) endpoint.answers = [...answers];
  }

  /** The most requests to `path` that were ever being answered at once. */
  maxConcurrent(path: string): number {
    return this.inFlight.get(path)?.max ?? 0;
  }

  at(path: string): Received[] {
    return this.received.filter((request) => request.path === path);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
