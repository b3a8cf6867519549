/**
 * `npm run lint:cfn`: cfn-lint on the templates of the dev and prod stages, nested ones included. Any error
 * fails (exit 1); where cfn-lint is not installed it says it skipped and exits 0.
 *
 * The stacks are synthesized in this process without bundling the functions: cfn-lint reads templates only,
 * and the templates are those `cdk synth` writes but for the asset hashes. Accepted findings are silenced in
 * .cfnlintrc.yaml (whole rules) or in a resource's `cfn-lint` metadata (one resource), each with its reason.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App } from 'aws-cdk-lib';
import { addNotifyStacks } from '../lib/app';
import { repoRoot } from '../lib/paths';

/** The CDK CLI's region when none is configured; the prod stage needs one for its us-east-1 web ACL. */
const FALLBACK_REGION = 'us-east-1';
const region = process.env.CDK_DEFAULT_REGION ?? FALLBACK_REGION;

/**
 * config/prod.json refuses to synthesize until an operator sets a region and replaces its placeholders: the
 * lint fills them in with values of its own, and keeps everything else as shipped.
 */
const prodAsAnOperatorFillsItIn = (outdir: string): string => {
  const shipped = JSON.parse(readFileSync(path.join(repoRoot, 'config/prod.json'), 'utf8'));
  const file = path.join(outdir, 'prod-stage.json');
  writeFileSync(
    file,
    JSON.stringify({
      ...shipped,
      region,
      alarms: { ...shipped.alarms, email: 'oncall@notify.test' },
      cors: { ...shipped.cors, allowed_origins: ['https://app.notify.test'] },
      auth: {
        ...shipped.auth,
        issuer: 'https://login.notify.test/',
        jwks_url: 'https://login.notify.test/jwks',
      },
      // Push on, so the credentials' grants are linted too: one app with every provider (docs/push.md).
      push: {
        apps: {
          'com.notify.test': {
            fcm: { secret: 'notify/prod/push/fcm' },
            apns: { secret: 'notify/prod/push/apns' },
            webpush: { secret: 'notify/prod/push/webpush' },
            expo: {},
          },
        },
      },
    }),
  );
  return file;
};

const STAGES = {
  dev: () => undefined,
  prod: prodAsAnOperatorFillsItIn,
} as const satisfies Record<string, (outdir: string) => string | undefined>;

/** cfn-lint's exit code is a bit mask: 2 errors, 4 warnings, 8 informational; 1 is a failure of its own. */
const CFN_LINT_ERROR_BITS = 0b0011;

const version = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
if (version.error || version.status !== 0) {
  console.log('lint:cfn skipped: cfn-lint is not installed (pip install cfn-lint)');
  process.exit(0);
}

let failed = false;
for (const [stage, stageFile] of Object.entries(STAGES)) {
  const outdir = mkdtempSync(path.join(tmpdir(), `notify-cfn-lint-${stage}-`));
  try {
    const config = stageFile(outdir);
    const app = new App({
      outdir,
      context: { stage, ...(config ? { config } : {}), 'aws:cdk:bundling-stacks': [] },
    });
    addNotifyStacks(app, { env: { account: process.env.CDK_DEFAULT_ACCOUNT, region } });
    app.synth();
    const templates = readdirSync(outdir)
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => path.join(outdir, file));
    const result = spawnSync(
      'cfn-lint',
      ['--config-file', path.join(repoRoot, '.cfnlintrc.yaml'), '--regions', region, '--', ...templates],
      { encoding: 'utf8' },
    );
    const findings = `${result.stdout}${result.stderr}`.trim();
    const stageFailed = result.status === null || (result.status & CFN_LINT_ERROR_BITS) !== 0;
    console.log(
      `lint:cfn ${stage}: ${templates.length} templates (${version.stdout.trim()}): ` +
        (stageFailed ? 'errors' : findings ? 'warnings only' : 'clean'),
    );
    if (findings) console.log(findings.replaceAll(outdir + path.sep, ''));
    failed ||= stageFailed;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
process.exit(failed ? 1 : 0);
