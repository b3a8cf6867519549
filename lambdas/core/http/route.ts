import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as core from 'zod/v4/core';
import { ORIGIN_VERIFY_HEADER } from '../../../common/env';
import * as envNames from '../../../common/env-names';
import { errorBody } from '../../../common/error-body';
import type { HttpRoute } from '../../../lib/wiring/types';
import { bearerToken, tokenVerifier } from '../auth';
import {
  isServerError,
  notFound,
  ServiceError,
  toServiceError,
  unauthorized,
  validationError,
} from '../errors';
import { MAX_PATH_PARAMETER_BYTES, utf8Bytes } from '../identifiers';
import { newId } from '../ids';
import { beginInvocationLog, logger } from '../logger';
import { flushMetrics } from '../metrics';
import type { Principal } from '../principal';
import { refusedJson } from '../refused-json';
import { fieldPath, parseOrThrow, type Schema } from '../validation';
import { authorize } from './access';
import { originCheck } from './origin-check';

/** Contract §3: request bodies over 256 KiB → 413. */
export const MAX_BODY_BYTES = 256 * 1024;
const SANE_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** What a route handler sees: parsed, validated and authorized input, no Lambda types. */
export interface ApiRequest<TBody, TQuery> {
  readonly requestId: string;
  /** Set on every non-public route. */
  readonly principal: Principal;
  readonly body: TBody;
  readonly query: TQuery;
  readonly pathParameters: Readonly<Record<string, string>>;
  /** Lower-cased request headers. */
  readonly headers: Readonly<Record<string, string | undefined>>;
}

export interface ApiResponse {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** A body that is not JSON (e.g. Prometheus text); sent as is. */
  readonly text?: string;
}

export interface RouteSchemas<B extends Schema | undefined, Q extends Schema | undefined> {
  readonly body?: B;
  readonly query?: Q;
}

type Output<S> = S extends Schema ? core.output<S> : undefined;

/** Per-invocation state the middlewares share (middy's request.context is the Lambda context). */
interface RouteContext extends Context {
  requestId: string;
  startedAt: number;
  principal?: Principal;
  parsedBody?: unknown;
}

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

const header = (event: Event, name: string): string | undefined => event.headers?.[name];

/** X-Request-Id echoed when sane, else a new UUID v7; logger keys for the request; an access log line. */
/** What a route's plumbing needs of its declaration. */
type DeclaredRoute = Pick<HttpRoute, 'id' | 'access'>;

/**
 * The route's id and access rule as the declaration gave them to this function (NOTIFY_ROUTE_ACCESS, set by
 * lib/wiring/function-env.ts on AWS and locally), read on the first request. Not the declaration itself: that
 * would put every area's wiring in every HTTP bundle (13.5 KiB). Missing or naming another route: every request
 * fails with a 500 (logged), never an open door.
 */
const routeFromEnvironment = (id: string): (() => DeclaredRoute) => {
  let route: DeclaredRoute | undefined;
  return () => {
    if (route) return route;
    const raw = process.env[envNames.routeAccess];
    if (!raw)
      throw new Error(`${envNames.routeAccess} is not set: route ${id} is not wired to this function`);
    const declared = JSON.parse(raw) as DeclaredRoute;
    if (declared.id !== id || typeof declared.access !== 'object' || declared.access === null) {
      throw new Error(`${envNames.routeAccess} declares route ${String(declared.id)}, not ${id}`);
    }
    route = declared;
    return route;
  };
};

const requestScope = (routeOf: () => DeclaredRoute): MiddlewareObj<Event, Result, Error, RouteContext> => ({
  before: ({ event, context }) => {
    const incoming = header(event, 'x-request-id');
    context.requestId = incoming && SANE_REQUEST_ID.test(incoming) ? incoming : newId();
    context.startedAt = performance.now();
    // Lambda reuses nothing of a context between invocations, but a test or a local runner may.
    context.principal = undefined;
    context.parsedBody = undefined;
    beginInvocationLog(context, { request_id: context.requestId, route: routeOf().id });
  },
  after: ({ context, response }) => {
    if (response) response.headers = { ...response.headers, 'X-Request-Id': context.requestId };
    accessLog(context, response?.statusCode ?? 200);
    flushMetrics();
  },
});

/** One line per request; once authenticated, the principal is among the request's log keys. */
const accessLog = (context: RouteContext, status: number) => {
  logger.info('request', {
    status,
    latency_ms: Math.round((performance.now() - (context.startedAt ?? performance.now())) * 100) / 100,
  });
};

/** Every failure becomes contract §3's error body; unexpected ones are logged, never returned. */
const errorResponses = (): MiddlewareObj<Event, Result, Error, RouteContext> => ({
  onError: (request) => {
    const { context } = request;
    const requestId = context.requestId ?? newId();
    const error = toServiceError(request.error);
    if (isServerError(error)) logger.error('request failed', { error: request.error as Error });
    request.response = {
      statusCode: error.status,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': requestId, ...error.headers },
      body: JSON.stringify(errorBody(error, requestId)),
    };
    accessLog(context, error.status);
    flushMetrics();
  },
});

/** Behind CloudFront + WAF: only requests CloudFront forwarded, before any token work (origin-check.ts). */
const cloudFrontOrigin = (): MiddlewareObj<Event, Result, Error, RouteContext> => ({
  before: async ({ event }) => {
    await originCheck()?.assert(header(event, ORIGIN_VERIFY_HEADER));
  },
});

const authentication = (routeOf: () => DeclaredRoute): MiddlewareObj<Event, Result, Error, RouteContext> => ({
  before: async ({ event, context }) => {
    const route = routeOf();
    if ('public' in route.access) return;
    const token = bearerToken(header(event, 'authorization'));
    if (!token) throw unauthorized('Missing or malformed Authorization: Bearer token');
    const principal = await tokenVerifier().verify(token);
    context.principal = principal;
    logger.appendKeys({ principal: `${principal.kind}:${principal.id}` });
    authorize(route.access, principal);
  },
});

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET_PARAMETER = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

const pathParameterBounds = (): MiddlewareObj<Event, Result, Error, RouteContext> => ({
  before: ({ event }) => {
    for (const value of Object.values(event.pathParameters ?? {})) {
      if (value !== undefined && utf8Bytes(value) > MAX_PATH_PARAMETER_BYTES) throw notFound();
    }
  },
});

/** What a route without a body accepts as one: nothing, or an empty object (some clients always send one). */
const NO_BODY = /^\s*(\{\s*\})?\s*$/;

/**
 * A route that takes no body refuses one, but for an empty object: a caller that sends `{"before": …}` to
 * read-all expects a filter that does not exist, and every item would be read. GET and HEAD ignore a body, as
 * HTTP gives it no meaning there.
 */
const refuseUnexpectedBody = (event: Event): void => {
  if (event.body === undefined || event.body === null || event.body === '') return;
  const method = event.requestContext.http.method;
  if (method === 'GET' || method === 'HEAD') return;
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (NO_BODY.test(text)) return;
  throw validationError('This request takes no body', [
    { field: '(body)', issue: 'this request takes no body' },
  ]);
};

/**
 * The query parameters, each given once. API Gateway joins the values of a parameter given more than once with
 * commas (`a,b`), which a route would refuse as one malformed value; the error says what the caller did instead.
 */
const singleQuery = (event: Event): Record<string, string | undefined> => {
  const names = [...new URLSearchParams(event.rawQueryString ?? '').keys()];
  const repeated = [...new Set(names.filter((name, index) => names.indexOf(name) !== index))];
  if (repeated.length > 0) {
    throw validationError(
      'Invalid query string',
      repeated.map((field) => ({ field, issue: 'given more than once' })),
    );
  }
  return event.queryStringParameters ?? {};
};

/**
 * A route that takes no query parameters refuses them, as a route with some refuses unknown ones: a caller that
 * sends `read-all?before=…` expects a filter that does not exist, and every item would be read.
 */
const refuseUnexpectedQuery = (event: Event): undefined => {
  const names = Object.keys(event.queryStringParameters ?? {});
  if (names.length === 0) return undefined;
  throw validationError(
    'Invalid query string',
    names.map((field) => ({ field, issue: 'unknown field' })),
  );
};

/**
 * JSON body: 256 KiB cap (413), JSON content type in UTF-8 (415), UTF-8 and well-formed (400). A route that
 * takes no body refuses one (400), but for `{}`.
 */
const jsonBody = (takesBody: boolean): MiddlewareObj<Event, Result, Error, RouteContext> => ({
  before: ({ event, context }) => {
    if (!takesBody) return refuseUnexpectedBody(event);
    if (event.body === undefined || event.body === null || event.body === '') return;
    const bytes = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
    if (bytes.length > MAX_BODY_BYTES) {
      throw new ServiceError('payload_too_large', `Request body is over ${MAX_BODY_BYTES} bytes`);
    }
    const contentType = header(event, 'content-type') ?? '';
    const charset = CHARSET_PARAMETER.exec(contentType)?.[1]?.toLowerCase();
    if (
      !JSON_CONTENT_TYPE.test(contentType) ||
      (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    ) {
      throw new ServiceError(
        'unsupported_media_type',
        'Request body must be JSON in UTF-8 (Content-Type: application/json)',
      );
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw validationError('Request body is not valid UTF-8', [{ field: '(body)', issue: 'invalid UTF-8' }]);
    }
    try {
      context.parsedBody = JSON.parse(text);
    } catch {
      throw validationError('Request body is not valid JSON', [{ field: '(body)', issue: 'malformed JSON' }]);
    }
    const refused = refusedJson(context.parsedBody);
    if (refused) {
      const field = fieldPath(refused.path) || '(body)';
      throw validationError(`Request body: ${field} ${refused.issue}`, [{ field, issue: refused.issue }]);
    }
  },
});

const toResult = (response: ApiResponse): Result => {
  if (response.text !== undefined) {
    return { statusCode: response.status, headers: { ...response.headers }, body: response.text };
  }
  if (response.body === undefined) return { statusCode: response.status, headers: { ...response.headers } };
  return {
    statusCode: response.status,
    headers: { 'Content-Type': 'application/json', ...response.headers },
    body: JSON.stringify(response.body),
  };
};

/**
 * Builds the Lambda handler of the declared HTTP route (by its declared id): middleware first, handler last.
 * Access rules come from the declaration (through the function's environment, set from it on AWS and locally),
 * so a route cannot be wired with one rule and enforce another.
 */
export const httpRoute = <B extends Schema | undefined = undefined, Q extends Schema | undefined = undefined>(
  /** A declared route id; tests of the plumbing itself pass a route object. */
  routeOrId: string | HttpRoute | DeclaredRoute,
  schemas: RouteSchemas<B, Q>,
  handle: (request: ApiRequest<Output<B>, Output<Q>>) => Promise<ApiResponse>,
) => {
  const routeOf = typeof routeOrId === 'string' ? routeFromEnvironment(routeOrId) : () => routeOrId;
  const handler = middy<Event, Result, Error, RouteContext>()
    .use(requestScope(routeOf))
    .use(errorResponses())
    .use(cloudFrontOrigin())
    .use(authentication(routeOf))
    .use(pathParameterBounds())
    .use(jsonBody(schemas.body !== undefined))
    .handler(async (event, context) => {
      const body = (
        schemas.body
          ? parseOrThrow(schemas.body, context.parsedBody === undefined ? {} : context.parsedBody)
          : undefined
      ) as Output<B>;
      const query = (
        schemas.query
          ? parseOrThrow(schemas.query, singleQuery(event), 'query string')
          : refuseUnexpectedQuery(event)
      ) as Output<Q>;
      const response = await handle({
        requestId: context.requestId,
        principal: context.principal as Principal,
        body,
        query,
        pathParameters: (event.pathParameters ?? {}) as Record<string, string>,
        headers: event.headers ?? {},
      });
      return toResult(response);
    });
  // The API description (api-docs/) reads the schemas that validate from the handler itself.
  return Object.assign(handler, { schemas });
};
