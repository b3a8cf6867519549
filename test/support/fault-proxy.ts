/**
 * A real HTTP proxy in front of the local runtime that can fail chosen requests, the way networks and gateways do:
 *
 *   const proxy = await startFaultProxy(runtime.httpUrl);     // proxy.url ends in /api/v1 like httpUrl
 *   proxy.failNext((r) => r.method === 'GET', { status: 503, headers: { 'retry-after': '1' } });
 *   proxy.failNext((r) => r.path === '/notifications', 'lose-answer');  // forwarded, then the answer is lost
 *   proxy.requests                                               // every request that reached the proxy
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  /** Below /api/v1, with the query. */
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly authorization: string | undefined;
}

/** An answer the proxy makes up, `reset` (the connection dies unanswered), or `lose-answer` (it dies after the service answered). */
export type Fault =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: unknown }
  | 'reset'
  | 'lose-answer';

export interface FaultProxy {
  readonly url: string;
  readonly requests: SeenRequest[];
  failNext(match: (request: SeenRequest) => boolean, fault: Fault): void;
  stop(): Promise<void>;
}

const FORWARDED_REQUEST_HEADERS = ['authorization', 'content-type', 'idempotency-key'];
const FORWARDED_ANSWER_HEADERS = ['content-type', 'x-request-id', 'retry-after', 'www-authenticate'];

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export const startFaultProxy = async (upstreamApiUrl: string): Promise<FaultProxy> => {
  const upstream = new URL(upstreamApiUrl);
  const requests: SeenRequest[] = [];
  const faults: { match: (request: SeenRequest) => boolean; fault: Fault }[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const path = (request.url ?? '/').slice(upstream.pathname.length);
    const seen: SeenRequest = {
      method: request.method ?? 'GET',
      path,
      idempotencyKey: request.headers['idempotency-key'] as string | undefined,
      authorization: request.headers.authorization,
    };
    requests.push(seen);
    const index = faults.findIndex((entry) => entry.match(seen));
    const fault = index >= 0 ? faults.splice(index, 1)[0]?.fault : undefined;
    if (fault === 'reset') {
      request.socket.destroy();
      return;
    }
    if (fault && typeof fault === 'object') {
      response.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      response.end(fault.body === undefined ? '' : JSON.stringify(fault.body));
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const answer = await fetch(`${upstreamApiUrl}${path}`, {
      method: seen.method,
      headers,
      ...(body.length ? { body } : {}),
    });
    const text = await answer.text();
    if (fault === 'lose-answer') {
      request.socket.destroy();
      return;
    }
    const answerHeaders: Record<string, string> = {};
    for (const name of FORWARDED_ANSWER_HEADERS) {
      const value = answer.headers.get(name);
      if (value !== null) answerHeaders[name] = value;
    }
    response.writeHead(answer.status, answerHeaders);
    response.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    requests,
    failNext: (match, fault) => faults.push({ match, fault }),
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
