/**
 * The bounds of the identifiers the service takes, the one place they are declared (contract §5,
 * "Identifiers"). Where an identifier becomes part of a DynamoDB key the bound is in UTF-8 bytes, what DynamoDB
 * counts: a partition key holds at most 2,048 bytes, a sort key 1,024. The bounds keep every key legal:
 *
 * | key | built from | bytes at most |
 * |---|---|---|
 * | `user:<id>`, `room:<id>`, `topic:<name>` (presence and channel partition keys, preferences) | 6 + 512 | 518 of 2,048 |
 * | presence sort key `<user id>#<connection id>`; its paging bound `<user id>#U+10FFFF` | 512 + 1 + 16; 512 + 1 + 4 | 529 of 1,024 |
 * | `user_id` as a sort key (subscriptions, receipts) or partition key (feeds, devices, byUser indexes) | 512 | 512 of 1,024 |
 * | idempotency record `<operation>\n<kind>:<principal id>\n<Idempotency-Key>` | 20 + 1 + 5 + 512 + 1 + 3 × 128 | 923 of 2,048 |
 * | subscription id (a path parameter, ≤ 1,024): base64url of `<topic>\n<user id>` | ⌈(128 + 1 + 512) / 3⌉ × 4 | 856 of 1,024 |
 * | topic name (topics, subscriptions), webhook filter (`<event type>` or `<prefix>.*`) | ASCII, 128 / 130 | 130 of 1,024 |
 * | `jti` (token replay set), `session_id` (sessions) | 3 × 256 / 3 × 64 | 768 of 2,048 |
 * | any id in a path (receiver, webhook, delivery ids…): GetItem / Query before any other check | 1,024 | 1,024 of 1,024 |
 * | a connection's or session's channel set (an attribute, not a key) | 100 × (6 + 512) | 52 KB of the item's 400 KB |
 *
 * (API Gateway's connection ids are 16 characters; the presence sort key would leave them 511 bytes.) A token
 * whose subject or service name is past its bound is invalid (401); any other identifier past its bound is a
 * `validation` error (400, or an error frame on the WebSocket).
 */
export const IDENTIFIER_BYTES = {
  /** User ids: a user token's `sub`, `recipient_ids`, every `user_id` field, parameter and path. */
  userId: 512,
  /**
   * A service token's name (`service`, else `sub`). It is the default `source` of what the service sends, and
   * a stated `source` is at most 128 characters: a longer name could not state its own.
   */
  serviceName: 128,
  /** The name in a channel, `user:<id>`, `room:<id>` or `topic:<name>`: room ids, `join.topic` names. */
  channelName: 512,
} as const;

export type BoundedIdentifier = keyof typeof IDENTIFIER_BYTES;

/**
 * Identifiers bounded in characters: ASCII by their own rule (a character is a byte), or never a key as given (a
 * device token is hashed first). Their worst case in bytes is in the table above.
 */
export const IDENTIFIER_CHARACTERS = {
  /** `[a-z0-9][a-z0-9._-]*` (contract §3, topics). */
  topicName: 128,
  /** A dotted name of `[A-Za-z0-9_-]` segments. */
  eventType: 128,
  /** A webhook filter or preference rule: an event type, `<prefix>.*` (the longest event type and `.*`) or `*`. */
  eventPattern: 128 + 2,
  /** Contract §3: kept 24 h per principal, part of the idempotency record's key. */
  idempotencyKey: 128,
  /** A single-use token's id (token replay protection), the replay set's key. */
  jti: 256,
  /** `reconnect {session_id}`: the service issues UUIDs, so anything longer names no session. */
  sessionId: 64,
  /** A client frame's `id`, echoed in its answer. */
  frameId: 64,
  /** Push tokens: APNs 64 hex, FCM ~160 characters, a Web Push endpoint URL; hashed before it is a key. */
  deviceToken: 4096,
  appId: 256,
} as const;

/**
 * Every DynamoDB key is at most 1,024 bytes (sort keys; partition keys 2,048): a longer path parameter names
 * nothing that can exist, so it is a 404 before any handler turns it into a key (and DynamoDB into a 500).
 */
export const MAX_PATH_PARAMETER_BYTES = 1024;

/** UTF-8 bytes of a string, as DynamoDB counts them (a lone surrogate counts 3, as its replacement). */
export const utf8Bytes = (value: string): number => Buffer.byteLength(value, 'utf8');

/** Whether `value` is a non-empty identifier of `kind` within its bound. */
export const withinBound = (kind: BoundedIdentifier, value: string): boolean =>
  value.length > 0 && utf8Bytes(value) <= IDENTIFIER_BYTES[kind];

/** The rule as clients read it, for error messages and the API documents. */
export const describeBound = (kind: BoundedIdentifier): string =>
  `1 to ${IDENTIFIER_BYTES[kind]} bytes in UTF-8`;
