import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { Parser } from '@asyncapi/parser';
import { createConfig, lint } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { buildApiDocuments } from '../../api-docs/documents';
import { CLIENT_FRAMES } from '../../lambdas/domain/realtime/client-frames';
import { SERVER_FRAMES } from '../../lambdas/domain/realtime/server-frames';
import { repoRoot } from '../../lib/paths';
import { DEFAULT_ROUTE_PATH, wiring } from '../../lib/wiring';

const committed = (file: string) => readFile(join(repoRoot, file), 'utf8');
const OPENAPI = 'docs/api/openapi.json';
const ASYNCAPI = 'docs/api/asyncapi.json';
const OPENAPI_MODULE = 'lambdas/handlers/http/openapi-document.ts';

/** The document a generated openapi-document.ts embeds (brotli, base64 in a string literal), decompressed. */
const embeddedDocument = (module: string): string => {
  const base64 = /'([A-Za-z0-9+/=]+)'/.exec(module)?.[1];
  if (!base64) throw new Error(`${OPENAPI_MODULE}: no embedded document found`);
  return brotliDecompressSync(Buffer.from(base64, 'base64')).toString('utf8');
};

describe('API documents (docs/api/)', () => {
  it('are up to date with the code (else: npm run api-docs)', async () => {
    const generated = await buildApiDocuments();
    expect(Object.keys(generated).sort()).toEqual([
      'client/src/generated/wire.ts',
      ASYNCAPI,
      'docs/api/index.html',
      OPENAPI,
      OPENAPI_MODULE,
    ]);
    for (const [file, content] of Object.entries(generated)) {
      // The embedded document is compared decompressed: brotli's bytes may differ between zlib versions.
      const comparable = file === OPENAPI_MODULE ? embeddedDocument : (text: string) => text;
      expect(comparable(await committed(file)), `${file} is stale: run npm run api-docs`).toBe(
        comparable(content),
      );
    }
  });

  it('OpenAPI passes Redocly’s recommended-strict rules', async () => {
    const config = await createConfig({ extends: ['recommended-strict'] });
    const problems = await lint({ ref: join(repoRoot, OPENAPI), config });
    expect(problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
  });

  it('OpenAPI describes every declared route with its method, path and access', async () => {
    const document = JSON.parse(await committed(OPENAPI)) as {
      paths: Record<string, Record<string, { operationId: string; security: Record<string, string[]>[] }>>;
    };
    for (const route of wiring.httpRoutes) {
      if (route.path === DEFAULT_ROUTE_PATH) continue;
      const operation = document.paths[route.path]?.[route.method.toLowerCase()];
      expect(operation?.operationId, `${route.method} ${route.path}`).toBe(route.id);
      const access = route.access;
      if ('public' in access) expect(operation?.security).toEqual([]);
      else if (access.services && access.services !== 'any')
        expect(operation?.security).toContainEqual({ serviceBearer: [access.services] });
    }
  });

  it('AsyncAPI parses and validates with @asyncapi/parser, without errors or warnings', async () => {
    const { document, diagnostics } = await new Parser().parse(await committed(ASYNCAPI));
    // Severity 0 = error, 1 = warning (2 = information: e.g. that AsyncAPI 3.1 exists).
    expect(diagnostics.filter((diagnostic) => diagnostic.severity <= 1)).toEqual([]);
    const names = document
      ?.messages()
      .all()
      .map((message) => message.name());
    expect(names).toEqual(
      expect.arrayContaining([...Object.keys(CLIENT_FRAMES), ...Object.keys(SERVER_FRAMES)]),
    );
  });
});
