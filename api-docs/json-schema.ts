import * as z from '../lambdas/core/zod';

type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema dialects: 2020-12 is OpenAPI 3.1's; draft-07 underlies AsyncAPI 3.0's default schema format.
 */
export type Dialect = 'draft-2020-12' | 'draft-7';

/** zod → JSON Schema. */
export const jsonSchemaOf = (
  schema: z.core.$ZodType,
  io: 'input' | 'output',
  target: Dialect = 'draft-2020-12',
): JsonSchema => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    target,
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
};

/**
 * Named schemas as one set of components that refer to each other by `$ref` (`refBase` + name): a schema
 * used inside another named one is written once. A schema listed under two names keeps the first.
 */
export const componentSchemas = (
  named: Readonly<Record<string, z.core.$ZodType>>,
  io: 'input' | 'output',
  refBase: string,
  target: Dialect = 'draft-2020-12',
): Record<string, JsonSchema> => {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) if (!registry.has(schema)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io,
    target,
    unrepresentable: 'any',
    uri: (id) => `${refBase}${id}`,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...rest }]) => [id, rest as JsonSchema]),
  );
};

/** The name a schema got among `named` (identity), for `$ref`s. */
export const nameOf = (named: Readonly<Record<string, z.core.$ZodType>>, schema: z.core.$ZodType): string => {
  const entry = Object.entries(named).find(([, candidate]) => candidate === schema);
  if (!entry) throw new Error('A response schema is not among the named components');
  return entry[0];
};
