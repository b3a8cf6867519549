import { frameHandler } from './frame';

/** `$default`: every frame here has an unknown type, answered with a `validation` error frame; no operation. */
export const handler = frameHandler({});
