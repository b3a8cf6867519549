import { joinRoomOperation } from '../../domain/realtime/operations';
import { frameHandler } from './frame';

export const handler = frameHandler({ 'join.room': joinRoomOperation });
