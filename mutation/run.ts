/**
 * `npm run mutate` mutates every target of mutation/targets.ts, one after the other; `npm run mutate -- verifier
 * feed` only those. Each target runs in a process of its own (Stryker is not meant to run twice in one), with
 * one test runner (the machine is shared), and fails when its score is under its bar. Reports go to
 * reports/mutation/<target>.html; docs/testing.md keeps the scores.
 */
import { spawnSync } from 'node:child_process';
import type { MutantResult } from '@stryker-mutator/api/core';
import { Stryker } from '@stryker-mutator/core';
import { isTargetName, type TargetName, targets } from './targets';

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** Stryker's mutation score: detected over detected plus undetected (ignored and invalid mutants left out). */
const scoreOf = (results: readonly MutantResult[]) => {
  const detected = results.filter((mutant) => DETECTED.has(mutant.status)).length;
  const undetected = results.filter((mutant) => UNDETECTED.has(mutant.status)).length;
  const total = detected + undetected;
  return { detected, total, score: total === 0 ? 100 : (100 * detected) / total };
};

const mutateOne = async (name: TargetName): Promise<boolean> => {
  const target = targets[name];
  process.env.MUTATION_TARGET = name;
  const started = Date.now();
  const results = await new Stryker({
    mutate: [...target.mutate],
    testRunner: 'vitest',
    plugins: ['@stryker-mutator/vitest-runner'],
    vitest: { configFile: 'mutation/vitest.config.ts', related: false },
    coverageAnalysis: 'perTest',
    concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
    reporters: ['clear-text', 'progress', 'html', 'json'],
    htmlReporter: { fileName: `reports/mutation/${name}.html` },
    jsonReporter: { fileName: `reports/mutation/${name}.json` },
    // Stryker rewrites the tsconfig's relative paths with the `typescript` package's API, which TypeScript 7 no
    // longer has; ours has none to rewrite, so it is left out of that step.
    tsconfigFile: 'mutation/no-tsconfig-rewrite.json',
    tempDirName: '.stryker-tmp',
    cleanTempDir: 'always',
    // The suites start servers and DynamoDB Local: a slow machine needs room before a mutant counts as a hang.
    timeoutMS: 30_000,
    thresholds: { high: target.bar, low: target.bar, break: null },
  }).runMutationTest();
  const { detected, total, score } = scoreOf(results);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const passed = score >= target.bar;
  console.log(
    `mutation ${name}: ${score.toFixed(2)} % (${detected}/${total} detected, bar ${target.bar} %) in ${minutes} min` +
      (passed ? '' : ' — UNDER THE BAR'),
  );
  return passed;
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !isTargetName(name));
if (unknown.length > 0) {
  console.error(`unknown target(s): ${unknown.join(', ')}; targets: ${Object.keys(targets).join(', ')}`);
  process.exit(2);
}
const names = (requested.length > 0 ? requested : Object.keys(targets)) as TargetName[];

if (names.length === 1) {
  process.exitCode = (await mutateOne(names[0] as TargetName)) ? 0 : 1;
} else {
  const failed = names.filter(
    (name) =>
      spawnSync(process.execPath, [...process.execArgv, process.argv[1] as string, name], {
        stdio: 'inherit',
      }).status !== 0,
  );
  if (failed.length > 0) console.error(`under the bar or failed: ${failed.join(', ')}`);
  process.exitCode = failed.length > 0 ? 1 : 0;
}
