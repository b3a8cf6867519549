import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/lambda/runner';

/** The supported Node versions: one range in package.json `engines`, stated as is in the README, met by CI. */
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

type Version = [number, number, number];
const parse = (text: string): Version => text.replace(/^v/, '').split('.').map(Number) as Version;
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** `^x.y.z` (same major, at least x.y.z) and `>=x.y.z`, joined by `||`: the forms `engines` uses here. */
const satisfies = (version: string, range: string): boolean =>
  range.split('||').some((part) => {
    const match = /^\s*(\^|>=)(\d+\.\d+\.\d+)\s*$/.exec(part);
    if (!match) throw new Error(`unsupported range part "${part}"`);
    const [, operator, bound] = match as unknown as [string, string, string];
    const have = parse(version);
    const min = parse(bound);
    return compare(have, min) >= 0 && (operator === '>=' || have[0] === min[0]);
  });

describe('supported Node versions', () => {
  it('are stated in the README exactly as in engines', () => {
    expect(readme).toContain(`\`engines\`: \`${pkg.engines.node}\``);
  });

  it("include the Node running the tests, and Lambda's nodejs24.x, but not odd or older releases", () => {
    expect(satisfies(process.version, pkg.engines.node)).toBe(true);
    for (const version of ['24.0.0', '22.12.0', '20.19.0'])
      expect(satisfies(version, pkg.engines.node), version).toBe(true);
    for (const version of ['20.18.1', '21.7.0', '22.11.0', '23.5.0', '18.20.0']) {
      expect(satisfies(version, pkg.engines.node), version).toBe(false);
    }
  });

  it("silences the AWS SDK's Node-version warning with the variable local/sdk-env.ts sets", async () => {
    // A process that builds an SDK client, as `npm start` does, with no variable from vitest.config.ts.
    const env = { ...process.env };
    delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
    const clientBuilt = (preamble: string) =>
      promisify(execFile)(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `${preamble} const { SQSClient } = await import('@aws-sdk/client-sqs'); new SQSClient({ region: 'us-east-1' });`,
        ],
        { cwd: REPO_ROOT, env, encoding: 'utf8' },
      );
    expect((await clientBuilt("await import('./local/sdk-env.ts');")).stderr).not.toContain(
      'NodeVersionSupport',
    );
    // Without it the installed SDK does warn on Node < 22: the variable is the one it reads.
    const unsilenced = await clientBuilt('');
    if (Number(process.versions.node.split('.')[0]) < 22) {
      expect(unsilenced.stderr).toContain('NodeVersionSupportWarning');
    }
  });
});
