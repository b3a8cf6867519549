import { fileURLToPath } from 'node:url';

/** Absolute path of the repository root; handler paths in the wiring declaration are relative to it. */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
