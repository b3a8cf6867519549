import { expect, it } from 'vitest';
import { isTargetName, targets } from './targets';

/**
 * Runs with every target (mutation/vitest.config.ts). A mutant that makes a module throw while it loads (a
 * module-level call given a bad argument) fails every test file that imports the module, but Stryker's vitest
 * runner reads a file that failed to load as "no test failed" and reports the mutant as survived. Importing
 * the mutated modules inside a test turns that load failure into a failing test, as any real test would see it.
 */
const name = process.env.MUTATION_TARGET ?? '';
const files = isTargetName(name) ? targets[name].mutate.map((entry) => entry.split(':')[0] as string) : [];

it.each(files)('%s loads', async (file) => {
  await expect(import(/* @vite-ignore */ `../${file}`)).resolves.toBeDefined();
});
