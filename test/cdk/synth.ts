/** Builds NotifyStacks for the CDK tests, each configuration once per test file, and hands out their templates. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { parseStageConfig, type StageSettings } from '../../lib/config/stage-config';
import { NotifyStack } from '../../lib/notify-stack';
import { repoRoot } from '../../lib/paths';
import { wiring as declaredWiring, type Wiring } from '../../lib/wiring';

export interface SynthesizedStack {
  readonly app: App;
  readonly stack: NotifyStack;
  /** The parent with the area stacks' functions merged in (flattenFunctionStacks): the stage's resources. */
  readonly template: Template;
  /** The parent template alone. */
  readonly parentTemplate: Template;
}

type Json = unknown;
interface TemplateJson {
  Resources: Record<string, { Type: string; Properties?: Record<string, Json> }>;
  Parameters?: Record<string, Json>;
  Outputs?: Record<string, { Value: Json }>;
}

const mapDeep = (value: Json, replace: (node: Record<string, Json>) => Json | undefined): Json => {
  if (Array.isArray(value)) return value.map((item) => mapDeep(item, replace));
  if (value === null || typeof value !== 'object') return value;
  const node = value as Record<string, Json>;
  const replaced = replace(node);
  if (replaced !== undefined) return replaced;
  return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, mapDeep(item, replace)]));
};

/**
 * The parent template with the resources of every area's function stack merged in, and each reference between
 * them (a nested stack's parameter, a nested stack's output) replaced by the value it carries: the template the
 * stage would be as one stack, so tests state what each function is and gets wherever it lives. The monitoring
 * stack stays nested (operations.test.ts reads it on its own).
 */
export const flattenFunctionStacks = (stack: NotifyStack): Template => {
  const parent = Template.fromStack(stack).toJSON() as TemplateJson;
  const nested = new Map(
    [...stack.functionStacks.values()].map((nestedStack) => [
      stack.getLogicalId(nestedStack.nestedStackResource as CfnElement),
      Template.fromStack(nestedStack).toJSON() as TemplateJson,
    ]),
  );
  const inParent = (value: Json): Json =>
    mapDeep(value, (node) => {
      const getAtt = node['Fn::GetAtt'] as [string, string] | undefined;
      const template = getAtt && nested.get(getAtt[0]);
      if (!getAtt || !template || !getAtt[1].startsWith('Outputs.')) return undefined;
      return inNested(getAtt[0], template.Outputs?.[getAtt[1].slice('Outputs.'.length)]?.Value);
    });
  const inNested = (resourceId: string, value: Json): Json =>
    mapDeep(value, (node) => {
      const parameters = parent.Resources[resourceId]?.Properties?.Parameters as Record<string, Json>;
      const ref = node.Ref;
      if (typeof ref !== 'string' || !(ref in (parameters ?? {}))) return undefined;
      return inParent(parameters[ref]);
    });
  const resources: TemplateJson['Resources'] = {};
  for (const [id, resource] of Object.entries(parent.Resources)) {
    if (nested.has(id)) continue;
    resources[id] = inParent(resource) as TemplateJson['Resources'][string];
  }
  for (const [resourceId, template] of nested) {
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (id in resources) throw new Error(`logical id ${id} is in two templates`);
      resources[id] = inNested(resourceId, resource) as TemplateJson['Resources'][string];
    }
  }
  return Template.fromJSON({ ...parent, Resources: resources, Outputs: inParent(parent.Outputs) });
};

/**
 * An app for tests that read templates. Without bundling: esbuild runs once per function (dozens), which is what
 * `npm run synth` checks; handler files must still exist (NodejsFunction refuses a missing entry while the stack is
 * built). Without aws-cdk-lib's built-in CloudFormation validation: its engine (WebAssembly) costs more CPU than
 * the rest of a synth, and `npm run lint:cfn` (that validation, then cfn-lint) and `npm run synth` validate.
 */
export const testApp = (context: Record<string, unknown> = {}): App =>
  new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [], ...context } });

/** Stacks synthesized in this process, by wiring, then by settings (as JSON). */
const synthesized = new WeakMap<Wiring, Map<string, SynthesizedStack>>();

/**
 * A NotifyStack of `settings` (and `wiring`, else the project's) in a `testApp`, with its templates. Synthesized
 * once per test file for the same settings and wiring (a synth is the most of a CDK test's CPU): callers share the
 * result and must not add to its stack.
 */
export const synthesize = (settings: StageSettings, wiring: Wiring = declaredWiring): SynthesizedStack => {
  const bySettings = synthesized.get(wiring) ?? new Map<string, SynthesizedStack>();
  synthesized.set(wiring, bySettings);
  const key = JSON.stringify(settings);
  const known = bySettings.get(key);
  if (known) return known;
  const app = testApp();
  const stack = new NotifyStack(app, `notify-test-${settings.stage}`, { settings, wiring });
  const synth = {
    app,
    stack,
    template: flattenFunctionStacks(stack),
    parentTemplate: Template.fromStack(stack),
  };
  bySettings.set(key, synth);
  return synth;
};

/**
 * The settings of a development stage: HS256 key generated in Secrets Manager, tracing on, data destroyed,
 * no alarm destination.
 */
export const devSettings = (): StageSettings =>
  parseStageConfig(
    'devtest',
    {
      development: true,
      log_level: 'DEBUG',
      log_retention_days: 7,
      removal_policy: 'destroy',
      tracing: true,
      archive_retention_days: 3,
      throttling: {
        http: { rate_limit: 50, burst_limit: 100 },
        websocket: { rate_limit: 20, burst_limit: 40 },
      },
      auth: {
        issuer: 'https://issuer.test/',
        audience: 'notify',
        service_audience: 'notify.s2s',
        hs256_secret: { secrets_manager: 'generate' },
      },
    },
    'test settings',
  );

/**
 * The settings of a production-like stage: JWKS only, data retained, archive kept indefinitely, alarms to an
 * e-mail topic of the stack and to an existing topic. `extra` adds or replaces top-level keys of the file.
 */
export const prodSettings = (extra: Record<string, unknown> = {}): StageSettings =>
  parseStageConfig(
    'prodtest',
    {
      development: false,
      region: 'eu-west-1',
      log_level: 'INFO',
      log_retention_days: 90,
      removal_policy: 'retain',
      tracing: true,
      archive_retention_days: 0,
      throttling: {
        http: { rate_limit: 1000, burst_limit: 2000 },
        websocket: { rate_limit: 500, burst_limit: 1000 },
      },
      alarms: { email: 'ops@example.test', topic_arn: 'arn:aws:sns:eu-west-1:123456789012:paging' },
      auth: {
        issuer: 'https://idp.test/',
        audience: 'notify',
        service_audience: 'notify.s2s',
        jwks_url: 'https://idp.test/.well-known/jwks.json',
        jwks_cache_ttl: '10m',
        clock_skew_secs: 10,
        admin_role: 'ops',
        replay_protection: 'service',
      },
      ...extra,
    },
    'test settings',
  );

/**
 * A stage file for `-c config=…`: the checked-in `fixture` (repository-relative) with top-level keys replaced
 * (`undefined` removes one), written to a temporary directory. Returns its absolute path.
 */
export const stageFileFrom = (fixture: string, changes: Record<string, unknown>): string => {
  const settings = { ...JSON.parse(readFileSync(join(repoRoot, fixture), 'utf8')), ...changes };
  const file = join(mkdtempSync(join(tmpdir(), 'notify-stage-')), 'stage.json');
  writeFileSync(file, JSON.stringify(settings));
  return file;
};
