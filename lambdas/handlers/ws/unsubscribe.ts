import { unsubscribeOperation } from '../../domain/realtime/operations';
import { frameHandler } from './frame';

export const handler = frameHandler({ unsubscribe: unsubscribeOperation });
