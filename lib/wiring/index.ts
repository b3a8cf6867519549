export { httpRouteById, wiring } from './declaration';
export { envNames } from './env';
export * from './types';
