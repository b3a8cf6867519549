/**
 * The static check of what each function names: bundles each declared function's handler as the CDK does (esbuild,
 * tree-shaken, so only code the handler can reach is left) and lists the tables, queues and other resources
 * the bundle names, to compare with what the function declares.
 */
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { TABLE } from '../../lambdas/domain/realtime/tables';
import type { FunctionSpec, Wiring } from '../../lib/wiring';

export interface ResourceReferences {
  readonly tables: ReadonlySet<string>;
  readonly queueUrls: ReadonlySet<string>;
  readonly queueArns: ReadonlySet<string>;
  /** Other wired variables named through `envNames.<key>` (busName, wsCallbackUrl, …). */
  readonly variables: ReadonlySet<string>;
}

const realtimeTables = TABLE as Readonly<Record<string, string>>;

const all = (text: string, pattern: RegExp): string[] =>
  [...text.matchAll(pattern)].map((match) => match[1] as string);

/** What a bundle's text names: `tableName("x")`, `table("key")` and `TABLE.key` (realtime), `queueUrl("x")`, …. */
export const referencesIn = (code: string): ResourceReferences => ({
  tables: new Set([
    ...all(code, /\btableName\d*\("([^"]+)"\)/g),
    ...all(code, /\btable\d*\("([^"]+)"\)/g).map((key) => realtimeTables[key] ?? `TABLE.${key}`),
    ...all(code, /\bTABLE\d*\.(\w+)/g).map((key) => realtimeTables[key] ?? `TABLE.${key}`),
  ]),
  queueUrls: new Set(all(code, /\bqueueUrl\d*\("([^"]+)"\)/g)),
  queueArns: new Set(all(code, /\bqueueArn\d*\("([^"]+)"\)/g)),
  variables: new Set(
    all(
      code,
      /\benvNames\d*\.(busName|wsCallbackUrl|schedulerRoleArn|scheduleGroup|cursorKeySecretArn|cursorKey|webhookKmsKeyId)\b/g,
    ),
  ),
});

/** Bundles a handler module (repository-relative path) and returns what its reachable code names. */
export const handlerReferences = async (repoRoot: string, handler: string): Promise<ResourceReferences> => {
  const result = await build({
    entryPoints: [resolve(repoRoot, handler)],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    packages: 'external',
    treeShaking: true,
    minify: false,
    logLevel: 'silent',
  });
  return referencesIn(result.outputFiles.map((file) => file.text).join('\n'));
};

/** Every named resource the declaration does not give the function, as readable lines (empty: all declared). */
export const undeclaredReferences = (
  spec: FunctionSpec,
  references: ResourceReferences,
  wiring: Pick<Wiring, 'scheduleTargets'>,
): string[] => {
  const tables = new Set([...(spec.reads ?? []), ...(spec.writes ?? [])]);
  const sends = new Set(spec.sendsTo ?? []);
  const scheduleQueues = spec.schedules ? wiring.scheduleTargets.map((target) => target.targetQueue) : [];
  const allowedVariables = new Set([
    ...(spec.putsEvents ? ['busName'] : []),
    ...(spec.managesConnections ? ['wsCallbackUrl'] : []),
    ...(spec.schedules ? ['schedulerRoleArn', 'scheduleGroup'] : []),
    ...(spec.cursorKey ? ['cursorKeySecretArn', 'cursorKey'] : []),
    ...(spec.webhookSecretKey ? ['webhookKmsKeyId'] : []),
  ]);
  return [
    ...[...references.tables].filter((id) => !tables.has(id)).map((id) => `table ${id}`),
    ...[...references.queueUrls].filter((id) => !sends.has(id)).map((id) => `queue ${id} (send)`),
    ...[...references.queueArns]
      .filter((id) => !sends.has(id) && !scheduleQueues.includes(id))
      .map((id) => `queue ${id} (ARN)`),
    ...[...references.variables]
      .filter((name) => !allowedVariables.has(name))
      .map((name) => `envNames.${name}`),
  ];
};
