/**
 * A static, self-contained HTML reference (docs/api/index.html) rendered from the two generated documents:
 * no script, no network, opens from disk. Written by `npm run api-docs` with them.
 */
type Json = Record<string, unknown>;

const escapeHtml = (text: unknown): string =>
  String(text).replace(
    /[&<>"]/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[char] ?? char,
  );

/** Inline code spans of the descriptions (`x`) as <code>. */
const prose = (text: unknown): string =>
  text === undefined
    ? ''
    : escapeHtml(text)
        .replace(/`([^`]+)`/g, '<code>$1</code>')
        .replace(/\n\n/g, '</p><p>');

const refName = (ref: string) => ref.split('/').pop() ?? ref;
const anchor = (prefix: string, name: string) => `${prefix}-${name.replace(/[^\w-]/g, '_')}`;

/** A one-line type of a schema: `string (date-time)`, `array of Receiver`, `"a" | "b"`, `… | null`. */
const typeOf = (schema: Json, prefix: string): string => {
  if (typeof schema.$ref === 'string') {
    const name = refName(schema.$ref);
    return `<a href="#${anchor(prefix, name)}">${escapeHtml(name)}</a>`;
  }
  if (schema.const !== undefined) return `<code>${escapeHtml(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum))
    return schema.enum.map((value) => `<code>${escapeHtml(JSON.stringify(value))}</code>`).join(' | ');
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) {
      const joiner = key === 'allOf' ? ' &amp; ' : ' | ';
      return (schema[key] as Json[]).map((part) => typeOf(part, prefix)).join(joiner);
    }
  }
  if (schema.type === 'array') return `array of ${typeOf((schema.items as Json) ?? {}, prefix)}`;
  if (schema.type === 'null') return 'null';
  const format = schema.format ? ` (${escapeHtml(schema.format)})` : '';
  return `${escapeHtml(schema.type ?? 'any')}${format}`;
};

const RULES: [string, string][] = [
  ['minLength', 'min length'],
  ['maxLength', 'max length'],
  ['minItems', 'min items'],
  ['maxItems', 'max items'],
  ['minimum', '≥'],
  ['maximum', '≤'],
  ['pattern', 'pattern'],
  ['default', 'default'],
];

const rulesOf = (schema: Json): string =>
  RULES.filter(([key]) => schema[key] !== undefined)
    .map(([key, label]) => {
      const value = schema[key];
      // Long generated patterns (timestamps) say less than their format does.
      if (key === 'pattern' && (schema.format || String(value).length > 80)) return '';
      return `${label} <code>${escapeHtml(typeof value === 'string' && key !== 'pattern' ? JSON.stringify(value) : value)}</code>`;
    })
    .filter(Boolean)
    .join(', ');

/** The fields of an object schema as table rows; nested objects and arrays of objects as `a.b` / `a[].b`. */
const fieldRows = (schema: Json, prefix: string, path = ''): string => {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties)
    .map(([name, field]) => {
      const fullName = `${path}${name}`;
      const row = `<tr><td><code>${escapeHtml(fullName)}</code>${required.has(name) ? '' : ' <small>optional</small>'}</td><td>${typeOf(field, prefix)}</td><td>${[prose(field.description), rulesOf(field)].filter(Boolean).join('. ')}</td></tr>`;
      const items = field.items as Json | undefined;
      if (field.type === 'object' && field.properties) return row + fieldRows(field, prefix, `${fullName}.`);
      if (items?.type === 'object' && items.properties)
        return row + fieldRows(items, prefix, `${fullName}[].`);
      return row;
    })
    .join('');
};

const schemaBlock = (name: string, schema: Json, prefix: string): string => {
  const rows = schema.properties ? fieldRows(schema, prefix) : '';
  const body = rows
    ? `<table><tr><th>field</th><th>type</th><th>notes</th></tr>${rows}</table>`
    : `<p>${typeOf(schema, prefix)}${schema.additionalProperties === undefined || schema.properties ? '' : ''}</p>`;
  const closed = schema.additionalProperties === false ? ' <small>(no other fields)</small>' : '';
  return `<section id="${anchor(prefix, name)}"><h4>${escapeHtml(name)}${closed}</h4>${schema.description ? `<p>${prose(schema.description)}</p>` : ''}${body}</section>`;
};

const restSection = (openApi: Json): string => {
  const components = openApi.components as {
    schemas: Record<string, Json>;
    responses: Record<string, Json>;
    requestBodies: Record<string, Json>;
  };
  const requestSchema = (body: Json) =>
    (body.content as Record<string, { schema: Json }> | undefined)?.['application/json']?.schema ?? {};
  const operations: string[] = [];
  const toc: string[] = [];
  for (const [path, methods] of Object.entries(openApi.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      const id = anchor('op', String(operation.operationId));
      toc.push(
        `<li><a href="#${id}"><code>${method.toUpperCase()} ${escapeHtml(path)}</code></a> ${escapeHtml(operation.summary)}</li>`,
      );
      const parameters = ((operation.parameters as Json[]) ?? []).filter((parameter) => !parameter.$ref);
      const parameterRows = parameters
        .map(
          (parameter) =>
            `<tr><td><code>${escapeHtml(parameter.name)}</code> <small>${escapeHtml(parameter.in)}${parameter.required ? '' : ', optional'}</small></td><td>${typeOf(parameter.schema as Json, 'schema')}</td><td>${rulesOf(parameter.schema as Json)}</td></tr>`,
        )
        .join('');
      const bodyRef = (operation.requestBody as Json | undefined)?.$ref;
      const bodyName = typeof bodyRef === 'string' ? refName(bodyRef) : undefined;
      const bodyComponent = bodyName ? components.requestBodies[bodyName] : undefined;
      const responses = Object.entries(operation.responses as Record<string, Json>)
        .map(([status, response]) => {
          const resolved =
            typeof response.$ref === 'string'
              ? (components.responses[refName(response.$ref)] ?? {})
              : response;
          const schema = (resolved.content as Record<string, { schema: Json }> | undefined)?.[
            'application/json'
          ]?.schema;
          return `<tr><td>${escapeHtml(status)}</td><td>${prose(resolved.description)}</td><td>${schema ? typeOf(schema, 'schema') : ''}</td></tr>`;
        })
        .join('');
      operations.push(`<section id="${id}" class="op"><h3><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p><strong>${escapeHtml(operation.summary)}</strong></p><p>${prose(operation.description)}</p>
${parameterRows ? `<table><tr><th>parameter</th><th>type</th><th>rules</th></tr>${parameterRows}</table>` : ''}
${bodyName && bodyComponent ? `<p>Request body: ${bodyComponent.required ? typeOf({ $ref: bodyName }, 'schema') : prose(bodyComponent.description)}</p>` : ''}
<table><tr><th>status</th><th>when</th><th>body</th></tr>${responses}</table></section>`);
    }
  }
  const requestBodies = Object.entries(components.requestBodies)
    .filter(([, body]) => body.required)
    .map(([name, body]) => [name, requestSchema(body)] as const);
  const schemas = [...requestBodies, ...Object.entries(components.schemas)]
    .map(([name, schema]) => schemaBlock(name, schema, 'schema'))
    .join('\n');
  return `<h2 id="rest">REST API <small>OpenAPI ${escapeHtml(openApi.openapi)}</small></h2>
<p>${prose((openApi.info as Json).description)}</p><ul>${toc.join('')}</ul>${operations.join('\n')}
<h3>Schemas</h3>${schemas}`;
};

const webSocketSection = (asyncApi: Json): string => {
  const channel = (asyncApi.channels as Record<string, Json>).connection as Json;
  const components = asyncApi.components as { messages: Record<string, Json>; schemas: Record<string, Json> };
  const description = String(channel.description)
    .split('\n')
    .map((line) =>
      line.startsWith('- ')
        ? `<li>${prose(line.slice(2))}</li>`
        : `<p>${prose(line).replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')}</p>`,
    )
    .join('');
  const messages = Object.values(components.messages)
    .map((message) => {
      const payload = message.payload as Json;
      const schema =
        typeof payload.$ref === 'string' ? (components.schemas[refName(payload.$ref)] ?? {}) : payload;
      return `<section id="${anchor('frame', String(message.name))}" class="op"><h3><code>${escapeHtml(message.name)}</code> <small>${escapeHtml(String(message.title).replace(/^\S+ /, ''))}</small></h3>
<p>${prose(message.summary)}</p>${schema.properties ? `<table><tr><th>field</th><th>type</th><th>notes</th></tr>${fieldRows(schema, 'frame-schema')}</table>` : ''}</section>`;
    })
    .join('\n');
  return `<h2 id="websocket">WebSocket API <small>AsyncAPI ${escapeHtml(asyncApi.asyncapi)}</small></h2>
<p>${prose((asyncApi.info as Json).description)}</p>${description.replace(/(<li>.*?<\/li>)+/g, (items) => `<ul>${items}</ul>`)}
<h3>Frames</h3>${messages}`;
};

export const renderHtml = (openApi: Json, asyncApi: Json): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Notify API reference</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:0 .2em;border-radius:3px}
table{border-collapse:collapse;margin:.5rem 0;width:100%}td,th{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}.op{border-top:1px solid #d0d7de;margin-top:1.5rem}.method{font-weight:700;color:#0550ae}small{color:#57606a}
</style></head><body>
<h1>Notify API reference</h1>
<p>Generated by <code>npm run api-docs</code> from <code>docs/api/openapi.json</code> and <code>docs/api/asyncapi.json</code>; the rules in full are in <code>docs/contract.md</code>. Contents: <a href="#rest">REST</a>, <a href="#websocket">WebSocket</a>.</p>
${restSection(openApi)}
${webSocketSection(asyncApi)}
</body></html>
`;
