export { envNames, ORIGIN_VERIFY_HEADER } from '../../common/env';
export {
  EVENTBRIDGE_MAX_PUT_EVENTS_BYTES,
  LAMBDA_MAX_ASYNC_PAYLOAD_BYTES,
  SQS_MAX_MESSAGE_BYTES,
} from '../../common/limits';
export {
  ANY_ORIGIN,
  allowedOriginFor,
  CORS_ALLOWED_HEADERS,
  CORS_ALLOWED_METHODS,
  CORS_EXPOSED_HEADERS,
  CORS_MAX_AGE_SECS,
  type CorsPolicy,
  invalidOriginReason,
  isCorsPreflight,
} from './cors';
export { httpRouteById, wiring } from './declaration';
export { deployedSpec, type FunctionResources, functionEnvironment } from './function-env';
export {
  allowsTableAction,
  type FunctionGrants,
  functionGrants,
  MANAGE_CONNECTIONS_ACTION,
  TABLE_READ_ACTIONS,
  TABLE_WRITE_ACTIONS,
  tableActions,
} from './grants';
export * from './types';
