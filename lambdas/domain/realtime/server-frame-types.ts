/**
 * The `type` of every frame the service itself sends (contract §4). A list apart from the schemas
 * (server-frames.ts) so that POST /broadcast can refuse these types without bundling every frame schema.
 */
export const SERVER_FRAME_TYPES = [
  'session',
  'ack',
  'error',
  'heartbeat.ack',
  'notification',
  'notification.state',
  'notification.bulk',
  'event',
  'presence',
  'presence.summary',
] as const;

export type ServerFrameType = (typeof SERVER_FRAME_TYPES)[number];
