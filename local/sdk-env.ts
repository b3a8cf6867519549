/**
 * Imported first by the local CLIs, before any AWS SDK client exists. The SDK (@aws-sdk/core, client
 * runtimeConfig) prints a 9-line warning on Node < 22 when the first client is built, unless this variable is
 * "true". The README states the supported Node versions instead (the pinned SDK runs on Node 20.19+).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
