import type { App } from 'aws-cdk-lib';
import { loadStageConfig } from './config/stage-config';
import { NotifyStack } from './notify-stack';
import type { Wiring } from './wiring';

export const DEFAULT_STAGE = 'dev';

/** Stack name of a stage: one stack per stage, side by side in one account if need be. */
export const stackName = (stage: string): string => `notify-${stage}`;

/**
 * Adds the stage's stack to `app`. The stage comes from context `stage` (`-c stage=prod`, default dev), its
 * settings from config/<stage>.json, or from the file named by context `config` (`-c config=path.json`).
 * Throws StageConfigError before any stack exists when the settings are invalid.
 */
export const addNotifyStack = (app: App, options: { readonly wiring?: Wiring } = {}): NotifyStack => {
  const stage = String(app.node.tryGetContext('stage') ?? DEFAULT_STAGE);
  const configFile = app.node.tryGetContext('config') as string | undefined;
  const settings = loadStageConfig(stage, configFile);
  return new NotifyStack(app, stackName(stage), {
    settings,
    wiring: options.wiring,
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
};
