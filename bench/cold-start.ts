import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { LAMBDA_ESBUILD_OPTIONS } from '../lib/constructs/bundling';
import { envNames, type FunctionSpec, wiring } from '../lib/wiring';

/** The repository root; handler paths in the declaration are relative to it. */
const REPO_ROOT = resolve(import.meta.dirname, '..');
/** Outside the repository, so that no linter or test runner walks the minified bundles. */
const OUT_DIR = join(tmpdir(), 'notify-bench-bundles');

export interface ColdStart {
  readonly functionId: string;
  readonly handler: string;
  readonly memoryMb: number;
  /** Minified bundle, as the stack ships it (source map not counted: it is not loaded without a stack trace). */
  readonly bundleKiB: number;
  /** Median, over the runs, of the wall time of importing the bundle in a fresh `node` minus that run's bare `node` start. */
  readonly initMs: number;
  /** Median time of the `import()` itself, timed inside that process (less noise from process start-up). */
  readonly importMs: number;
  /**
   * The floor: an empty handler that imports and creates only what this bundle carries of the SDK clients
   * (with the DynamoDB document client), jose and the logger, built and timed the same way.
   */
  readonly floor: {
    /** The packages the floor imports. */
    readonly clients: readonly string[];
    readonly bundleKiB: number;
    readonly initMs: number;
  };
  /** The largest contributors to the bundle, by package (or first-party folder), in KiB. */
  readonly largestInputs: readonly { readonly name: string; readonly kib: number }[];
  readonly aboveFloor: AboveFloor;
  /** The bundle and the init judged by the bundle goal (COLD_START_GOAL). */
  readonly goal: { readonly bundle: GoalVerdict; readonly init: GoalVerdict };
}

/**
 * The bundle goal: every bundle ≤ 300 KiB, or ≤ 1.3 × its floor's; init ≤ 60 ms, or ≤ 1.25 × its floor's init
 * measured in the same run. The init is also judged as a ratio because absolute times move with the machine.
 */
export const COLD_START_GOAL = {
  maxBundleKiB: 300,
  bundleFloorFactor: 1.3,
  maxInitMs: 60,
  initFloorFactor: 1.25,
} as const;

/**
 * What a bundle carries above its floor, in KiB, by what esbuild's metafile says each input put in the output:
 * zod (validation), the repository's own modules, and the other libraries (middy, uuid, and the SDK commands and
 * error classes beyond what the floor's clients bring). Each is the bundle's part minus the floor's.
 */
export interface AboveFloor {
  readonly zod: number;
  readonly ownCode: number;
  readonly libraries: number;
}

/** `met`: within the absolute limit; `floor`: above it, but within the factor of the floor; `over`: neither. */
export type GoalVerdict = 'met' | 'floor' | 'over';

export const goalVerdict = (value: number, limit: number, floor: number, floorFactor: number): GoalVerdict =>
  value <= limit ? 'met' : value <= floor * floorFactor ? 'floor' : 'over';

/** The bundle goal in words, as the bench prints it. */
export const describeGoal = (goal: typeof COLD_START_GOAL): string =>
  `bundle ≤ ${goal.maxBundleKiB} KiB or ≤ ${goal.bundleFloorFactor} × its floor (SDK clients + jose + logger); ` +
  `init ≤ ${goal.maxInitMs} ms or ≤ ${goal.initFloorFactor} × its floor's init in the same run`;

export interface ColdStartReport {
  readonly nodeVersion: string;
  readonly runs: number;
  /** Median wall time of a bare `node` start, over every run. */
  readonly bareNodeMs: number;
  readonly goal: typeof COLD_START_GOAL;
  readonly functions: readonly ColdStart[];
}

/** Every declared function, by the id the local runtime (and the stack) know it under. */
const declaredFunctions = (): { id: string; spec: FunctionSpec }[] => [
  ...wiring.httpRoutes.map((route) => ({ id: route.id, spec: route })),
  ...wiring.webSocketRoutes.map((route) => ({ id: `ws.${route.routeKey}`, spec: route })),
  ...wiring.workers.map((worker) => ({ id: worker.id, spec: worker })),
  ...(wiring.busFunctions ?? []).map((fn) => ({ id: fn.id, spec: fn })),
  ...wiring.recurringSchedules.map((schedule) => ({ id: schedule.id, spec: schedule })),
];

/** The environment a deployed function finds (names from common/env.ts, values shaped like AWS's). */
const functionEnv = (): Record<string, string> => {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    POWERTOOLS_SERVICE_NAME: 'notify',
    POWERTOOLS_METRICS_NAMESPACE: 'Notify',
    LOG_LEVEL: 'WARN',
    [envNames.busName]: 'notify-bench',
    [envNames.wsCallbackUrl]: 'https://example.execute-api.us-east-1.amazonaws.com/prod',
    [envNames.schedulerRoleArn]: 'arn:aws:iam::000000000000:role/bench',
    [envNames.scheduleGroup]: 'notify-bench',
    [envNames.stage]: 'bench',
    SERVICE__AUTH__HS256_SECRET: 'bench-secret-bench-secret-bench-secret',
    SERVICE__AUTH__ISSUER: 'https://issuer.example',
    SERVICE__AUTH__AUDIENCE: 'notify',
    SERVICE__AUTH__SERVICE_AUDIENCE: 'notify.s2s',
  };
  for (const table of wiring.tables) env[envNames.tableName(table.id)] = `notify-${table.id}`;
  for (const queue of wiring.queues) {
    env[envNames.queueUrl(queue.id)] = `https://sqs.us-east-1.amazonaws.com/000000000000/${queue.id}`;
    env[envNames.queueArn(queue.id)] = `arn:aws:sqs:us-east-1:000000000000:${queue.id}`;
  }
  return env;
};

const fileName = (id: string) => id.replace(/[^\w.-]/g, '_');

/** A package name (or first-party folder) for a metafile input path. */
const packageOf = (input: string): string => {
  const modules = input.lastIndexOf('node_modules/');
  if (modules < 0) return input.split('/').slice(0, 2).join('/');
  const rest = input.slice(modules + 'node_modules/'.length).split('/');
  return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? input);
};

/** esbuild's record of one output file (paths in the metafile are relative to the working directory). */
const outputOf = (metafile: Metafile, outFile: string) =>
  Object.entries(metafile.outputs).find(([path]) => resolve(process.cwd(), path) === outFile)?.[1];

const largestInputs = (metafile: Metafile, outFile: string) => {
  const output = outputOf(metafile, outFile);
  const byPackage = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    byPackage.set(packageOf(input), (byPackage.get(packageOf(input)) ?? 0) + bytesInOutput);
  }
  return [...byPackage]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([name, bytes]) => ({ name, kib: Math.round(bytes / 102.4) / 10 }));
};

type Part = keyof AboveFloor;

/** Which part of AboveFloor an input is (floor sources, outside the repository, count as nothing). */
const partOf = (input: string): Part | undefined => {
  if (input.includes('/floor-src/')) return undefined;
  if (!input.includes('node_modules/')) return 'ownCode';
  return packageOf(input) === 'zod' ? 'zod' : 'libraries';
};

const partsOf = (metafile: Metafile, outFile: string): Record<Part, number> => {
  const parts: Record<Part, number> = { zod: 0, ownCode: 0, libraries: 0 };
  for (const [input, { bytesInOutput }] of Object.entries(outputOf(metafile, outFile)?.inputs ?? {})) {
    const part = partOf(input);
    if (part) parts[part] += bytesInOutput;
  }
  return parts;
};

const aboveFloorOf = (bundle: Record<Part, number>, floor: Record<Part, number>): AboveFloor => {
  const kib = (part: Part) => Math.round((bundle[part] - floor[part]) / 102.4) / 10;
  return { zod: kib('zod'), ownCode: kib('ownCode'), libraries: kib('libraries') };
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** Runs `node -e script`; returns the wall time and the number the script printed (if any). */
const timeNode = (
  node: string,
  script: string,
  env: Record<string, string>,
): { wallMs: number; printed: number } => {
  const started = performance.now();
  const run = spawnSync(node, ['--input-type=module', '-e', script], { env, encoding: 'utf8' });
  const wallMs = performance.now() - started;
  if (run.status !== 0) throw new Error(`node exited ${run.status}: ${run.stderr.slice(0, 500)}`);
  return { wallMs, printed: Number.parseFloat(run.stdout) };
};

/** A function's bundle and its floor's, built as the stack builds them (measureBundles). */
export interface BundleSize {
  readonly functionId: string;
  readonly handler: string;
  readonly memoryMb: number;
  /** The minified bundle and its floor's, as files (to time), and their sizes in KiB. */
  readonly file: string;
  readonly bundleKiB: number;
  readonly floor: { readonly clients: readonly string[]; readonly file: string; readonly bundleKiB: number };
  readonly largestInputs: readonly { readonly name: string; readonly kib: number }[];
  readonly aboveFloor: AboveFloor;
  /** The size judged by the bundle goal. */
  readonly verdict: GoalVerdict;
}

/**
 * Bundles every function with the options of lib/constructs/notify-function.ts (NodejsFunction: esbuild,
 * minified, ESM, node24 target, main fields module/main, source maps without sources, the createRequire
 * banner, nothing external, the same aliases) and its floor, into `outDir`, and judges each size by the goal.
 */
export const measureBundles = async (outDir: string): Promise<BundleSize[]> => {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const functions = declaredFunctions();
  const entryPoints = Object.fromEntries(
    functions.map(({ id, spec }) => [fileName(id), resolve(REPO_ROOT, spec.handler)]),
  );
  const { metafile } = await bundle(entryPoints, outDir);
  const { floors, metafile: floorMetafile } = await buildFloors(
    functions.map(({ id }) => id),
    metafile,
    outDir,
  );
  const kib = (file: string) => Math.round(statSync(file).size / 102.4) / 10;
  return functions.map(({ id, spec }) => {
    const file = join(outDir, `${fileName(id)}.mjs`);
    const { clients, file: floorFile } = floors.get(id) ?? { clients: [], file: '(none)' };
    const floor = { clients, file: floorFile, bundleKiB: kib(floorFile) };
    const bundleKiB = kib(file);
    return {
      functionId: id,
      handler: spec.handler,
      memoryMb: spec.memoryMb ?? 256,
      file,
      bundleKiB,
      floor,
      largestInputs: largestInputs(metafile, file),
      aboveFloor: aboveFloorOf(partsOf(metafile, file), partsOf(floorMetafile, floorFile)),
      verdict: goalVerdict(
        bundleKiB,
        COLD_START_GOAL.maxBundleKiB,
        floor.bundleKiB,
        COLD_START_GOAL.bundleFloorFactor,
      ),
    };
  });
};

/** Every function's bundle (measureBundles), each cold import timed in a fresh Node process, as its floor's. */
export const measureColdStarts = async (options: {
  runs: number;
  /** The node binary to time the imports with (`--node=PATH`, e.g. Node 24 as Lambda runs); default this one. */
  node?: string;
}): Promise<ColdStartReport> => {
  const node = options.node ?? process.execPath;
  const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (!nodeVersion) throw new Error(`cold start: ${node} --version printed nothing`);
  const bundles = await measureBundles(OUT_DIR);
  const env = functionEnv();
  /** One cold import of a bundle in a fresh node: its wall time and the `import()` timed inside the process. */
  const importOnce = (outFile: string) =>
    timeNode(
      node,
      'const started = performance.now();' +
        `await import(${JSON.stringify(pathToFileURL(outFile).href)});` +
        'process.stdout.write(String(performance.now() - started));',
      env,
    );
  const bareRuns: number[] = [];
  const results: ColdStart[] = [];
  for (const measured of bundles) {
    // A bare node start, the function's import and its floor's, one after the other in each run: the three meet
    // the same load, and the init rule compares the function's with its floor's.
    const runs: { bundle: number; floor: number; import: number }[] = [];
    for (let run = 0; run < options.runs; run++) {
      const bare = timeNode(node, '', env).wallMs;
      const timed = importOnce(measured.file);
      const floor = importOnce(measured.floor.file).wallMs;
      bareRuns.push(bare);
      runs.push({ bundle: timed.wallMs - bare, import: timed.printed, floor: floor - bare });
    }
    const initOf = (beyondBare: number[]) => Math.max(0, median(beyondBare));
    const timed = {
      initMs: initOf(runs.map((run) => run.bundle)),
      importMs: median(runs.map((run) => run.import)),
    };
    const floor = {
      clients: measured.floor.clients,
      bundleKiB: measured.floor.bundleKiB,
      initMs: initOf(runs.map((run) => run.floor)),
    };
    results.push({
      functionId: measured.functionId,
      handler: measured.handler,
      memoryMb: measured.memoryMb,
      bundleKiB: measured.bundleKiB,
      ...timed,
      floor,
      largestInputs: measured.largestInputs,
      aboveFloor: measured.aboveFloor,
      goal: {
        bundle: measured.verdict,
        init: goalVerdict(
          timed.initMs,
          COLD_START_GOAL.maxInitMs,
          floor.initMs,
          COLD_START_GOAL.initFloorFactor,
        ),
      },
    });
  }
  return {
    nodeVersion,
    runs: options.runs,
    bareNodeMs: median(bareRuns),
    goal: COLD_START_GOAL,
    functions: results,
  };
};

/** esbuild with the options of lib/constructs/notify-function.ts (see measureColdStarts). */
const bundle = (entryPoints: Record<string, string>, outdir: string, nodePaths: string[] = []) =>
  build({
    ...LAMBDA_ESBUILD_OPTIONS,
    entryPoints,
    nodePaths,
    outdir,
    outExtension: { '.js': '.mjs' },
    metafile: true,
    logLevel: 'error',
  });

/** The client class a `@aws-sdk/client-*` package exports (`export * from "./SQSClient"` in its index). */
const clientClassOf = (sdkPackage: string): string => {
  const index = readFileSync(resolve(REPO_ROOT, 'node_modules', sdkPackage, 'dist-es/index.js'), 'utf8');
  const name = /export \* from "\.\/(\w+Client)"/.exec(index)?.[1];
  if (!name) throw new Error(`cold start: no client class found in ${sdkPackage}`);
  return name;
};

/** What a floor imports of a package its function's bundle carries, and the value it makes of it. */
const FLOOR_IMPORTS: Readonly<
  Record<string, (alias: string) => { readonly line: string; readonly made: string }>
> = {
  '@aws-sdk/lib-dynamodb': () => ({
    line: "import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';",
    made: 'DynamoDBDocumentClient',
  }),
  jose: (alias) => ({
    line: `import { createRemoteJWKSet as ${alias}a, jwtVerify as ${alias}b } from 'jose';`,
    made: `${alias}a, ${alias}b`,
  }),
  '@aws-lambda-powertools/logger': (alias) => ({
    line: `import { Logger as ${alias} } from '@aws-lambda-powertools/logger';`,
    made: `new ${alias}()`,
  }),
};

const floorImport = (name: string, alias: string) =>
  FLOOR_IMPORTS[name]?.(alias) ?? {
    line: `import { ${clientClassOf(name)} as ${alias} } from '${name}';`,
    made: `new ${alias}({})`,
  };

/**
 * Writes and bundles one floor handler per set of packages (functions carrying the same ones share it); returns
 * each function's packages and floor file.
 */
const buildFloors = async (ids: readonly string[], metafile: Metafile, outDir: string) => {
  const sourceDir = join(outDir, 'floor-src');
  mkdirSync(sourceDir, { recursive: true });
  const floors = new Map<string, { clients: string[]; file: string }>();
  const entryPoints: Record<string, string> = {};
  const nameOfSet = new Map<string, string>();
  for (const id of ids) {
    const output = outputOf(metafile, join(outDir, `${fileName(id)}.mjs`));
    const packages = [...new Set(Object.keys(output?.inputs ?? {}).map(packageOf))]
      .filter((name) => name.startsWith('@aws-sdk/client-') || name in FLOOR_IMPORTS)
      .sort();
    const key = packages.join(' ');
    let name = nameOfSet.get(key);
    if (name === undefined) {
      name = fileName(id);
      nameOfSet.set(key, name);
      const imports = packages.map((item, index) => floorImport(item, `Floor${index}`));
      const source = join(sourceDir, `${name}.mjs`);
      writeFileSync(
        source,
        `${imports.map((item) => item.line).join('\n')}\n` +
          `export const handler = async () => [${imports.map((item) => item.made).join(', ')}].length;\n`,
      );
      entryPoints[name] = source;
    }
    floors.set(id, { clients: packages, file: join(outDir, 'floor', `${name}.mjs`) });
  }
  // The floor sources live outside the repository: their SDK imports resolve to its node_modules.
  const { metafile: floorMetafile } = await bundle(entryPoints, join(outDir, 'floor'), [
    join(REPO_ROOT, 'node_modules'),
  ]);
  return { floors, metafile: floorMetafile };
};
