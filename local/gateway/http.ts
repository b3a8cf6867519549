import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { v7 as uuidv7 } from 'uuid';
import {
  ANY_ORIGIN,
  allowedOriginFor,
  CORS_ALLOWED_HEADERS,
  CORS_ALLOWED_METHODS,
  CORS_EXPOSED_HEADERS,
  CORS_MAX_AGE_SECS,
  type CorsPolicy,
  DEFAULT_ROUTE_PATH,
  type HttpRoute,
  isCorsPreflight,
} from '../../lib/wiring';
import { LOCAL_ACCOUNT_ID } from '../aws-account';
import type { InvokeFunction } from '../lambda/types';
import { apiGatewayId, apiGatewayTime, sourceIpOf } from './ids';

/** Where the REST API is mounted: route paths in the declaration are relative to it. */
export const API_BASE_PATH = '/api/v1';

/** API Gateway HTTP API request payload limit. Our own 256 KiB limit is the handlers' job. */
export const MAX_HTTP_PAYLOAD_BYTES = 10 * 1024 * 1024;

const SANE_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** Content types API Gateway passes as text; any other body arrives base64-encoded. */
const isTextContentType = (contentType: string | undefined): boolean => {
  if (!contentType) return false;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/javascript'
  );
};

interface CompiledRoute {
  readonly route: HttpRoute;
  readonly routeKey: string;
  /** Literal segments, or `{name}` parameters. */
  readonly segments: readonly ({ literal: string } | { param: string })[];
}

const compile = (route: HttpRoute): CompiledRoute => {
  const fullPath = `${API_BASE_PATH}${route.path}`;
  return {
    route,
    routeKey: `${route.method} ${fullPath}`,
    segments: fullPath
      .split('/')
      .filter(Boolean)
      .map((segment) => {
        const param = /^\{(\w+)\}$/.exec(segment)?.[1];
        return param ? { param } : { literal: segment };
      }),
  };
};

interface PathMatch {
  readonly compiled: CompiledRoute;
  readonly pathParameters: Record<string, string>;
  /** Number of literal segments: API Gateway prefers the most specific route. */
  readonly score: number;
}

const matchPath = (compiled: CompiledRoute, segments: readonly string[]): PathMatch | undefined => {
  if (compiled.segments.length !== segments.length) return undefined;
  const pathParameters: Record<string, string> = {};
  let score = 0;
  for (const [index, expected] of compiled.segments.entries()) {
    const actual = segments[index] ?? '';
    if ('literal' in expected) {
      if (expected.literal !== actual) return undefined;
      score += 1;
    } else {
      if (actual === '') return undefined;
      pathParameters[expected.param] = safeDecode(actual);
    }
  }
  return { compiled, pathParameters, score };
};

const safeDecode = (text: string): string => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

const decodeQueryPart = (text: string): string => safeDecode(text.replaceAll('+', ' '));

/**
 * Headers as API Gateway passes them: lower-cased names, repeated headers joined by commas, cookies apart. The
 * names come from the client: gathered in a Map, so `__proto__` or `constructor` is a name like any other.
 */
const collectHeaders = (request: IncomingMessage) => {
  const joined = new Map<string, string>();
  const cookies: string[] = [];
  const raw = request.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = (raw[index] ?? '').toLowerCase();
    const value = raw[index + 1] ?? '';
    if (name === 'cookie') {
      for (const cookie of value.split(';')) if (cookie.trim()) cookies.push(cookie.trim());
      continue;
    }
    const earlier = joined.get(name);
    joined.set(name, earlier === undefined ? value : `${earlier},${value}`);
  }
  return { headers: Object.fromEntries(joined), cookies };
};

/** Repeated keys joined by commas, as payload format 2.0 does. */
const collectQuery = (rawQueryString: string): Record<string, string> | undefined => {
  if (!rawQueryString) return undefined;
  const query = new Map<string, string>();
  for (const pair of rawQueryString.split('&')) {
    if (!pair) continue;
    const equals = pair.indexOf('=');
    const key = decodeQueryPart(equals === -1 ? pair : pair.slice(0, equals));
    const value = equals === -1 ? '' : decodeQueryPart(pair.slice(equals + 1));
    const earlier = query.get(key);
    query.set(key, earlier === undefined ? value : `${earlier},${value}`);
  }
  return query.size ? Object.fromEntries(query) : undefined;
};

class PayloadTooLarge extends Error {}

const readBody = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > MAX_HTTP_PAYLOAD_BYTES) {
      reject(new PayloadTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_HTTP_PAYLOAD_BYTES) {
        reject(new PayloadTooLarge());
        request.removeAllListeners('data');
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

export interface HttpGatewayOptions {
  readonly routes: readonly HttpRoute[];
  readonly invoke: InvokeFunction;
  /** `requestContext.apiId`. */
  readonly apiId?: string;
  readonly accountId?: string;
  /** The API's CORS configuration; without it preflights are routed like any request (405), as on AWS. */
  readonly cors?: CorsPolicy;
}

export const isPreflight = (request: IncomingMessage): boolean =>
  isCorsPreflight(request.method, request.headers);

/**
 * The headers API Gateway adds with a CORS configuration, for an allowed origin only: Allow-Origin (and Vary
 * when it names the origin) on every response; on a preflight, the allowed methods, headers and max age;
 * otherwise the exposed headers. Set before routing, so the gateway's own answers carry them too.
 */
export const applyCors = (cors: CorsPolicy, request: IncomingMessage, response: ServerResponse): void => {
  const allowOrigin = allowedOriginFor(cors, request.headers.origin);
  if (!allowOrigin) return;
  response.setHeader('access-control-allow-origin', allowOrigin);
  // A cache in between must not hand one origin's answer to another.
  if (allowOrigin !== ANY_ORIGIN) response.setHeader('vary', 'origin');
  if (isPreflight(request)) {
    response.setHeader('access-control-allow-methods', CORS_ALLOWED_METHODS.join(','));
    response.setHeader('access-control-allow-headers', CORS_ALLOWED_HEADERS.join(','));
    response.setHeader('access-control-max-age', String(CORS_MAX_AGE_SECS));
  } else {
    response.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS.join(','));
  }
};

/** API Gateway's own answer to a preflight that no route takes: 204, the CORS headers already set. */
export const answerPreflight = (request: IncomingMessage, response: ServerResponse): void => {
  request.resume();
  response.writeHead(204, { 'apigw-requestid': apiGatewayId() });
  response.end();
};

const withoutCorsHeaders = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith('access-control-')));

/** A response the gateway itself produces, in the contract's error format (docs/local-runtime.md). */
export const sendError = (
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  code: string,
  message: string,
  gatewayRequestId: string,
  extraHeaders: Record<string, string> = {},
) => {
  const incoming = request.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : uuidv7();
  const body = JSON.stringify({ code, message, request_id: requestId });
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    'apigw-requestid': gatewayRequestId,
    ...extraHeaders,
  });
  response.end(body);
};

/**
 * API Gateway HTTP API stand-in: turns requests under /api/v1 into payload format 2.0 events for the declared
 * route's function and its result into the response, following AWS's rules for both directions.
 */
export const createHttpGateway = (options: HttpGatewayOptions) => {
  // The declared catch-all (`ANY $default`) gets what no route matches, as on AWS; it has no path of its own.
  const catchAll = options.routes.find((route) => route.path === DEFAULT_ROUTE_PATH);
  const compiled = options.routes.filter((route) => route !== catchAll).map(compile);
  const apiId = options.apiId ?? 'local';
  const accountId = options.accountId ?? LOCAL_ACCOUNT_ID;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    // A preflight goes where any OPTIONS request goes: no declared route takes OPTIONS, so to the catch-all when
    // there is one (as on AWS, where `$default` catches it), else API Gateway answers it.
    if (options.cors) {
      applyCors(options.cors, request, response);
      if (isPreflight(request) && !catchAll) return answerPreflight(request, response);
    }
    const started = Date.now();
    const gatewayRequestId = apiGatewayId();
    const rawUrl = request.url ?? '/';
    const queryStart = rawUrl.indexOf('?');
    const rawPath = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
    const rawQueryString = queryStart === -1 ? '' : rawUrl.slice(queryStart + 1);
    const method = (request.method ?? 'GET').toUpperCase();

    const segments = rawPath.split('/').filter(Boolean);
    const pathMatches = compiled
      .map((candidate) => matchPath(candidate, segments))
      .filter((match): match is PathMatch => match !== undefined);
    const best: Pick<PathMatch, 'compiled' | 'pathParameters'> | undefined =
      pathMatches
        .filter((match) => match.compiled.route.method === method)
        .sort((a, b) => b.score - a.score)[0] ??
      (catchAll
        ? { compiled: { route: catchAll, routeKey: DEFAULT_ROUTE_PATH, segments: [] }, pathParameters: {} }
        : undefined);
    if (!best) {
      request.resume();
      if (pathMatches.length) {
        const allowed = [...new Set(pathMatches.map((match) => match.compiled.route.method))].join(', ');
        sendError(
          request,
          response,
          405,
          'method_not_allowed',
          `${method} is not allowed on this path`,
          gatewayRequestId,
          { allow: allowed },
        );
      } else {
        sendError(request, response, 404, 'not_found', 'Not found', gatewayRequestId);
      }
      return;
    }

    let body: Buffer;
    try {
      body = await readBody(request);
    } catch (error) {
      if (error instanceof PayloadTooLarge) {
        sendError(
          request,
          response,
          413,
          'payload_too_large',
          'Request body exceeds the 10 MB API Gateway limit',
          gatewayRequestId,
          { connection: 'close' },
        );
        return;
      }
      throw error;
    }

    const { headers, cookies } = collectHeaders(request);
    const hasBody = body.length > 0;
    // A "text" body that is not UTF-8 goes as bytes (base64), so the handler can refuse it rather than read
    // replacement characters (AWS does not document this case; docs/local-runtime.md).
    const asText = isTextContentType(headers['content-type']) && isUtf8(body);
    const host = headers.host ?? '127.0.0.1';
    const queryStringParameters = collectQuery(rawQueryString);
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey: best.compiled.routeKey,
      rawPath,
      rawQueryString,
      ...(cookies.length ? { cookies } : {}),
      headers,
      ...(queryStringParameters ? { queryStringParameters } : {}),
      requestContext: {
        accountId,
        apiId,
        domainName: host,
        domainPrefix: host.split('.')[0] ?? host,
        http: {
          method,
          path: safeDecode(rawPath),
          protocol: `HTTP/${request.httpVersion}`,
          sourceIp: sourceIpOf(request.socket.remoteAddress),
          userAgent: headers['user-agent'] ?? '',
        },
        requestId: gatewayRequestId,
        routeKey: best.compiled.routeKey,
        stage: '$default',
        time: apiGatewayTime(started),
        timeEpoch: started,
      },
      ...(Object.keys(best.pathParameters).length ? { pathParameters: best.pathParameters } : {}),
      ...(hasBody ? { body: asText ? body.toString('utf8') : body.toString('base64') } : {}),
      isBase64Encoded: hasBody && !asText,
    };

    let result: unknown;
    try {
      result = await options.invoke({ ...best.compiled.route, id: best.compiled.route.id }, event);
    } catch {
      // AWS answers {"message":"Internal Server Error"}; clients of this service expect the contract's body.
      sendError(request, response, 500, 'internal', 'Internal error', gatewayRequestId);
      return;
    }
    const mapped = mapResult(result);
    if (!mapped) {
      sendError(request, response, 500, 'internal', 'Internal error', gatewayRequestId);
      return;
    }
    const outgoing: Record<string, string | string[]> = {
      ...(options.cors ? withoutCorsHeaders(mapped.headers) : mapped.headers),
      'apigw-requestid': gatewayRequestId,
    };
    if (mapped.cookies.length) outgoing['set-cookie'] = mapped.cookies;
    outgoing['content-length'] = String(mapped.body.length);
    response.writeHead(mapped.statusCode, outgoing);
    response.end(mapped.body);
  };

  return {
    /** Serves one request under API_BASE_PATH; never rejects. */
    handle: (request: IncomingMessage, response: ServerResponse): Promise<void> =>
      handle(request, response).catch(() => {
        if (!response.headersSent)
          sendError(request, response, 500, 'internal', 'Internal error', apiGatewayId());
        else response.destroy();
      }),
  };
};

interface MappedResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly cookies: string[];
  readonly body: Buffer;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Payload format 2.0 response rules: a result with `statusCode` is taken as the response; any other JSON
 * result becomes a 200 with that JSON as body (a string as is). A malformed response is a 500, as on AWS.
 * `multiValueHeaders` belongs to format 1.0 and is ignored, as AWS does with 2.0.
 */
export const mapResult = (result: unknown): MappedResponse | undefined => {
  if (!isRecord(result) || !('statusCode' in result)) {
    const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      cookies: [],
      body: Buffer.from(text, 'utf8'),
    };
  }
  const { statusCode, headers, cookies, body, isBase64Encoded } = result;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    return undefined;
  }
  if (body !== undefined && body !== null && typeof body !== 'string') return undefined;
  const mappedHeaders: Record<string, string> = {};
  if (headers !== undefined && headers !== null) {
    if (!isRecord(headers)) return undefined;
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
        return undefined;
      mappedHeaders[name.toLowerCase()] = String(value);
    }
  }
  const mappedCookies: string[] = [];
  if (cookies !== undefined && cookies !== null) {
    if (!Array.isArray(cookies) || !cookies.every((cookie) => typeof cookie === 'string')) return undefined;
    mappedCookies.push(...(cookies as string[]));
  }
  const text = typeof body === 'string' ? body : '';
  return {
    statusCode,
    headers: mappedHeaders,
    cookies: mappedCookies,
    body: isBase64Encoded === true ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8'),
  };
};
