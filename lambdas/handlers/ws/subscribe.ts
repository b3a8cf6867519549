import { subscribeOperation } from '../../domain/realtime/operations';
import { frameHandler } from './frame';

export const handler = frameHandler({ subscribe: subscribeOperation });
