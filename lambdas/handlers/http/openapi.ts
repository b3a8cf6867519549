import { brotliDecompressSync } from 'node:zlib';
import { httpRoute } from '../../core/http/route';
import { OPENAPI_JSON_BROTLI_BASE64 } from './openapi-document';

/** Decompressed on the first request, then kept for the instance's life. */
let document: string | undefined;

/** GET /openapi.json: the committed description, as written by `npm run api-docs`. */
export const handler = httpRoute('platform.openapi', {}, async () => {
  document ??= brotliDecompressSync(Buffer.from(OPENAPI_JSON_BROTLI_BASE64, 'base64')).toString('utf8');
  return {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' },
    text: document,
  };
});
