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
export { envNames, ORIGIN_VERIFY_HEADER } from './env';
export * from './types';
