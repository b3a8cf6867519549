/**
 * Checks what the service answers against the committed API documents (docs/api/), so that a field added,
 * renamed or removed in the code without the description fails the test that meets it. The shared test
 * helpers call these on every response (api.ts) and every frame (ws-client.ts) they receive.
 */

import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import asyncApi from '../../docs/api/asyncapi.json' with { type: 'json' };
import openApi from '../../docs/api/openapi.json' with { type: 'json' };

type Json = Record<string, unknown>;

interface Operation {
  readonly responses: Record<string, Json>;
}

const OPENAPI_ID = 'openapi.json';
const ASYNCAPI_ID = 'asyncapi.json';

const withFormats = <T extends Ajv>(ajv: T): T => {
  addFormats.default(ajv);
  return ajv;
};
// OpenAPI 3.1 schemas are JSON Schema 2020-12; AsyncAPI 3.0's default schema format builds on draft-07.
const openApiAjv = withFormats(new Ajv2020({ strict: false, allErrors: true }));
openApiAjv.addSchema({ $id: OPENAPI_ID, components: { schemas: openApi.components.schemas } });
// Query, path and header values are strings on the wire: their schemas are checked with coercion, as servers do.
const parameterAjv = withFormats(new Ajv2020({ strict: false, allErrors: true, coerceTypes: true }));
parameterAjv.addSchema({ $id: OPENAPI_ID, components: { schemas: openApi.components.schemas } });
const asyncApiAjv = withFormats(new Ajv({ strict: false, allErrors: true }));
asyncApiAjv.addSchema({ $id: ASYNCAPI_ID, components: { schemas: asyncApi.components.schemas } });

/** Local `$ref`s (`#/components/...`) pointed at the document they come from. */
const anchored = (schema: unknown, documentId: string): unknown => {
  if (Array.isArray(schema)) return schema.map((item) => anchored(item, documentId));
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#')
        ? `${documentId}${value}`
        : anchored(value, documentId),
    ]),
  );
};

const compiled = new Map<unknown, ValidateFunction>();
const validatorFor = (ajv: Ajv, schema: unknown, documentId: string): ValidateFunction => {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(anchored(schema, documentId) as Json);
    compiled.set(schema, validate);
  }
  return validate;
};

const problemsOf = (validate: ValidateFunction, value: unknown): string[] =>
  validate(value)
    ? []
    : (validate.errors ?? []).map(
        (error) => `${error.instancePath || '(root)'} ${error.message} ${JSON.stringify(error.params)}`,
      );

/** `#/components/responses/X` → the response object. */
const resolveResponse = (response: Json): Json => {
  const ref = response.$ref;
  if (typeof ref !== 'string') return response;
  const name = ref.replace('#/components/responses/', '');
  return (openApi.components.responses as Record<string, Json>)[name] as Json;
};

const segments = (path: string) => path.split('/').filter(Boolean);

/** The documented path template a request path (relative to /api/v1) fits; literal segments win. */
export const templateOf = (requestPath: string): string | undefined => {
  const actual = segments(requestPath.split('?')[0] ?? '');
  const fits = Object.keys(openApi.paths).filter((template) => {
    const expected = segments(template);
    return (
      expected.length === actual.length &&
      expected.every((segment, index) => /^\{\w+\}$/.test(segment) || segment === actual[index])
    );
  });
  const literals = (template: string) =>
    segments(template).filter((segment) => !segment.startsWith('{')).length;
  return fits.sort((a, b) => literals(b) - literals(a))[0];
};

export interface ReceivedResponse {
  readonly method: string;
  /** Relative to /api/v1, as the tests write it (query string allowed). */
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  /** The body as text ('' when empty). */
  readonly text: string;
}

const errorBodyValidator = () =>
  validatorFor(openApiAjv, { $ref: '#/components/schemas/ErrorBody' }, OPENAPI_ID);

/** What is wrong with a response according to docs/api/openapi.json; empty when it conforms. */
export const openApiProblems = (response: ReceivedResponse): string[] => {
  const where = `${response.method} ${response.path} → ${response.status}`;
  const problems: string[] = [];
  if (!response.headers.get('x-request-id')) problems.push('no X-Request-Id header');
  const template = templateOf(response.path);
  const operation = template
    ? ((openApi.paths as Record<string, Record<string, Operation>>)[template]?.[
        response.method.toLowerCase()
      ] as Operation | undefined)
    : undefined;
  if (!operation) {
    // Paths no operation serves: the contract's 404 (unknown path) or 405 (known path, other method).
    const expected = template ? 405 : 404;
    if (response.status !== expected) problems.push(`expected ${expected} for an undocumented operation`);
    problems.push(...problemsOf(errorBodyValidator(), JSON.parse(response.text || 'null')));
    return problems.map((problem) => `${where}: ${problem}`);
  }
  const documented = operation.responses[String(response.status)];
  if (!documented) return [`${where}: status not documented for ${response.method} ${template}`];
  const content = resolveResponse(documented).content as Record<string, { schema: unknown }> | undefined;
  const json = content?.['application/json'];
  if (!content) {
    if (response.text !== '') problems.push('a body where the document describes none');
  } else if (json) {
    if (!/^application\/json/.test(response.headers.get('content-type') ?? ''))
      problems.push(`content type ${response.headers.get('content-type')} is not JSON`);
    const body = response.text ? JSON.parse(response.text) : undefined;
    problems.push(...problemsOf(validatorFor(openApiAjv, json.schema, OPENAPI_ID), body));
  } else if (
    !Object.keys(content).some((type) => (response.headers.get('content-type') ?? '').startsWith(type))
  ) {
    problems.push(
      `content type ${response.headers.get('content-type')} is not one of ${Object.keys(content)}`,
    );
  }
  return problems.map((problem) => `${where}: ${problem}`);
};

// Coercion rewrites the value in its container, so a parameter is checked as the `value` of an object.
const parameterSchemas = new Map<unknown, Json>();
const parameterValidator = (schema: Json): ValidateFunction => {
  let wrapped = parameterSchemas.get(schema);
  if (!wrapped) {
    wrapped = { type: 'object', properties: { value: schema } };
    parameterSchemas.set(schema, wrapped);
  }
  return validatorFor(parameterAjv, wrapped, OPENAPI_ID);
};

export interface SentRequest {
  readonly method: string;
  /** Relative to /api/v1, with its query string. */
  readonly path: string;
  readonly headers: Headers;
  /** The body as text ('' when none). */
  readonly text: string;
}

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly required?: boolean;
  readonly schema: Json;
}

/**
 * What is wrong with a request according to docs/api/openapi.json (what a validating proxy checks): an operation
 * for its method and path, its path, query and header parameters (no undeclared query parameter), a token where
 * the operation needs one, and its body against the operation's request body (none where it declares none).
 */
export const openApiRequestProblems = (request: SentRequest): string[] => {
  const url = new URL(request.path, 'http://request.invalid');
  const where = `${request.method} ${request.path}`;
  const template = templateOf(url.pathname);
  const operation = template
    ? ((openApi.paths as Record<string, Record<string, Json>>)[template]?.[request.method.toLowerCase()] as
        | Json
        | undefined)
    : undefined;
  if (!template || !operation) return [`${where}: no operation serves this method and path`];
  const problems: string[] = [];
  const check = (what: string, schema: Json, value: string) => {
    problems.push(
      ...problemsOf(parameterValidator(schema), { value }).map((problem) => `${what}: ${problem}`),
    );
  };
  const parameters = ((operation.parameters as Json[]) ?? []).map(
    (parameter) =>
      (typeof parameter.$ref === 'string'
        ? (openApi.components.parameters as Record<string, Json>)[parameter.$ref.split('/').pop() ?? '']
        : parameter) as unknown as Parameter,
  );
  const actualSegments = segments(url.pathname);
  segments(template).forEach((segment, index) => {
    const name = /^\{(\w+)\}$/.exec(segment)?.[1];
    const parameter = parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
    if (parameter)
      check(`path parameter ${name}`, parameter.schema, decodeURIComponent(actualSegments[index] ?? ''));
  });
  for (const parameter of parameters.filter((candidate) => candidate.in !== 'path')) {
    const value =
      parameter.in === 'query' ? url.searchParams.get(parameter.name) : request.headers.get(parameter.name);
    if (value === null) {
      if (parameter.required) problems.push(`${parameter.in} parameter ${parameter.name} is required`);
    } else check(`${parameter.in} parameter ${parameter.name}`, parameter.schema, value);
  }
  for (const name of url.searchParams.keys()) {
    if (!parameters.some((parameter) => parameter.in === 'query' && parameter.name === name))
      problems.push(`query parameter ${name} is not declared`);
  }
  if (
    (operation.security as Json[] | undefined)?.length &&
    !/^Bearer \S+$/.test(request.headers.get('authorization') ?? '')
  )
    problems.push('no bearer token, which the operation requires');
  const bodyRef = (operation.requestBody as Json | undefined)?.$ref;
  const body =
    typeof bodyRef === 'string'
      ? ((openApi.components as unknown as { requestBodies: Record<string, Json> }).requestBodies[
          bodyRef.split('/').pop() ?? ''
        ] as { required?: boolean; content: Record<string, { schema: Json }> })
      : undefined;
  if (request.text === '') {
    if (body?.required) problems.push('no body, which the operation requires');
  } else if (!body) {
    problems.push('a body, where the operation declares none');
  } else if (!/^application\/json/.test(request.headers.get('content-type') ?? '')) {
    problems.push(`content type ${request.headers.get('content-type')} is not JSON`);
  } else {
    const schema = body.content['application/json']?.schema ?? {};
    try {
      problems.push(...problemsOf(validatorFor(openApiAjv, schema, OPENAPI_ID), JSON.parse(request.text)));
    } catch {
      problems.push('a body that is not JSON');
    }
  }
  return problems.map((problem) => `${where}: ${problem}`);
};

/** Throws when the response does not conform to docs/api/openapi.json. */
export const assertDocumentedResponse = (response: ReceivedResponse): void => {
  const problems = openApiProblems(response);
  if (problems.length > 0)
    throw new Error(`Response differs from docs/api/openapi.json:\n${problems.join('\n')}`);
};

/** Payload schemas of the frames the service sends (its `send` operations), by frame type. */
const serverFramePayloads = new Map<string, unknown>(
  Object.values(asyncApi.operations as Record<string, { action: string; messages: { $ref: string }[] }>)
    .filter((operation) => operation.action === 'send')
    .flatMap((operation) => operation.messages)
    .map(({ $ref }) => {
      const key = $ref.split('/').pop() as string;
      const message = (asyncApi.components.messages as Record<string, { name: string; payload: unknown }>)[
        key
      ];
      if (!message) throw new Error(`asyncapi.json: no message ${key}`);
      return [message.name, message.payload] as const;
    }),
);

/** What is wrong with a frame the server sent according to docs/api/asyncapi.json; empty when it conforms. */
/**
 * What is wrong with a frame the server sent according to docs/api/asyncapi.json; empty when it conforms.
 * A frame without a string `type` must be API Gateway's error answer; one whose `type` the service does not
 * define, a broadcast payload (any object with a string `type`).
 */
export const asyncApiProblems = (frame: unknown): string[] => {
  const type = (frame as { type?: unknown } | null)?.type;
  const payload =
    typeof type !== 'string'
      ? serverFramePayloads.get('gateway_error')
      : (serverFramePayloads.get(type) ?? serverFramePayloads.get('broadcast'));
  const problems = problemsOf(validatorFor(asyncApiAjv, payload, ASYNCAPI_ID), frame);
  return problems.map((problem) => `${String(type)} frame: ${problem}`);
};
