import { reconnectOperation } from '../../domain/realtime/operations';
import { frameHandler } from './frame';

export const handler = frameHandler({ reconnect: reconnectOperation });
