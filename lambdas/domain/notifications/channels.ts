// Apart from the notification schema: esbuild keeps a module's top-level zod calls, so a function that imports
// the channels from it (the preferences routes) would carry the whole creation schema.

/** The channels a notification is delivered on (contract §3 "Notifications"). */
export const CHANNELS = ['in_app', 'toast', 'realtime', 'push'] as const;

export type Channel = (typeof CHANNELS)[number];
