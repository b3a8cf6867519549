import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias,
 * lib/constructs/bundling.ts). Lambda hands a function its role's credentials in the environment only, so the
 * SDK's default chain (SSO, STS, INI files, IMDS and the nested clients they bring) is dead weight that costs
 * bundle size and init time. The SDK clients call `defaultProvider(init)` when no credentials are configured.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
