/**
 * `npm run api-docs`: writes docs/api/openapi.json and docs/api/asyncapi.json from the code.
 * `npm run api-docs -- --check`: exits 1 when a committed document differs from what the code gives.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot } from '../lib/paths';
import { buildApiDocuments } from './documents';

const check = process.argv.includes('--check');
let stale = 0;
for (const [file, content] of Object.entries(await buildApiDocuments())) {
  const path = join(repoRoot, file);
  const committed = await readFile(path, 'utf8').catch(() => '');
  if (committed === content) continue;
  if (check) {
    stale += 1;
    console.error(`${file} is stale: run npm run api-docs`);
  } else {
    await writeFile(path, content);
    console.log(`wrote ${file}`);
  }
}
process.exitCode = stale ? 1 : 0;
