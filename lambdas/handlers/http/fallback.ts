import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { wiring } from '../../../lib/wiring';
import { allowedMethods } from '../../../lib/wiring/route-match';
import { notFound, ServiceError } from '../../core/errors';
import { httpRoute } from '../../core/http/route';

/** The plumbing (request id, logs, error body) answering with `error`. */
const answerWith = (error: ServiceError) =>
  httpRoute('platform.fallback', {}, async () => {
    throw error;
  });

const notFoundAnswer = answerWith(notFound());

type RouteHandler = ReturnType<typeof answerWith>;

/**
 * The declared `$default` route: API Gateway sends it every request no other route matches. A path that a
 * declared route serves with another method is a 405 with `Allow` (contract §3); anything else is a 404.
 */
export const handler = async (event: APIGatewayProxyEventV2, context: Parameters<RouteHandler>[1]) => {
  const method = event.requestContext?.http?.method ?? 'GET';
  const allowed = allowedMethods(wiring.httpRoutes, event.rawPath ?? '/');
  // The body is never read here: dropping it keeps the body checks (413/415) from hiding the 404/405.
  const bodiless: APIGatewayProxyEventV2 = { ...event, body: undefined, isBase64Encoded: false };
  if (allowed.length === 0) return notFoundAnswer(bodiless, context);
  const methodNotAllowed = new ServiceError(
    'method_not_allowed',
    `${method} is not allowed on this path`,
    undefined,
    { Allow: allowed.join(', ') },
  );
  return answerWith(methodNotAllowed)(bodiless, context);
};
