/**
 * A validating proxy in front of the service, as a client's test set-up puts one (Prism's proxy mode): every
 * request is checked against docs/api/openapi.json before it is forwarded, every response after, and each
 * violation is recorded (the traffic itself passes unchanged).
 *
 *   const proxy = await startValidatingProxy(runtime.httpUrl);   // …/api/v1 of the service
 *   await fetch(`${proxy.url}/live`);
 *   expect(proxy.violations).toEqual([]);
 *   await proxy.stop();
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openApiProblems, openApiRequestProblems, templateOf } from './api-conformance';

export interface ValidatingProxy {
  /** The proxy's base URL, standing for the service's (`…/api/v1`). */
  readonly url: string;
  /** Every request and response that broke the document, in order. */
  readonly violations: string[];
  /** The operations called so far, as `METHOD /template` (`POST /notifications/{receiver_id}/read`). */
  readonly operations: Set<string>;
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

export const startValidatingProxy = async (serviceUrl: string): Promise<ValidatingProxy> => {
  const service = new URL(serviceUrl);
  const basePath = service.pathname.replace(/\/$/, '');
  const violations: string[] = [];
  const operations = new Set<string>();
  const server = createServer(async (incoming, outgoing) => {
    try {
      const text = await readBody(incoming);
      const headers = new Headers();
      for (const [name, value] of Object.entries(incoming.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name))
          headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const method = incoming.method ?? 'GET';
      const target = incoming.url ?? '/';
      const path = target.startsWith(basePath) ? target.slice(basePath.length) : target;
      violations.push(...openApiRequestProblems({ method, path, headers, text }));
      operations.add(`${method} ${templateOf(path.split('?')[0] ?? '') ?? path}`);
      const response = await fetch(`${service.origin}${target}`, {
        method,
        headers,
        ...(text === '' ? {} : { body: text }),
      });
      const answer = await response.text();
      violations.push(
        ...openApiProblems({
          method,
          path,
          status: response.status,
          headers: response.headers,
          text: answer,
        }),
      );
      const answerHeaders: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name) && name !== 'content-encoding') answerHeaders[name] = value;
      });
      outgoing.writeHead(response.status, answerHeaders).end(answer);
    } catch (error) {
      violations.push(`proxy: ${(error as Error).message}`);
      outgoing.writeHead(502).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    violations,
    operations,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
