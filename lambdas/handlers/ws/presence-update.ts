import { frameHandler } from './frame';

export const handler = frameHandler;
