import { joinTopicOperation } from '../../domain/realtime/operations';
import { frameHandler } from './frame';

export const handler = frameHandler({ 'join.topic': joinTopicOperation });
