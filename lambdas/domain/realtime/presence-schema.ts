// Apart from the broadcast body's schema, so that GET /presence bundles only its own.
import * as z from '../../core/zod';
import { channelPattern, describeChannels } from './channel-names';

/** Query of GET /presence. */
export const presenceScopeQuerySchema = z.strictObject({
  scope: z.string().check(z.regex(channelPattern(['room']), `must be ${describeChannels(['room'])}`)),
});
