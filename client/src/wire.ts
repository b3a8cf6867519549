/**
 * The service's wire format as the client sees it: WebSocket frames and REST bodies (docs/contract.md §3–§4).
 * Every type the SDK sends or receives comes from ./generated/wire.ts, which `npm run api-docs` writes from the
 * service's OpenAPI and AsyncAPI documents (a test fails while it is stale): the SDK cannot disagree with the
 * service. This module gives them the names the SDK uses.
 */
import {
  type Device,
  type MarkedRead,
  type NotificationFrame,
  type PresenceFrame,
  type PresenceUpdateFrame,
  type ReadAll,
  type Receiver,
  SERVER_FRAME_TYPES,
} from './generated/wire.js';

export type {
  AckFrame,
  BroadcastAccepted,
  BroadcastFrame,
  BroadcastSendRequest as BroadcastRequest,
  BulkChange,
  ClientFrame,
  Device,
  DevicesRegisterRequest as DeviceRequest,
  ErrorBody,
  ErrorFrame,
  EventAccepted,
  EventFrame,
  EventsPublishRequest as EventRequest,
  FeedPage,
  GatewayErrorFrame,
  HeartbeatAckFrame,
  ItemState,
  MarkedSeen,
  NotificationAccepted,
  NotificationBulkFrame,
  NotificationFrame,
  NotificationStateFrame,
  NotificationsBulkRequest as BulkChangeRequest,
  NotificationsCreateRequest as NotificationRequest,
  PreferenceDefaults,
  Preferences,
  PreferencesDefaultsPutRequest as PreferenceDefaultsRequest,
  PreferencesPutRequest as PreferencesRequest,
  PresenceFrame,
  PresenceSummaryFrame,
  Receiver,
  ScopePresence,
  ServerFrame,
  SessionFrame,
  Subscription,
  Topic,
  TopicDeletion,
  TopicList,
  TopicsCreateRequest as TopicRequest,
  UnreadCount,
  UserPresence,
  VapidPublicKey,
} from './generated/wire.js';

export type Priority = NotificationFrame['priority'];
export type DeliveryChannel = Receiver['channels'][number];
/** What a connection can set with `presence.update`. */
export type PresenceStatus = PresenceUpdateFrame['status'];
/** What presence reads answer: a user with no live connection is `offline`. */
export type PresenceState = PresenceFrame['status'];
export type DevicePlatform = Device['platform'];
export type ReadResult = MarkedRead;
export type ReadAllResult = ReadAll;
/** What `GET /notifications?state=` lists; absent: the default feed (neither archived nor snoozed). */
export type FeedStateFilter = 'unseen' | 'unread' | 'read' | 'archived' | 'snoozed' | 'all';

/** Frame types the protocol defines; anything else is a broadcast payload. */
export const PROTOCOL_FRAME_TYPES: ReadonlySet<string> = new Set<string>(SERVER_FRAME_TYPES);

/** A list answer (`{"items": [...]}`); paged lists also carry `next_cursor`. */
export interface ItemList<T> {
  readonly items: readonly T[];
}

/** A page of a paged list: `next_cursor` is null on the last page. */
export interface ItemPage<T> extends ItemList<T> {
  readonly next_cursor: string | null;
}
