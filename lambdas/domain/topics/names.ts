/** Contract §3: topic names. Apart from schema.ts so that code checking a name does not load zod. */
export const TOPIC_NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;
