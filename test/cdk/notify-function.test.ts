/** The function construct's defaults, with real bundling by the local esbuild (one function: it is slow). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { NotifyFunction } from '../../lib/constructs/notify-function';
import { testApp } from './synth';

describe('NotifyFunction', () => {
  let template: Template;
  let assetDir: string;

  beforeAll(() => {
    // CDK announces each bundling on stderr itself; kept out of a green run's output and checked instead.
    const announced: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      announced.push(String(chunk));
      return true;
    });
    // Every stack bundled, as `cdk synth` does (a testApp skips bundling unless told).
    const app = testApp({ 'aws:cdk:bundling-stacks': ['**'] });
    const stack = new Stack(app, 'function-probe');
    let assembly: ReturnType<App['synth']>;
    try {
      // Bundled as it is constructed.
      new NotifyFunction(stack, 'Probe', {
        spec: { handler: 'test/cdk/fixtures/handler.ts', memoryMb: 384, timeoutSecs: 7 },
        description: 'probe',
        defaults: {
          stage: 'probe',
          logLevel: 'WARN',
          logRetentionDays: 14,
          removalPolicy: RemovalPolicy.DESTROY,
          tracing: false,
        },
        environment: { EXTRA: 'yes' },
      });
      assembly = app.synth();
    } finally {
      stderr.mockRestore();
    }
    expect(announced.join('')).toContain('Bundling asset function-probe/Probe');
    template = Template.fromStack(stack);
    const code = Object.values(template.findResources('AWS::Lambda::Function'))[0]?.Properties.Code as {
      S3Key: string;
    };
    assetDir = path.join(assembly.directory, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
  });

  it('runs Node.js 24 on arm64 with the declared size and the Powertools settings', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 384,
      Timeout: 7,
      // Tracing off = PassThrough: a trace sampled upstream continues, nothing is sampled here.
      TracingConfig: { Mode: 'PassThrough' },
      Environment: {
        Variables: {
          POWERTOOLS_SERVICE_NAME: 'notify',
          POWERTOOLS_METRICS_NAMESPACE: 'Notify',
          LOG_LEVEL: 'WARN',
          NOTIFY_STAGE: 'probe',
          EXTRA: 'yes',
        },
      },
    });
  });

  it('logs to its own group with the stage retention, through a role that may write only there (and to X-Ray)', () => {
    template.resourceCountIs('AWS::Logs::LogGroup', 1);
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 14 });
    template.hasResourceProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ProbeLogs'), 'Arn'] },
          },
          // PassThrough tracing still writes the segments of sampled upstream traces.
          {
            Effect: 'Allow',
            Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
            Resource: '*',
          },
        ],
      },
    });
  });

  it('bundles the handler with the local esbuild into minified ESM with a source map', () => {
    expect(readdirSync(assetDir).sort()).toEqual(['index.mjs', 'index.mjs.map']);
    const code = readFileSync(path.join(assetDir, 'index.mjs'), 'utf8');
    expect(code).toContain('createRequire');
    expect(code).toMatch(/export\s*\{/);
    // Minified: the fixture's readable names are gone from the output.
    expect(code.split('\n').length).toBeLessThan(10);
    expect(existsSync(path.join(assetDir, 'index.mjs.map'))).toBe(true);
  });
});
