// Apart from channel-names.ts, which loads no zod (the realtime handlers check channels without it).
import * as z from '../../core/zod';
import {
  CHANNEL_NAME_BOUND,
  type ChannelKind,
  channelNameOverBound,
  channelPattern,
  describeChannels,
} from './channel-names';

/** A whole channel of one of `kinds` (`room:<id>`…): the pattern the API documents show, and the byte bound. */
export const channelSchema = (kinds?: readonly ChannelKind[]) =>
  z.string().check(
    z.refine((channel) => !channelNameOverBound(channel), { error: CHANNEL_NAME_BOUND, abort: true }),
    z.regex(channelPattern(kinds), `must be ${describeChannels(kinds)}`),
    z.describe(`${describeChannels(kinds)}: ${CHANNEL_NAME_BOUND}`),
  );
