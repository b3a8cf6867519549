export { httpRouteById, wiring } from './declaration';
export { envNames, ORIGIN_VERIFY_HEADER } from './env';
export * from './types';
