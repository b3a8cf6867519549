/**
 * The demo inbox of the local runtime (docs/demo.md): the page at /demo/, its script bundled from
 * local/demo/app.ts (built on the client SDK) by esbuild on first request, and two local-only endpoints that
 * use the development HS256 key server-side — a user token for the page, and "send a test notification" with
 * a service token the page never sees. Nothing here exists in the CDK stack.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { CorsPolicy } from '../../lib/wiring';
import { answerPreflight, applyCors, isPreflight, sendError } from '../gateway/http';
import { apiGatewayId } from '../gateway/ids';
import { markDeviceDead, PushesRefused, pushesOfUser } from '../push/received';
import type { PushStandIn } from '../push/stand-in';

export const DEMO_PATH = '/demo/';
/** Local-only endpoints of the demo, under DEMO_PATH. */
export const DEMO_TOKEN_PATH = `${DEMO_PATH}api/token`;
export const DEMO_NOTIFY_PATH = `${DEMO_PATH}api/notifications`;
/** What the caller's devices would have received (GET), and marking one dead (POST {"token"}): docs/push.md. */
export const DEMO_PUSHES_PATH = `${DEMO_PATH}api/pushes`;
export const DEMO_PUSH_DEAD_PATH = `${DEMO_PATH}api/pushes/dead`;

/** Longest user token the demo hands out (a day, as `npm start` prints). */
export const DEMO_MAX_TOKEN_SECS = 24 * 3600;
const DEMO_DEFAULT_TOKEN_SECS = 3600;
/** Lifetime of the service token behind "send a test notification": one call. */
const DEMO_SERVICE_TOKEN_SECS = 60;
const MAX_DEMO_BODY_BYTES = 16 * 1024;
const USER_ID = /^[\w.@:-]{1,128}$/;

const SOURCE_DIR = import.meta.dirname;
/** The API reference rendered by `npm run api-docs`, served next to the demo. */
export const API_REFERENCE_PATH = `${DEMO_PATH}api-reference.html`;
const API_REFERENCE_FILE = join(SOURCE_DIR, '..', '..', 'docs', 'api', 'index.html');

export interface DemoMinting {
  mintUserToken(sub: string, options: { expiresInSecs: number }): Promise<string>;
  mintServiceToken(
    name: string,
    scopes: readonly string[],
    options: { expiresInSecs: number },
  ): Promise<string>;
}

export interface DemoOptions {
  /** The runtime's own REST base (`http://127.0.0.1:PORT/api/v1`). */
  readonly httpUrl: string;
  /** The REST API's CORS policy, applied to the demo endpoints too (the page may come from another origin). */
  readonly cors?: CorsPolicy;
  /**
   * Signing with the development secret the runtime generated. Undefined with any SERVICE__AUTH__* setting (a
   * secret of one's own or an IdP's key set): the endpoints then answer 404 and the page asks for a token.
   */
  readonly minting: DemoMinting | undefined;
  /** The push providers' stand-ins of the runtime. */
  readonly pushStandIns?: readonly PushStandIn[];
}

const json = (
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(text);
};

class BadRequest extends Error {}

/** 405 with the methods the path takes, in the contract's format. */
const methodNotAllowed = (request: IncomingMessage, response: ServerResponse, allow: string) => {
  request.resume();
  sendError(
    request,
    response,
    405,
    'method_not_allowed',
    `${request.method} is not allowed on this path`,
    apiGatewayId(),
    {
      allow,
    },
  );
};

const readJsonObject = async (request: IncomingMessage): Promise<Record<string, unknown>> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_DEMO_BODY_BYTES) throw new BadRequest(`The body exceeds ${MAX_DEMO_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    throw new BadRequest('The body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BadRequest('The body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
};

const userIdOf = (body: Record<string, unknown>): string => {
  const userId = body.user_id;
  if (typeof userId !== 'string' || !USER_ID.test(userId)) {
    throw new BadRequest('user_id: expected 1 to 128 letters, digits or . @ : _ -');
  }
  return userId;
};

/** The page's script: local/demo/app.ts and the SDK it imports, bundled for browsers once per process. */
const bundleApp = async (): Promise<string> => {
  const result = await build({
    entryPoints: [join(SOURCE_DIR, 'app.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    sourcemap: 'inline',
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
};

export const createDemo = (options: DemoOptions) => {
  let appScript: Promise<string> | undefined;
  const script = () => {
    // A failed build (a syntax error while editing) is retried by the next request.
    appScript ??= bundleApp().catch((error: unknown) => {
      appScript = undefined;
      throw error;
    });
    return appScript;
  };

  const mintToken = async (body: Record<string, unknown>, minting: DemoMinting) => {
    const userId = userIdOf(body);
    const requested = body.expires_in_secs ?? DEMO_DEFAULT_TOKEN_SECS;
    if (
      !Number.isInteger(requested) ||
      (requested as number) < 1 ||
      (requested as number) > DEMO_MAX_TOKEN_SECS
    ) {
      throw new BadRequest(`expires_in_secs: expected a whole number from 1 to ${DEMO_MAX_TOKEN_SECS}`);
    }
    const expiresInSecs = requested as number;
    const token = await minting.mintUserToken(userId, { expiresInSecs });
    return { token, user_id: userId, expires_at: new Date(Date.now() + expiresInSecs * 1000).toISOString() };
  };

  /** Creates the notification through the service's own REST API, as a backend would. */
  const sendTestNotification = async (
    request: IncomingMessage,
    response: ServerResponse,
    body: Record<string, unknown>,
    minting: DemoMinting,
  ) => {
    const userId = userIdOf(body);
    const serviceToken = await minting.mintServiceToken('demo', ['notifications:write'], {
      expiresInSecs: DEMO_SERVICE_TOKEN_SECS,
    });
    const idempotencyKey = request.headers['idempotency-key'];
    const upstream = await fetch(`${options.httpUrl}/notifications`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${serviceToken}`,
        'content-type': 'application/json',
        ...(typeof idempotencyKey === 'string' ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: JSON.stringify({
        event_type: 'demo.test',
        title: body.title ?? 'Test notification',
        ...(body.body === undefined ? {} : { body: body.body }),
        ...(body.data === undefined ? {} : { data: body.data }),
        channels: body.channels ?? ['in_app', 'toast'],
        recipient_ids: [userId],
      }),
    });
    // The service's answer as it is: 202 with the id, or its validation error in the contract's format.
    json(response, upstream.status, await upstream.json(), {
      'x-request-id': upstream.headers.get('x-request-id') ?? '',
    });
  };

  /** The pushes endpoints: the caller's bearer token decides whose devices (the service checks it). */
  const handlePushes = async (request: IncomingMessage, response: ServerResponse, path: string) => {
    const requestId = apiGatewayId();
    const refuse = (status: number, code: string, message: string) =>
      sendError(request, response, status, code, message, requestId);
    const method = path === DEMO_PUSHES_PATH ? 'GET' : 'POST';
    if (request.method !== method) return methodNotAllowed(request, response, method);
    const authorization = request.headers.authorization;
    if (!authorization) {
      request.resume();
      return refuse(401, 'unauthorized', 'A user token is required (Authorization: Bearer …)');
    }
    const standIns = options.pushStandIns ?? [];
    try {
      if (method === 'GET') {
        request.resume();
        return json(response, 200, await pushesOfUser(options.httpUrl, authorization, standIns));
      }
      const body = await readJsonObject(request);
      if (typeof body.token !== 'string' || body.token === '')
        throw new BadRequest('token: expected a device token');
      await markDeviceDead(options.httpUrl, authorization, standIns, body.token);
      response.writeHead(204, { 'cache-control': 'no-store' });
      return response.end();
    } catch (error) {
      if (error instanceof BadRequest) return refuse(400, 'validation', error.message);
      if (error instanceof PushesRefused) return refuse(error.status, error.code, error.message);
      process.stderr.write(`demo: ${path} failed (request ${requestId}): ${(error as Error).message}\n`);
      return refuse(500, 'internal', 'Internal error');
    }
  };

  const handleApi = async (request: IncomingMessage, response: ServerResponse, path: string) => {
    if (path === DEMO_PUSHES_PATH || path === DEMO_PUSH_DEAD_PATH)
      return handlePushes(request, response, path);
    const requestId = apiGatewayId();
    const refuse = (status: number, code: string, message: string) =>
      sendError(request, response, status, code, message, requestId);
    if (path !== DEMO_TOKEN_PATH && path !== DEMO_NOTIFY_PATH) return refuse(404, 'not_found', 'Not found');
    if (request.method !== 'POST') return methodNotAllowed(request, response, 'POST');
    if (!options.minting) {
      request.resume();
      return refuse(
        404,
        'not_found',
        'The demo endpoints mint tokens only with the development secret npm start generates (no SERVICE__AUTH__* settings): paste a token into the page instead, from your IdP or from npm run token',
      );
    }
    try {
      const body = await readJsonObject(request);
      if (path === DEMO_TOKEN_PATH) return json(response, 200, await mintToken(body, options.minting));
      return await sendTestNotification(request, response, body, options.minting);
    } catch (error) {
      if (error instanceof BadRequest) return refuse(400, 'validation', error.message);
      process.stderr.write(`demo: ${path} failed (request ${requestId}): ${(error as Error).message}\n`);
      return refuse(500, 'internal', 'Internal error');
    }
  };

  const serveStatic = async (request: IncomingMessage, response: ServerResponse, path: string) => {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return methodNotAllowed(request, response, 'GET, HEAD');
    request.resume();
    const send = (type: string, text: string) => {
      response.writeHead(200, {
        'content-type': `${type}; charset=utf-8`,
        'content-length': Buffer.byteLength(text),
        'cache-control': 'no-cache',
      });
      response.end(request.method === 'HEAD' ? undefined : text);
    };
    if (path === DEMO_PATH || path === `${DEMO_PATH}index.html`) {
      return send('text/html', await readFile(join(SOURCE_DIR, 'index.html'), 'utf8'));
    }
    if (path === API_REFERENCE_PATH) return send('text/html', await readFile(API_REFERENCE_FILE, 'utf8'));
    if (path === `${DEMO_PATH}app.js`) {
      try {
        return send('text/javascript', await script());
      } catch (error) {
        const requestId = apiGatewayId();
        process.stderr.write(
          `demo: bundling local/demo/app.ts failed (request ${requestId}): ${(error as Error).message}\n`,
        );
        return sendError(request, response, 500, 'internal', 'The demo script could not be built', requestId);
      }
    }
    return sendError(request, response, 404, 'not_found', 'Not found', apiGatewayId());
  };

  return {
    /** Serves paths under /demo/; returns false for any other path. Never rejects. */
    handle(request: IncomingMessage, response: ServerResponse): boolean {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      if (path === '/demo') {
        request.resume();
        response.writeHead(301, { location: DEMO_PATH, 'content-length': 0 });
        response.end();
        return true;
      }
      if (!path.startsWith(DEMO_PATH)) return false;
      const isApi = path.startsWith(`${DEMO_PATH}api/`);
      if (isApi && options.cors) {
        applyCors(options.cors, request, response);
        if (isPreflight(request)) {
          answerPreflight(request, response);
          return true;
        }
      }
      const served = isApi ? handleApi(request, response, path) : serveStatic(request, response, path);
      served.catch(() => {
        if (!response.headersSent)
          sendError(request, response, 500, 'internal', 'Internal error', apiGatewayId());
        else response.destroy();
      });
      return true;
    },
  };
};

export type Demo = ReturnType<typeof createDemo>;
