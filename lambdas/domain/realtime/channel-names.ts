import { validationError } from '../../core/errors';
import { describeBound, IDENTIFIER_BYTES, utf8Bytes } from '../../core/identifiers';
import { NAME_BREAKING_CLASS } from '../../core/text-policy';

/**
 * The one module that knows the channel kinds (contract §4): `user:<id>`, `room:<id>` and `topic:<name>`, and the
 * name rule: 1–512 bytes in UTF-8 (lambdas/core/identifiers.ts), none of them whitespace, control or bidirectional formatting characters. Presence scopes are channels too (`user:<id>`,
 * `room:<id>`). No table access, so schemas can use it in small bundles. The client SDK (client/) and the demo
 * page keep their own copy of the kinds: they ship to browsers apart from this code.
 */
export const CHANNEL_KINDS = ['user', 'room', 'topic'] as const;

export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** In characters, what a pattern can state; the bound itself is in bytes (`channelNameWithinBound`). */
export const MAX_CHANNEL_NAME_LENGTH = IDENTIFIER_BYTES.channelName;

/** The longest channel: the longest kind, its colon and the longest name. */
export const MAX_CHANNEL_LENGTH =
  Math.max(...CHANNEL_KINDS.map((kind) => kind.length)) + 1 + MAX_CHANNEL_NAME_LENGTH;

/**
 * Whether the name in `channel` (after its kind) is over the byte bound. Checked before the shape, so that a
 * long name is told it is too long, not that it is no channel; an empty name is the pattern's to refuse.
 */
export const channelNameOverBound = (channel: string): boolean =>
  utf8Bytes(channel.slice(channel.indexOf(':') + 1)) > IDENTIFIER_BYTES.channelName;

// Marked pure: esbuild keeps a top-level call in every bundle importing the module, used or not.
/** The byte rule of channel names, for error messages. */
export const CHANNEL_NAME_BOUND = `the name after the kind must be ${/* @__PURE__ */ describeBound('channelName')}`;

/** A character a name may hold: no whitespace, control or bidirectional formatting character (core/text-policy.ts). */
const NAME_CHARACTER = `[^\\s${NAME_BREAKING_CLASS}]`;

/** The characters a name may hold (its length is checked apart, so each rule has its own message). */
export const CHANNEL_NAME_CHARACTERS = /* @__PURE__ */ new RegExp(`^${NAME_CHARACTER}+$`);
export const CHANNEL_NAME_CHARACTERS_MESSAGE =
  'must not contain whitespace, control or bidirectional formatting characters';

/** A whole channel of one of `kinds`, as a pattern (the API documents show it). */
export const channelPattern = (kinds: readonly ChannelKind[] = CHANNEL_KINDS): RegExp =>
  new RegExp(
    `^${kinds.length === 1 ? kinds[0] : `(${kinds.join('|')})`}:${NAME_CHARACTER}{1,${MAX_CHANNEL_NAME_LENGTH}}$`,
  );

/** How the channels of `kinds` look, for error messages: `user:<id>, room:<id> or topic:<name>`. */
export const describeChannels = (kinds: readonly ChannelKind[] = CHANNEL_KINDS): string => {
  const shapes = kinds.map((kind) => `${kind}:<${kind === 'topic' ? 'name' : 'id'}>`);
  return shapes.length === 1
    ? (shapes[0] as string)
    : `${shapes.slice(0, -1).join(', ')} or ${shapes.at(-1)}`;
};

const ANY_CHANNEL = /* @__PURE__ */ channelPattern();

export const channelOf = (kind: ChannelKind, name: string): string => `${kind}:${name}`;
export const userChannel = (userId: string): string => channelOf('user', userId);
export const roomChannel = (roomId: string): string => channelOf('room', roomId);
export const topicChannel = (topic: string): string => channelOf('topic', topic);

/** The kind and name of a channel; a `validation` error when it has no known kind or breaks the name rule. */
export const parseChannel = (channel: string): { kind: ChannelKind; name: string } => {
  if (channelNameOverBound(channel)) {
    throw validationError(`channel is too long: ${CHANNEL_NAME_BOUND}`, [
      { field: 'channel', issue: CHANNEL_NAME_BOUND },
    ]);
  }
  if (!ANY_CHANNEL.test(channel)) {
    throw validationError(`channel must be ${describeChannels()}`, [
      { field: 'channel', issue: 'unknown channel shape' },
    ]);
  }
  const colon = channel.indexOf(':');
  return { kind: channel.slice(0, colon) as ChannelKind, name: channel.slice(colon + 1) };
};
