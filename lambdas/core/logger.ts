import { Logger } from '@aws-lambda-powertools/logger';
import { installSourceMappedStacks } from './source-mapped-stacks';

// Every function imports the logger: in a bundle, the stacks it logs name the repository's files and lines.
installSourceMappedStacks();

/**
 * The one logger of every function: structured JSON with the service name, level from LOG_LEVEL.
 * Request-scoped keys (request id, route, principal) are appended per invocation and reset after it.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'notify' });
