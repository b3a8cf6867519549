/**
 * What text the service refuses (docs/contract.md, "Text"): only what breaks a client or a log. Everything else
 * round-trips as sent, on every route and frame.
 *
 * - Any string or key: no unpaired surrogate (`\ud800` alone: UTF-8 cannot hold it, so it would be stored as
 *   U+FFFD, changed behind a 202) and no NUL (C strings end there; PostgreSQL text and jsonb refuse it, so a
 *   webhook receiver storing the event fails).
 * - Names (ids, room and channel names, recipient ids, keys of free-form JSON): also no control characters
 *   (a newline or an escape sequence forges or breaks a log line) and no bidirectional formatting characters
 *   (they make a name display as another, in a room list as in a log).
 * - Free text (titles, bodies, string values of `data`): tabs, newlines and bidirectional marks are text like any
 *   other; right-to-left languages need the marks.
 */

/** Control characters (C0, DEL, C1) and bidirectional formatting characters, as the body of a character class. */
export const NAME_BREAKING_CLASS =
  '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

// Marked pure: esbuild keeps a top-level call in every bundle importing the module, used or not.
const NAME_BREAKING = /* @__PURE__ */ new RegExp(`[${NAME_BREAKING_CLASS}]`);
/** With the u flag a lone surrogate is a code point of its own (category Cs); a valid pair is not. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why any string (or key) is refused, or undefined when it is not. */
export const textIssue = (text: string): string | undefined => {
  if (LONE_SURROGATE.test(text)) return 'must not contain unpaired surrogates (UTF-8 cannot hold them)';
  if (text.includes('\u0000')) return 'must not contain NUL (\\u0000)';
  return undefined;
};

export const NAME_BREAKING_MESSAGE = 'must not contain control or bidirectional formatting characters';

/** Why a name is refused, or undefined when it is not. */
export const nameIssue = (name: string): string | undefined =>
  textIssue(name) ?? (NAME_BREAKING.test(name) ? NAME_BREAKING_MESSAGE : undefined);

/** A name in a schema: none of the characters nameIssue refuses (lone surrogates are refused for every string). */
export const NAME_CHARACTERS = /* @__PURE__ */ new RegExp(`^[^${NAME_BREAKING_CLASS}]*$`);
