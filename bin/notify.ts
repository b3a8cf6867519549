#!/usr/bin/env node
/**
 * The CDK app: `npx cdk synth|deploy [--all] [-c stage=dev|prod] [-c config=path/to/settings.json]`.
 * A stage with `waf` has two stacks (`notify-<stage>-edge` in us-east-1, then `notify-<stage>`): use `--all`.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { addNotifyStacks } from '../lib/app';
import { StageConfigError } from '../lib/config/stage-config';

// aws-cdk-lib announces every bundled asset ("Bundling asset notify-dev/…/Code/Stage..."), one line per function:
// dropped, so that `cdk synth -q` shows only what matters. esbuild's own warnings and errors still print.
const writeStderr = process.stderr.write.bind(process.stderr);
process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) =>
  typeof chunk === 'string' && /^Bundling asset \S+\.\.\.\n$/.test(chunk)
    ? true
    : writeStderr(chunk, ...rest)) as typeof process.stderr.write;

const app = new App();
try {
  addNotifyStacks(app);
} catch (error) {
  if (!(error instanceof StageConfigError)) throw error;
  // A settings mistake is the operator's to fix: say what is wrong, without a stack trace.
  console.error(`Notify: ${error.message}`);
  process.exit(1);
}
// Findings of the AWS Solutions pack fail the synth; accepted ones are acknowledged, with reasons, in lib/.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
app.synth();
