/**
 * TypeScript declarations from the API documents' JSON Schemas, for the client SDK
 * (client/src/generated/wire.ts): the SDK's wire types come from the same schemas as the service's checks,
 * so the two cannot disagree. Covers the subset of JSON Schema that z.toJSONSchema writes for these schemas.
 */
type Json = Record<string, unknown>;

const refName = (ref: string) => ref.split('/').pop() ?? ref;
const literal = (value: unknown) => JSON.stringify(value).replace(/"/g, "'");
const comment = (text: unknown, indent: string) =>
  typeof text === 'string' && text
    ? `${indent}/** ${text.replace(/\*\//g, '*\\/').replace(/\s*\n\s*/g, ' ')} */\n`
    : '';

const isRecordOfAnything = (schema: Json) =>
  schema.type === 'object' && !schema.properties && schema.additionalProperties !== false;

/** A TypeScript type for `schema`; object types are written over several lines at `indent`. */
export const typeFor = (schema: Json | undefined, indent = ''): string => {
  if (!schema || Object.keys(schema).length === 0) return 'unknown';
  if (typeof schema.$ref === 'string') return refName(schema.$ref);
  if (schema.const !== undefined) return literal(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map(literal).join(' | ');
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const parts = ((schema.anyOf ?? schema.oneOf) as Json[]).map((part) => typeFor(part, indent));
    return [...new Set(parts)].join(' | ');
  }
  if (Array.isArray(schema.allOf))
    return (schema.allOf as Json[]).map((part) => typeFor(part, indent)).join(' & ');
  if (Array.isArray(schema.type))
    return schema.type.map((type) => typeFor({ ...schema, type }, indent)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = typeFor(schema.items as Json | undefined, indent);
      return /^[\w.']+$/.test(item) ? `readonly ${item}[]` : `readonly (${item})[]`;
    }
    case 'object': {
      if (isRecordOfAnything(schema)) {
        const value = typeFor(schema.additionalProperties as Json | undefined, indent);
        if (!schema.properties) return `Record<string, ${value}>`;
      }
      const inner = `${indent}  `;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const fields = Object.entries((schema.properties ?? {}) as Record<string, Json>).map(
        ([name, field]) =>
          `${comment(field.description, inner)}${inner}readonly ${/^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name)}${required.has(name) ? '' : '?'}: ${typeFor(field, inner)};`,
      );
      if (schema.additionalProperties !== undefined && schema.additionalProperties !== false)
        fields.push(`${inner}readonly [field: string]: unknown;`);
      return fields.length ? `{\n${fields.join('\n')}\n${indent}}` : 'Record<string, never>';
    }
    default:
      return 'unknown';
  }
};

/** `export type Name = …;` for each schema, with its description. */
export const declarations = (schemas: Readonly<Record<string, Json>>): string =>
  Object.entries(schemas)
    .map(([name, schema]) => `${comment(schema.description, '')}export type ${name} = ${typeFor(schema)};\n`)
    .join('\n');
