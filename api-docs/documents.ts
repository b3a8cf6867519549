import { buildAsyncApi } from './asyncapi';
import { buildOpenApi } from './openapi';

const json = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

/** Every generated file, by path from the repository root, with its exact content. */
export const buildApiDocuments = async (): Promise<Record<string, string>> => ({
  'docs/api/openapi.json': json(await buildOpenApi()),
  'docs/api/asyncapi.json': json(buildAsyncApi()),
});
