import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { isCorsPreflight, wiring } from '../../../lib/wiring';
import { allowedMethods } from '../../../lib/wiring/route-match';
import { notFound, ServiceError } from '../../core/errors';
import { httpRoute } from '../../core/http/route';

/** The plumbing (request id, logs, error body) answering with `error`. */
const answerWith = (error: ServiceError) =>
  httpRoute('platform.fallback', {}, async () => {
    throw error;
  });

const notFoundAnswer = answerWith(notFound());

/** 204 and nothing else: API Gateway adds its configured CORS headers (or none, for an origin it does not allow). */
const preflightAnswer = httpRoute('platform.fallback', {}, async () => ({ status: 204 }));

type RouteHandler = ReturnType<typeof answerWith>;

/**
 * The declared `$default` route: API Gateway sends it every request no other route matches. A path that a
 * declared route serves with another method is a 405 with `Allow` (contract §3); anything else is a 404.
 * CORS preflights land here too (no route takes OPTIONS, and `$default` catches them before API Gateway's own
 * preflight answer): they get a 204, to which API Gateway adds the stage's CORS headers (docs/deploy.md, CORS).
 */
export const handler = async (event: APIGatewayProxyEventV2, context: Parameters<RouteHandler>[1]) => {
  const method = event.requestContext?.http?.method ?? 'GET';
  const allowed = allowedMethods(wiring.httpRoutes, event.rawPath ?? '/');
  // Neither body nor query string is read here: dropping them keeps the route's checks (413/415, unknown query
  // parameters) from hiding the 404/405, and from refusing the preflight of a URL with a query string.
  const bodiless: APIGatewayProxyEventV2 = {
    ...event,
    body: undefined,
    isBase64Encoded: false,
    queryStringParameters: undefined,
    rawQueryString: '',
  };
  if (isCorsPreflight(method, event.headers)) return preflightAnswer(bodiless, context);
  if (allowed.length === 0) return notFoundAnswer(bodiless, context);
  const methodNotAllowed = new ServiceError(
    'method_not_allowed',
    `${method} is not allowed on this path`,
    undefined,
    { Allow: allowed.join(', ') },
  );
  return answerWith(methodNotAllowed)(bodiless, context);
};
