import { SignatureV4 } from '@smithy/signature-v4';

/**
 * Stands in for `@aws-sdk/signature-v4-multi-region` in the Lambda bundles (an esbuild alias,
 * lib/constructs/bundling.ts). The EventBridge client signs with its class: SigV4, or SigV4a for a request to
 * a global endpoint (signing region `*`: PutEvents with an `EndpointId`, which the service never makes).
 * SigV4a needs the CRT or `@smithy/signature-v4a`, neither of which is installed, so the package's class could
 * only throw there as well, with 3 KiB of messages about it. The same SigV4 signatures as the package's class
 * (test/unit/lambda-bundle.test.ts signs one request with both).
 */
export class SignatureV4MultiRegion {
  private readonly sigv4: SignatureV4;

  /** The client asks this before offering SigV4a: no implementation of it is bundled. */
  static sigv4aDependency(): 'none' {
    return 'none';
  }

  constructor(options: ConstructorParameters<typeof SignatureV4>[0]) {
    this.sigv4 = new SignatureV4(options);
  }

  async sign(...[request, options = {}]: Parameters<SignatureV4['sign']>) {
    if (options.signingRegion === '*') sigv4aNotBundled();
    return this.sigv4.sign(request, options);
  }

  async presign(...[request, options = {}]: Parameters<SignatureV4['presign']>) {
    if (options.signingRegion === '*') sigv4aNotBundled();
    return this.sigv4.presign(request, options);
  }
}

const sigv4aNotBundled = (): never => {
  throw new Error(
    'SigV4a (signing region *) is not bundled into Lambda functions (lambdas/core/bundle-shims/sigv4-only.ts): remove the alias in lib/constructs/bundling.ts and add a SigV4a implementation to call a global endpoint',
  );
};
