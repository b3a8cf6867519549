import { type App, CrossStackReferences, ReferenceStrength, Token } from 'aws-cdk-lib';
import { certificateRegion, EDGE_REGION, loadStageConfig, StageConfigError } from './config/stage-config';
import { NotifyEdgeStack } from './edge-stack';
import { NotifyStack } from './notify-stack';
import type { Wiring } from './wiring';

export const DEFAULT_STAGE = 'dev';

/** Stack name of a stage: one stack per stage, side by side in one account if need be. */
export const stackName = (stage: string): string => `notify-${stage}`;

/** Stack name of a stage's web ACL (us-east-1), when the stage asks for a WAF the app creates. */
export const edgeStackName = (stage: string): string => `notify-${stage}-edge`;

export interface NotifyApp {
  readonly service: NotifyStack;
  /** Present when settings.waf asks the app to create the web ACL. */
  readonly edge: NotifyEdgeStack | undefined;
}

/**
 * Adds the stage's stacks to `app`. The stage comes from context `stage` (`-c stage=prod`, default dev), its
 * settings from config/<stage>.json, or from the file named by context `config` (`-c config=path.json`).
 * The stacks' account and region are the stage file's `account` / `region`, else `env` (default: the CLI's,
 * CDK_DEFAULT_*). Throws StageConfigError before any stack exists when the settings are invalid.
 */
export const addNotifyStacks = (
  app: App,
  options: { readonly wiring?: Wiring; readonly env?: { account?: string; region?: string } } = {},
): NotifyApp => {
  const stage = String(app.node.tryGetContext('stage') ?? DEFAULT_STAGE);
  const configFile = app.node.tryGetContext('config') as string | undefined;
  const settings = loadStageConfig(stage, configFile);
  // The stage file's region and account win: the CLI's (CDK_DEFAULT_*) may be a profile's or its us-east-1
  // fallback. Development stages without them go wherever the CLI points.
  const cliEnv = options.env ?? {
    account: process.env.CDK_DEFAULT_ACCOUNT,
    region: process.env.CDK_DEFAULT_REGION,
  };
  const env = { account: settings.account ?? cliEnv.account, region: settings.region ?? cliEnv.region };

  // Unresolved (a token) when the CLI knows no region: the checks below that need one cannot run.
  const region = env.region && !Token.isUnresolved(env.region) ? env.region : undefined;

  // API Gateway custom domains are regional: their certificates must be in the service's region.
  const regionalDomains = [
    ['domains.http', settings.waf ? undefined : settings.domains.http],
    ['domains.websocket', settings.domains.webSocket],
  ] as const;
  for (const [key, domain] of regionalDomains) {
    const certificateIn = domain && certificateRegion(domain.certificateArn);
    if (region && certificateIn && certificateIn !== region) {
      throw new StageConfigError(
        `stage "${stage}": ${key}.certificate_arn is in ${certificateIn}, but API Gateway ` +
          `needs a certificate in the service's region (${region}) for a regional custom domain.`,
      );
    }
  }

  const webAcl = settings.waf?.webAcl;
  let edge: NotifyEdgeStack | undefined;
  if (webAcl?.kind === 'create') {
    // A reference from one region to another needs both regions at synth time.
    if (!region) {
      throw new StageConfigError(
        `stage "${stage}": waf creates a web ACL in ${EDGE_REGION} that the service stack references, so the ` +
          'service\'s region must be known when synthesizing: set "region" in the stage file, or name an ' +
          'existing CLOUDFRONT web ACL in waf.web_acl_arn.',
      );
    }
    edge = new NotifyEdgeStack(app, edgeStackName(stage), {
      settings,
      webAcl,
      env: { account: env.account, region: EDGE_REGION },
    });
    // Read through Fn::GetStackOutput: no custom resources, and the web ACL stays replaceable (a strong
    // cross-region reference would pin it until the service stack stops using it).
    CrossStackReferences.of(edge.webAcl.webAcl).produce(ReferenceStrength.WEAK);
  }
  const service = new NotifyStack(app, stackName(stage), {
    settings,
    wiring: options.wiring,
    env,
    webAclArn: webAcl?.kind === 'existing' ? webAcl.arn : edge?.webAcl.webAcl.attrArn,
  });
  return { service, edge };
};
