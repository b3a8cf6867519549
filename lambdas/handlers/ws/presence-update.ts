import { presenceUpdateOperation } from '../../domain/realtime/operations';
import { frameHandler } from './frame';

export const handler = frameHandler({ 'presence.update': presenceUpdateOperation });
