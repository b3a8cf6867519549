// Apart from channel-names.ts, which loads no zod (the realtime handlers check channels without it).
import * as z from '../../core/zod';
import {
  CHANNEL_NAME_BOUND,
  type ChannelKind,
  channelNameWithinBound,
  channelPattern,
  describeChannels,
} from './channel-names';

/** A whole channel of one of `kinds` (`room:<id>`…): the pattern the API documents show, and the byte bound. */
export const channelSchema = (kinds?: readonly ChannelKind[]) =>
  z
    .string()
    .check(
      z.regex(channelPattern(kinds), { error: `must be ${describeChannels(kinds)}`, abort: true }),
      z.refine(channelNameWithinBound, { error: CHANNEL_NAME_BOUND }),
      z.describe(`${describeChannels(kinds)}: ${CHANNEL_NAME_BOUND}`),
    );
