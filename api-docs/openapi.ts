/**
 * The OpenAPI 3.1 description of the REST API, built from the wiring declaration (method, path, access), the
 * schemas each handler validates with (read from the handler itself) and the response schemas of
 * operations.ts. `npm run api-docs` writes it to docs/api/openapi.json; a test fails when that file is stale.
 */
import { pathToFileURL } from 'node:url';
import { type ErrorCode, STATUS_OF } from '../lambdas/core/errors';
import { MAX_BODY_BYTES } from '../lambdas/core/http/route';
import { identifierSchema } from '../lambdas/core/identifier-schema';
import {
  type BoundedIdentifier,
  describeBound,
  IDENTIFIER_CHARACTERS,
  MAX_PATH_PARAMETER_BYTES,
} from '../lambdas/core/identifiers';
import { errorBodySchema, timestamp } from '../lambdas/core/response-schemas';
import type { Schema } from '../lambdas/core/validation';
import type * as z from '../lambdas/core/zod';
import { repoRoot } from '../lib/paths';
import { type Access, DEFAULT_ROUTE_PATH, type HttpRoute, wiring } from '../lib/wiring';
import { ROUTES_BASE_PATH } from '../lib/wiring/route-match';
import { componentSchemas, jsonSchemaOf, nameOf } from './json-schema';
import { OPERATIONS, type OperationDoc, RESPONSE_COMPONENTS, TAGS } from './operations';

type Json = Record<string, unknown>;

interface RouteSchemas {
  readonly body?: Schema;
  readonly query?: Schema;
}

const SCHEMAS = '#/components/schemas/';
const REQUEST_BODIES = '#/components/requestBodies/';
/** The request body of a POST, PUT or DELETE that takes none: nothing, or `{}` (route.ts accepts both). */
const NO_BODY = 'NoBody';

/** The schemas the route's handler validates with (`httpRoute` attaches them to the handler). */
const handlerSchemas = async (route: HttpRoute): Promise<RouteSchemas> => {
  const module = (await import(pathToFileURL(`${repoRoot}${route.handler}`).href)) as {
    handler?: { schemas?: RouteSchemas };
  };
  if (!module.handler?.schemas) throw new Error(`${route.handler} is not built with httpRoute`);
  return module.handler.schemas;
};

const pascal = (id: string) =>
  id
    .split(/[._-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

const security = (access: Access): Json[] => {
  if ('public' in access) return [];
  const requirements: Json[] = [];
  if (access.users) requirements.push({ userBearer: access.users === 'admin' ? ['admin'] : [] });
  if (access.services)
    requirements.push({ serviceBearer: access.services === 'any' ? [] : [access.services] });
  return requirements;
};

const whoMayCall = (access: Access): string => {
  if ('public' in access) return 'No authentication.';
  const who = [
    access.users === 'any' ? 'any user' : access.users === 'admin' ? 'an admin user' : undefined,
    access.services === 'any'
      ? 'any service'
      : access.services
        ? `a service with the \`${access.services}\` scope`
        : undefined,
  ].filter(Boolean);
  return `Who may call: ${who.join(' or ')}.`;
};

/** Conditions every route of a kind shares; a response with only this text is a shared component. */
const COMMON_REASONS: Partial<Record<ErrorCode, string>> = {
  unauthorized:
    'a missing, malformed, expired, not-yet-valid, wrongly signed or wrong-audience token (`WWW-Authenticate: Bearer`)',
  payload_too_large: `a body over ${MAX_BODY_BYTES} bytes`,
  unsupported_media_type:
    'a body that is not JSON in UTF-8 (`Content-Type: application/json`, no other charset)',
  rate_limited: 'over the per-IP rate limit, on stages with a WAF (`Retry-After`)',
  internal: 'anything unexpected (logged with the request id, never detailed)',
  unavailable: 'a dependency is down or throttling: retry later (`Retry-After` may be set)',
};

/** Every error a route can answer, with the conditions: the route's own plus the ones of its kind. */
const errorConditions = (route: HttpRoute, schemas: RouteSchemas, doc: OperationDoc) => {
  const reasons = new Map<ErrorCode, string[]>();
  const add = (code: ErrorCode, reason: string | undefined) => {
    if (reason) reasons.set(code, [...(reasons.get(code) ?? []), reason]);
  };
  const authenticated = !('public' in route.access);
  if (schemas.body)
    add('validation', 'malformed JSON or UTF-8, wrong types, unknown fields or out-of-range values');
  else if (route.method !== 'GET' && route.method !== 'ANY')
    add('validation', 'a body: this request takes none (an empty one or `{}` is accepted)');
  add(
    'validation',
    schemas.query ? 'a query parameter breaks its rule' : 'a query parameter (this request takes none)',
  );
  if (doc.idempotent) add('validation', 'a malformed `Idempotency-Key`');
  add('validation', doc.errors?.validation);
  if (authenticated) {
    add('unauthorized', COMMON_REASONS.unauthorized);
    const access = route.access as Exclude<Access, { public: true }>;
    if (!(access.users === 'any' && access.services === 'any'))
      add('forbidden', 'a valid token of the wrong kind, or without the needed scope or role');
  }
  add('forbidden', doc.errors?.forbidden);
  add('forbidden', 'on stages behind CloudFront: a request that did not come through it');
  add('not_found', doc.errors?.not_found);
  if (/\{\w+\}/.test(route.path))
    add('not_found', `a path parameter over ${MAX_PATH_PARAMETER_BYTES} bytes (it can name nothing)`);
  add('conflict', doc.errors?.conflict);
  if (schemas.body) {
    add('payload_too_large', COMMON_REASONS.payload_too_large);
    add('unsupported_media_type', COMMON_REASONS.unsupported_media_type);
  }
  add('rate_limited', COMMON_REASONS.rate_limited);
  add('internal', COMMON_REASONS.internal);
  add('unavailable', COMMON_REASONS.unavailable);
  return reasons;
};

const jsonContent = (schema: Json) => ({ 'application/json': { schema } });

const ERROR_HEADERS: Partial<Record<ErrorCode, Json>> = {
  unauthorized: { 'WWW-Authenticate': { $ref: '#/components/headers/WWWAuthenticate' } },
  rate_limited: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
  unavailable: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
};

const errorName = (code: ErrorCode) => `${pascal(code)}Error`;
const errorSchema = (code: ErrorCode): Json => ({ $ref: `${SCHEMAS}${errorName(code)}` });
const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } };

const errorResponse = (code: ErrorCode, reasons: readonly string[]): Json => ({
  description: `\`${code}\`: ${reasons.join('; ')}`,
  headers: { ...REQUEST_ID_HEADER, ...ERROR_HEADERS[code] },
  content: jsonContent(errorSchema(code)),
});

/** The error body with its `code` fixed, per code; and the responses whose text every route shares. */
const errorComponents = () => {
  // 405 is answered for paths no operation has with that method: the document states it in words.
  const codes = (Object.keys(STATUS_OF) as ErrorCode[]).filter((code) => code !== 'method_not_allowed');
  return {
    schemas: Object.fromEntries(
      codes.map((code) => [
        errorName(code),
        { allOf: [{ $ref: `${SCHEMAS}ErrorBody` }, { properties: { code: { const: code } } }] },
      ]),
    ),
    responses: Object.fromEntries(
      Object.entries(COMMON_REASONS).map(([code, reason]) => [
        pascal(code),
        errorResponse(code as ErrorCode, [reason]),
      ]),
    ),
  };
};

const responsesOf = (route: HttpRoute, schemas: RouteSchemas, doc: OperationDoc): Json => {
  const responses: Record<string, Json> = {};
  for (const [status, success] of Object.entries(doc.success)) {
    const content = success.schema
      ? jsonContent({ $ref: `${SCHEMAS}${nameOf(RESPONSE_COMPONENTS, success.schema)}` })
      : success.mediaType
        ? { [success.mediaType]: { schema: success.mediaType === 'text/plain' ? { type: 'string' } : {} } }
        : undefined;
    responses[status] = {
      description: success.description,
      headers: REQUEST_ID_HEADER,
      ...(content ? { content } : {}),
    };
  }
  for (const [code, reasons] of errorConditions(route, schemas, doc)) {
    const status = String(STATUS_OF[code]);
    const existing = responses[status];
    if (existing) {
      // A status that is also a success answer (GET /ready's 503): either body.
      const success = (existing.content as Json)['application/json'] as { schema: Json };
      responses[status] = {
        ...existing,
        description: `${existing.description}; or \`${code}\`: ${reasons.join('; ')}`,
        content: jsonContent({ oneOf: [success.schema, errorSchema(code)] }),
      };
      continue;
    }
    const shared = reasons.length === 1 && reasons[0] === COMMON_REASONS[code];
    responses[status] = shared
      ? { $ref: `#/components/responses/${pascal(code)}` }
      : errorResponse(code, reasons);
  }
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
};

/** Path parameters that are identifiers with a bound of their own (lambdas/core/identifiers.ts). */
const PATH_IDENTIFIERS: Readonly<Record<string, BoundedIdentifier>> = { user_id: 'userId' };

const parametersOf = (route: HttpRoute, schemas: RouteSchemas, doc: OperationDoc): Json[] => {
  const parameters: Json[] = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => {
    const identifier = name === undefined ? undefined : PATH_IDENTIFIERS[name];
    return {
      name,
      in: 'path',
      required: true,
      description: identifier
        ? `${describeBound(identifier)} (over ${MAX_PATH_PARAMETER_BYTES} bytes: 404, as on every route)`
        : `at most ${MAX_PATH_PARAMETER_BYTES} bytes (UTF-8)`,
      schema: identifier
        ? jsonSchemaOf(identifierSchema(identifier), 'input')
        : { type: 'string', minLength: 1 },
    };
  });
  if (schemas.query) {
    const query = jsonSchemaOf(schemas.query, 'input') as { properties?: Json; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }
  parameters.push({ $ref: '#/components/parameters/XRequestId' });
  if (doc.idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return parameters;
};

const INFO_DESCRIPTION = [
  'Notifications, realtime and event delivery. Bodies are JSON (UTF-8). Every response carries `X-Request-Id`: ',
  'the request’s own when it is a sane string of at most 128 characters, else a new UUID v7.\n\n',
  'Errors: `{"code", "message", "request_id"}`, plus `details: [{"field", "issue"}]` for `validation`; never a ',
  'stack trace. A path no route serves is 404 `not_found` (with or without a token); a served path with another ',
  'method is 405 `method_not_allowed` with `Allow`. Another user’s resource is 404 (existence is not leaked).\n\n',
  'Tokens come from an external identity provider; the service only validates them. The WebSocket API is ',
  'described by the AsyncAPI document docs/api/asyncapi.json; the rules in full are in docs/contract.md.',
].join('');

/**
 * Request bodies are `requestBodies` components, each with its schema inline: what a client may send (the input
 * side of the zod schema: a field with a default is optional). Generators read a `default` under
 * `components/schemas` as "always present", which holds for responses only (openapi-typescript makes such
 * fields required), and a request body's schema is never a response's.
 */
const requestBodyComponents = (requestBodies: Record<string, z.core.$ZodType>): Record<string, Json> => {
  const schemas = componentSchemas(requestBodies, 'input', REQUEST_BODIES);
  if (JSON.stringify(schemas).includes(REQUEST_BODIES))
    throw new Error('A request body schema uses another one: give the shared part a component of its own');
  return {
    ...Object.fromEntries(
      // A body none of whose fields is required may be left out: the route reads no body as `{}`.
      Object.entries(schemas).map(([name, schema]) => [
        name,
        {
          required: ((schema as { required?: readonly string[] }).required?.length ?? 0) > 0,
          content: jsonContent(schema),
        },
      ]),
    ),
    [NO_BODY]: {
      description: 'This request takes no body: send none, or `{}` (any other body is a 400)',
      required: false,
      content: jsonContent({ type: 'object', maxProperties: 0 }),
    },
  };
};

export const buildOpenApi = async (): Promise<Json> => {
  const routes = wiring.httpRoutes.filter((route) => route.path !== DEFAULT_ROUTE_PATH);
  const requestBodies: Record<string, z.core.$ZodType> = {};
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const doc = OPERATIONS[route.id];
    if (!doc) throw new Error(`api-docs/operations.ts does not describe the route ${route.id}`);
    const schemas = await handlerSchemas(route);
    const bodyName = `${pascal(route.id)}Request`;
    if (schemas.body) requestBodies[bodyName] = schemas.body;
    const takesNoBody = !schemas.body && route.method !== 'GET' && route.method !== 'ANY';
    const operation: Json = {
      operationId: route.id,
      tags: [doc.tag],
      summary: doc.summary,
      description: [whoMayCall(route.access), doc.description].filter(Boolean).join(' '),
      security: security(route.access),
      parameters: parametersOf(route, schemas, doc),
      ...(schemas.body
        ? { requestBody: { $ref: `${REQUEST_BODIES}${nameOf(requestBodies, schemas.body)}` } }
        : takesNoBody
          ? { requestBody: { $ref: `${REQUEST_BODIES}${NO_BODY}` } }
          : {}),
      responses: responsesOf(route, schemas, doc),
    };
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  for (const id of Object.keys(OPERATIONS)) {
    if (!routes.some((route) => route.id === id))
      throw new Error(`api-docs/operations.ts describes ${id}, which lib/wiring does not declare`);
  }
  const errors = errorComponents();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Notify REST API',
      version: '1.0.0',
      description: INFO_DESCRIPTION,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [
      { url: `http://127.0.0.1:3000${ROUTES_BASE_PATH}`, description: 'the local runtime (`npm start`)' },
      {
        url: `{origin}${ROUTES_BASE_PATH}`,
        description: 'a deployed stage (the stack output `HttpApiUrl`)',
        variables: { origin: { default: 'https://api.example.com' } },
      },
    ],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: {
      schemas: {
        ...componentSchemas(
          { ErrorBody: errorBodySchema, Timestamp: timestamp, ...RESPONSE_COMPONENTS },
          'output',
          SCHEMAS,
        ),
        ...errors.schemas,
      },
      responses: errors.responses,
      requestBodies: requestBodyComponents(requestBodies),
      parameters: {
        XRequestId: {
          name: 'X-Request-Id',
          in: 'header',
          required: false,
          description: 'Correlation id, echoed in the response (and in the service’s logs) when sane',
          schema: { type: 'string', maxLength: 128 },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Makes retries safe: the first response of this key and principal is kept 24 h',
          schema: { type: 'string', minLength: 1, maxLength: IDENTIFIER_CHARACTERS.idempotencyKey },
        },
      },
      headers: {
        XRequestId: { description: 'The request’s correlation id', schema: { type: 'string' } },
        WWWAuthenticate: { description: '`Bearer`', schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'string' } },
      },
      securitySchemes: {
        userBearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A user access JWT from the identity provider (or, where `auth.introspection_url` is set, an opaque ' +
            'access token the IdP vouches for through RFC 7662 introspection): `aud` contains the user audience, ' +
            '`sub` is the user id; a user whose `roles` contain the admin role (`admin` by default) is an admin. ' +
            'The listed role (`admin`) is required where a route names it. Refresh tokens are refused (401).',
        },
        serviceBearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A service JWT: `aud` contains the service audience; name from `service`, else `sub`; scopes from ' +
            '`scope` (space-separated) or `scp`/`roles` (array). Or an opaque access token, introspected: name ' +
            'from `client_id`, scopes from `scope`. The listed scope is required where a route ' +
            'names one: `events:publish`, `notifications:write`, `webhooks:admin`, `broadcast:write`.',
        },
      },
    },
  };
};
