/**
 * The service's wire format as the client sees it: WebSocket frames and REST bodies (docs/contract.md §3–§4).
 * Every type the SDK sends or receives comes from ./generated/wire.ts, which `npm run api-docs` writes from the
 * service's OpenAPI and AsyncAPI documents (a test fails while it is stale): the SDK cannot disagree with the
 * service. This module gives them the names the SDK uses.
 */
import {
  type Device,
  type ItemState,
  type MarkedRead,
  type NotificationFrame,
  type NotificationStateFrame,
  type NotificationsBulkRequest,
  type NotificationsCreateRequest,
  type PreferenceDefaults,
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

/** A rule of the service defaults: channels, `required`, `throttle`, `digest` (docs/preferences.md). */
export type PreferenceDefaultRule = PreferenceDefaults['rules'][number];
/** A default rule's throttle, counted per recipient across what its pattern matches; `over`: feed or digest. */
export type DefaultThrottle = NonNullable<PreferenceDefaultRule['throttle']>;
/** A default rule's digest: batches what the rule matches, under the rule's pattern as key. */
export type DefaultDigest = NonNullable<PreferenceDefaultRule['digest']>;
/** A notification's own throttle: also says what it counts by (`per`: its event type or its category). */
export type NotificationThrottle = NonNullable<NotificationsCreateRequest['throttle']>;

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

/** A button of a feed item: `url` opens a page or app link; without one the click reaches the sender as an event. */
export interface ItemAction {
  readonly id: string;
  readonly label: string;
  readonly url: string | null;
}

/**
 * What feed items, their states and state frames may carry besides the fields above: the category, tags, link,
 * buttons and the recorded click, and the item's revision (each state change raises it). A service that does not
 * send a field leaves it out; the inbox store then reads it as null or [] (`InboxItem`).
 */
export interface ItemExtras {
  readonly category?: string | null;
  readonly tags?: readonly string[];
  readonly url?: string | null;
  readonly actions?: readonly ItemAction[];
  readonly interacted_at?: string | null;
  readonly interacted_action?: string | null;
  readonly revision?: number | null;
}

/** A feed item as the inbox store shows it: every extra present, null or [] when the service did not send it. */
export type InboxItem = Omit<Receiver, keyof ItemExtras> & {
  readonly category: string | null;
  readonly tags: readonly string[];
  readonly url: string | null;
  readonly actions: readonly ItemAction[];
  readonly interacted_at: string | null;
  readonly interacted_action: string | null;
  /** Higher after every state change; null when the service numbers none (then frames are applied in order). */
  readonly revision: number | null;
};

/** An item's states after a change (REST answer), with the extras the service may add. */
export type ItemStateOf = ItemState & Pick<ItemExtras, 'interacted_at' | 'interacted_action' | 'revision'>;
/** A `notification.state` frame, with the extras the service may add (`change: "interacted"` among them). */
export type ItemStateFrame = Omit<NotificationStateFrame, 'change'> & {
  readonly change: NotificationStateFrame['change'] | 'interacted';
} & Pick<ItemExtras, 'interacted_at' | 'interacted_action' | 'revision'>;
/** `POST /notifications/bulk`, optionally limited to one category. */
export type BulkChangeScope = NotificationsBulkRequest & { readonly category?: string };

/** Counts of one part of the feed: unseen, unread and all items. */
export interface FeedCounts {
  readonly unseen: number;
  readonly unread: number;
  readonly total: number;
}

/** `GET /notifications/counts`: the default feed overall and per category. */
export interface InboxCounts extends FeedCounts {
  readonly categories: Readonly<Record<string, FeedCounts>>;
}
