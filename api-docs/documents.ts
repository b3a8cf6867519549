import { buildAsyncApi } from './asyncapi';
import { renderClientTypes } from './client-types';
import { renderHtml } from './html';
import { buildOpenApi } from './openapi';

const json = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

/** Every generated file, by path from the repository root, with its exact content. */
export const buildApiDocuments = async (): Promise<Record<string, string>> => {
  const openApi = await buildOpenApi();
  const asyncApi = buildAsyncApi();
  return {
    'docs/api/openapi.json': json(openApi),
    'docs/api/asyncapi.json': json(asyncApi),
    'docs/api/index.html': renderHtml(openApi, asyncApi),
    'client/src/generated/wire.ts': renderClientTypes(openApi, asyncApi),
  };
};
