import base from '../vitest.config.ts';
import { isTargetName, type MutationTarget, targets } from './targets.ts';

// Stryker's vitest runner loads this config; mutation/run.ts names the target in MUTATION_TARGET.
const name = process.env.MUTATION_TARGET ?? '';
if (!isTargetName(name))
  throw new Error(`MUTATION_TARGET must name a target of mutation/targets.ts, got "${name}"`);

const target: MutationTarget = targets[name];

export default {
  ...base,
  root: new URL('..', import.meta.url).pathname,
  // Replaces the suite's include (mergeConfig would append to it).
  test: {
    ...base.test,
    include: [...targets[name].tests, 'mutation/module-loads.test.ts'],
    // Stryker runs, for each mutant, the tests that reached it in its first run: a test left out there is
    // left out for good.
    ...(target.skip ? { testNamePattern: new RegExp(`^(?!.*(?:${target.skip.source}))`) } : {}),
  },
};
