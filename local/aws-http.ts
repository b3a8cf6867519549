import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * HTTP plumbing shared by the stand-ins (SQS, EventBridge, Scheduler, Lambda; IAM's refusals): a loopback server on a free port,
 * body reading with a size cap, and AWS-shaped error responses. Errors never carry a stack.
 */

/** An error the stand-in answers with, shaped as the AWS service would send it. */
export class AwsServiceError extends Error {
  constructor(
    /** Short error code, e.g. `InvalidParameterValue`; what the SDK exposes as `error.name`. */
    readonly code: string,
    message: string,
    readonly status = 400,
    /** Extra response headers the service sends with this error. */
    readonly extraHeaders: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = code;
  }
}

export interface HttpRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** Bytes of the body as received. */
  readonly bodyBytes: number;
}

export interface HttpReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type RequestHandler = (request: HttpRequest) => Promise<HttpReply>;

/** Far above every AWS request limit the stand-ins enforce, so the limit checks answer, not the socket. */
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        reject(new AwsServiceError('RequestEntityTooLarge', 'Request body too large', 413));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

export interface LoopbackServer {
  readonly endpoint: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 and a free port. `toErrorReply` turns a thrown error into the service's
 * error shape; unexpected errors become a 500 with a generic message (logged here, never sent with a stack).
 */
export const startLoopbackServer = async (
  name: string,
  handle: RequestHandler,
  toErrorReply: (error: AwsServiceError) => HttpReply,
): Promise<LoopbackServer> => {
  const respond = (res: ServerResponse, reply: HttpReply): void => {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(reply.status, {
      'x-amzn-requestid': randomUUID(),
      'content-length': Buffer.byteLength(reply.body),
      ...reply.headers,
    });
    res.end(reply.body);
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        const raw = await readBody(req);
        const reply = await handle({
          method: req.method ?? 'GET',
          url: new URL(req.url ?? '/', 'http://127.0.0.1'),
          headers: req.headers,
          body: raw.toString('utf8'),
          bodyBytes: raw.length,
        });
        respond(res, reply);
      } catch (error) {
        if (error instanceof AwsServiceError) {
          respond(res, toErrorReply(error));
        } else {
          console.error(`[${name}] internal error`, error);
          respond(res, toErrorReply(new AwsServiceError('InternalFailure', `${name} internal error`, 500)));
        }
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

/** The operation an AWS JSON protocol request names (`X-Amz-Target: <Service>.<Operation>`). */
export const jsonTarget = (request: HttpRequest, servicePrefix: string): string | undefined => {
  const target = request.headers['x-amz-target'];
  const value = Array.isArray(target) ? target[0] : target;
  if (!value?.startsWith(`${servicePrefix}.`)) return undefined;
  return value.slice(servicePrefix.length + 1);
};

export const parseJsonObject = (body: string, code = 'SerializationException'): Record<string, unknown> => {
  let parsed: unknown;
  try {
    parsed = body.trim() === '' ? {} : JSON.parse(body);
  } catch {
    throw new AwsServiceError(code, 'The request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AwsServiceError(code, 'The request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
};

/** The access key id of a SigV4-signed request (what SQS reports as SenderId for an IAM user). */
export const accessKeyIdOf = (request: HttpRequest): string | undefined => {
  const authorization = request.headers.authorization;
  const match = typeof authorization === 'string' ? /Credential=([^/]+)\//.exec(authorization) : null;
  return match?.[1];
};

export const jsonReply = (status: number, contentType: string, body: unknown): HttpReply => ({
  status,
  headers: { 'content-type': contentType },
  body: JSON.stringify(body),
});
