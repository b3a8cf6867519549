import path from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { repoRoot } from '../paths';
import { DEFAULT_FUNCTION, envNames, type FunctionSpec } from '../wiring';
import { LAMBDA_BUNDLE_ALIASES, LAMBDA_BUNDLE_BANNER, LAMBDA_ESBUILD_OPTIONS } from './bundling';

/** What every function of a stage shares. */
export interface FunctionDefaults {
  readonly stage: string;
  readonly logLevel: string;
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
  readonly tracing: boolean;
}

export interface NotifyFunctionProps {
  readonly spec: FunctionSpec;
  readonly description: string;
  readonly defaults: FunctionDefaults;
  /** Extra environment (auth settings for HTTP and WebSocket functions). */
  readonly environment?: Readonly<Record<string, string>>;
  /** Reserved concurrency (stage setting `scale.workers.<id>.reserved_concurrency`); unset: none reserved. */
  readonly reservedConcurrency?: number;
  /** A worker's declared `busyAfterSecs`: the monitoring alarms on invocations approaching it. */
  readonly busyAfterSecs?: number;
}

/** Powertools reads these; the service name groups every function's logs and metrics. */
export const SERVICE_NAME = 'notify';
export const METRICS_NAMESPACE = 'Notify';

/**
 * One Lambda function of the service with the project's defaults baked in: Node.js 24 on arm64, bundled by
 * the local esbuild (minified, ESM, source maps on), its own log group with the stage's retention, and a role
 * that starts with nothing but writing to that log group. Resource grants are added by the caller.
 */
export class NotifyFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** Its reserved concurrency, when the stage sets one: such a function can be throttled on its own. */
  readonly reservedConcurrency: number | undefined;
  /** How long an invocation may run before its worker falls behind (a capacity alarm), when declared. */
  readonly busyAfterSecs: number | undefined;

  constructor(scope: Construct, id: string, props: NotifyFunctionProps) {
    super(scope, id);
    const { spec, defaults } = props;
    this.reservedConcurrency = props.reservedConcurrency;
    this.busyAfterSecs = props.busyAfterSecs;

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: defaults.logRetentionDays as logs.RetentionDays,
      removalPolicy: defaults.removalPolicy,
    });
    // An own role instead of AWSLambdaBasicExecutionRole: log writes are limited to this function's group.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Notify ${defaults.stage}: ${props.description}`,
    });
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      description: `Notify ${defaults.stage}: ${props.description}`,
      entry: path.join(repoRoot, spec.handler),
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: spec.memoryMb ?? DEFAULT_FUNCTION.memoryMb,
      timeout: Duration.seconds(spec.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs),
      reservedConcurrentExecutions: props.reservedConcurrency,
      role: this.role,
      logGroup: this.logGroup,
      // Off = PassThrough: no sampling of our own, but a trace an upstream caller sampled still continues.
      tracing: defaults.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.PASS_THROUGH,
      environment: {
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        LOG_LEVEL: defaults.logLevel,
        // No NODE_OPTIONS=--enable-source-maps: Node would read and index the source map while loading the bundle
        // (10–20 ms of every cold start). The logger maps stacks itself when one is formatted
        // (lambdas/core/source-mapped-stacks.ts), from the map bundled beside the code.
        [envNames.stage]: defaults.stage,
        ...props.environment,
      },
      bundling: {
        // The local esbuild from devDependencies; no Docker on build machines.
        forceDockerBundling: false,
        // The same as LAMBDA_ESBUILD_OPTIONS, which the bench and the bundle tests build with.
        minify: LAMBDA_ESBUILD_OPTIONS.minify,
        sourceMap: LAMBDA_ESBUILD_OPTIONS.sourcemap,
        sourcesContent: LAMBDA_ESBUILD_OPTIONS.sourcesContent,
        // Warnings and errors only: esbuild's per-bundle size summary is noise in `cdk synth` (dozens of functions).
        logLevel: LogLevel.WARNING,
        target: LAMBDA_ESBUILD_OPTIONS.target,
        format: OutputFormat.ESM,
        mainFields: [...LAMBDA_ESBUILD_OPTIONS.mainFields],
        // The SDK v3 clients are bundled too: pinned versions, tree-shaken, and faster to load than the
        // runtime's full copy (Lambda init time is billed; docs/performance.md).
        externalModules: [],
        esbuildArgs: {
          '--alias': Object.entries(LAMBDA_BUNDLE_ALIASES).map(([module, file]) => `${module}=${file}`),
        },
        banner: LAMBDA_BUNDLE_BANNER,
      },
    });
  }
}
