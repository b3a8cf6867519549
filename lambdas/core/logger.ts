import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { installSourceMappedStacks } from './source-mapped-stacks';

// Every function imports the logger: in a bundle, the stacks it logs name the repository's files and lines.
installSourceMappedStacks();

/**
 * The one logger of every function: structured JSON with the service name, level from LOG_LEVEL.
 * Request-scoped keys (request id, route, principal) are appended per invocation and reset after it.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'notify' });

/**
 * Starts an invocation's log keys: the Lambda context's (function_name, function_request_id, cold_start...)
 * and `keys`, replacing the previous invocation's. Every record then names the function and invocation that
 * wrote it, also where one log stream holds several functions (Logs Insights over log groups, the local runtime).
 */
export const beginInvocationLog = (context: Context, keys: Readonly<Record<string, unknown>> = {}): void => {
  logger.resetKeys();
  logger.addContext(context);
  logger.appendKeys(keys);
};
