/**
 * The realtime connection: authenticates with an `auth` frame, keeps the session alive with heartbeats, refreshes
 * the token before it expires, reconnects with backoff and resumes the session (`reconnect` + replay), drops
 * repeated frames, and restores rooms, topics and channels on a new session. Runs in browsers, React Native and
 * Node (pass `WebSocket` where there is no global one).
 */
import { type BackoffOptions, backoffDelay } from './backoff.js';
import { Emitter } from './emitter.js';
import { NotifyError } from './errors.js';
import { type TokenProvider, type TokenSource, tokenSourceOf } from './token.js';
import {
  type AckFrame,
  type BroadcastFrame,
  type ClientFrame,
  type EventFrame,
  type NotificationBulkFrame,
  type NotificationFrame,
  type NotificationStateFrame,
  PROTOCOL_FRAME_TYPES,
  type PresenceFrame,
  type PresenceStatus,
  type PresenceSummaryFrame,
  type ServerFrame,
  type SessionFrame,
} from './wire.js';

/** The part of the WebSocket API the client uses (browsers, React Native and the `ws` package all have it). */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: never) => void) | null;
  onmessage: ((event: never) => void) | null;
  onclose: ((event: never) => void) | null;
  onerror: ((event: never) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/**
 * `connecting`: the first connection is being made; `connected`: a session is live; `reconnecting`: the connection
 * was lost and a new one is on its way (after a backoff); `disconnected`: not connecting (before `connect()`, after
 * `disconnect()`, or after the service refused the token — see the state event's `reason`).
 */
export type ConnectionState = 'disconnected' | 'connecting' | 'connected' | 'reconnecting';

export interface StateChange {
  readonly state: ConnectionState;
  readonly previous: ConnectionState;
  /** Why the connection was lost or stopped. */
  readonly reason?: NotifyError;
}

export interface SessionInfo {
  readonly sessionId: string;
  readonly userId: string;
  /** The previous session was resumed: its channels were kept and the frames it missed replayed. */
  readonly resumed: boolean;
  /** How many missed frames the service replays after this event (resumed sessions). */
  readonly replayed: number;
}

export interface RealtimeEvents {
  state: StateChange;
  /** A session is live, new or resumed. A new one after an earlier session means frames may have been missed. */
  session: SessionInfo;
  /** The previous session could not be resumed (gone too long): reload what the app shows from REST. */
  sessionExpired: { readonly sessionId: string };
  notification: NotificationFrame;
  /** A feed item changed state (on this device or another): its states after the change. */
  notificationState: NotificationStateFrame;
  /** Many feed items changed at once (a bulk change, a read-all, items marked seen). */
  notificationBulk: NotificationBulkFrame;
  event: EventFrame;
  presence: PresenceFrame;
  /** Instead of `presence` in rooms too large for a frame per change: counts, at most one per interval. */
  presenceSummary: PresenceSummaryFrame;
  /** A `POST /broadcast` payload (any frame type the protocol does not define). */
  broadcast: BroadcastFrame;
  /** An `error` frame nothing else was waiting for, or a failure the client could not recover by itself. */
  error: NotifyError;
}

export interface RealtimeOptions {
  /** The WebSocket endpoint, ending in `/ws`. */
  readonly url: string;
  /** Where user tokens come from; or `tokens`, to share one TokenSource with the REST client. */
  readonly getToken?: TokenProvider;
  readonly tokens?: TokenSource;
  /** The WebSocket class, where there is no global one (Node < 22: `import { WebSocket } from 'ws'`). */
  readonly WebSocket?: WebSocketConstructor;
  /** Delay before reconnect attempt n: random in [0, min(maxMs, initialMs · 2^n)] (500 ms and 30 s). */
  readonly backoff?: BackoffOptions;
  /** A heartbeat unanswered this long means the connection is dead: reconnect (default 10 s). */
  readonly heartbeatTimeoutMs?: number;
  /** No session this long after starting to connect: try again (default 15 s). */
  readonly connectTimeoutMs?: number;
}

interface Pending {
  resolve(ack: AckFrame): void;
  reject(error: NotifyError): void;
}

/** How many frame ids are remembered for de-duplication. */
const SEEN_LIMIT = 1000;
const OPEN = 1;

export class RealtimeClient extends Emitter<RealtimeEvents> {
  private readonly tokens: TokenSource;
  private currentState: ConnectionState = 'disconnected';
  private wanted = false;
  private socket: WebSocketLike | undefined;
  private attempt = 0;
  private nextId = 0;
  private sessionId: string | undefined;
  private userId: string | undefined;
  private live = false;
  /** The current connection got its `session` frame (a later one, e.g. after a refresh, changes nothing). */
  private sessionStarted = false;
  private sentToken: string | undefined;
  private forceToken = false;
  private closeReason: NotifyError | undefined;
  private presenceStatus: PresenceStatus | undefined;
  /** What the app asked to be in, by channel, with the frame that gets it there. */
  private readonly desired = new Map<string, ClientFrame>();
  /** What the service's session holds, as far as acks told. */
  private onServer = new Set<string>();
  private readonly waiters = new Map<string, Pending[]>();
  private pending = new Map<string, Pending>();
  private readonly seen = new Set<string>();
  private timers: Record<'reconnect' | 'connect' | 'heartbeat' | 'heartbeatAck' | 'refresh', unknown> = {
    reconnect: undefined,
    connect: undefined,
    heartbeat: undefined,
    heartbeatAck: undefined,
    refresh: undefined,
  };

  constructor(private readonly options: RealtimeOptions) {
    super();
    this.tokens = tokenSourceOf(options);
  }

  private readonly onOnline = () => {
    if (this.wanted && !this.socket) this.connect();
  };

  get state(): ConnectionState {
    return this.currentState;
  }

  /** The live session, when connected. */
  get session(): { readonly sessionId: string; readonly userId: string } | undefined {
    return this.live && this.sessionId && this.userId
      ? { sessionId: this.sessionId, userId: this.userId }
      : undefined;
  }

  /** Starts connecting (and keeps reconnecting until `disconnect()`); also retries at once when waiting. */
  connect(): void {
    if (!this.WebSocketClass()) throw new TypeError('Notify: no global WebSocket; pass the WebSocket option');
    this.wanted = true;
    this.attempt = 0;
    // Browsers: when the network comes back, skip the rest of a backoff (adding it twice is a no-op).
    (globalThis as Partial<EventTarget>).addEventListener?.('online', this.onOnline);
    if (this.socket) return;
    this.clearTimer('reconnect');
    this.open();
  }

  /** Closes the connection and stops reconnecting. The session can still be resumed by `connect()` for 120 s. */
  disconnect(): void {
    this.wanted = false;
    (globalThis as Partial<EventTarget>).removeEventListener?.('online', this.onOnline);
    this.lose(new NotifyError('disconnected', 'disconnect() was called'));
  }

  /** Subscribes to a channel (`room:<id>`, `topic:<name>`, `user:<own id>`); kept across reconnects. */
  subscribe(channel: string): Promise<void> {
    return this.join(channel, { type: 'subscribe', channel });
  }

  /** Joins a room: its frames arrive, and the user is listed in its presence. */
  joinRoom(roomId: string): Promise<void> {
    return this.join(`room:${roomId}`, { type: 'join.room', room_id: roomId });
  }

  /** Receives the `event` frames of an existing topic. */
  joinTopic(topic: string): Promise<void> {
    return this.join(`topic:${topic}`, { type: 'join.topic', topic });
  }

  leaveRoom(roomId: string): Promise<void> {
    return this.unsubscribe(`room:${roomId}`);
  }

  leaveTopic(topic: string): Promise<void> {
    return this.unsubscribe(`topic:${topic}`);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.desired.delete(channel);
    this.settle(channel, new NotifyError('cancelled', `unsubscribed from ${channel}`));
    if (!this.live) return; // the next session leaves it (see sync)
    if (await this.whileConnected({ type: 'unsubscribe', channel })) this.onServer.delete(channel);
  }

  /** Sets this connection's presence status; kept across reconnects. */
  async setPresence(status: PresenceStatus): Promise<void> {
    this.presenceStatus = status;
    if (this.live) await this.whileConnected({ type: 'presence.update', status });
  }

  /**
   * A request whose effect the next session makes anyway (see sync): losing the connection is no failure.
   * True when the service acknowledged it.
   */
  private async whileConnected(frame: ClientFrame): Promise<boolean> {
    try {
      await this.request(frame);
      return true;
    } catch (error) {
      if ((error as NotifyError).code !== 'disconnected') throw error;
      return false;
    }
  }

  // -------------------------------------------------------------------------------------------------------

  private join(channel: string, frame: ClientFrame): Promise<void> {
    const known = this.desired.get(channel);
    this.desired.set(channel, frame);
    if (known?.type === frame.type && this.onServer.has(channel)) return Promise.resolve();
    const joined = new Promise<void>((resolve, reject) => {
      const list = this.waiters.get(channel) ?? [];
      list.push({ resolve: () => resolve(), reject });
      this.waiters.set(channel, list);
    });
    if (this.live) this.syncChannel(channel, frame);
    return joined;
  }

  private settle(channel: string, error?: NotifyError): void {
    const list = this.waiters.get(channel) ?? [];
    this.waiters.delete(channel);
    for (const waiter of list) {
      if (error) waiter.reject(error);
      else waiter.resolve({ type: 'ack', op: 'subscribe' });
    }
  }

  private syncChannel(channel: string, frame: ClientFrame): void {
    this.request(frame).then(
      () => {
        this.onServer.add(channel);
        this.settle(channel);
      },
      (error: NotifyError) => {
        if (error.code === 'disconnected') return; // the next session makes it again
        this.desired.delete(channel);
        // Reported once: to whoever awaits the join, else (a rejoin on a new session) as an error event.
        if (!this.waiters.has(channel)) this.emit('error', error);
        this.settle(channel, error);
      },
    );
  }

  private setState(state: ConnectionState, reason?: NotifyError): void {
    const previous = this.currentState;
    if (previous === state) return;
    this.currentState = state;
    this.emit('state', { state, previous, ...(reason ? { reason } : {}) });
  }

  private clearTimer(name: keyof RealtimeClient['timers']): void {
    clearTimeout(this.timers[name] as ReturnType<typeof setTimeout>);
    clearInterval(this.timers[name] as ReturnType<typeof setInterval>);
    this.timers[name] = undefined;
  }

  private send(frame: ClientFrame): void {
    if (this.socket?.readyState === OPEN) this.socket.send(JSON.stringify(frame));
  }

  /** Sends a frame with an id; resolves with its ack, rejects with its error (or `disconnected`). */
  private request(frame: ClientFrame): Promise<AckFrame> {
    const id = String(++this.nextId);
    return new Promise((resolve, reject) => {
      if (this.socket?.readyState !== OPEN) {
        reject(new NotifyError('disconnected', 'not connected'));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.send({ ...frame, id });
    });
  }

  private WebSocketClass(): WebSocketConstructor | undefined {
    return this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  }

  private open(): void {
    this.setState(this.sessionId ? 'reconnecting' : 'connecting');
    const WebSocketClass = this.WebSocketClass() as WebSocketConstructor;
    const socket = new WebSocketClass(this.options.url);
    this.socket = socket;
    this.live = false;
    this.sessionStarted = false;
    this.closeReason = undefined;
    this.timers.connect = setTimeout(
      () => this.lose(new NotifyError('timeout', 'no session in time')),
      this.options.connectTimeoutMs ?? 15_000,
    );
    socket.onopen = () => void this.authenticate(socket, false);
    socket.onmessage = (event: { data: unknown }) => {
      if (this.socket === socket) this.receive(String(event.data));
    };
    socket.onclose = (event: { code: number }) => {
      if (this.socket === socket) {
        this.lose(this.closeReason ?? new NotifyError('network', `connection closed (${event.code})`));
      }
    };
    socket.onerror = () => {}; // a close event follows
  }

  /** The first `auth` of a connection, or a refresh on a live one; a refused token is retried once, fresh. */
  private async authenticate(socket: WebSocketLike, refreshing: boolean): Promise<void> {
    for (let retried = false; ; retried = true) {
      let token: string;
      try {
        token = await this.tokens.get(this.forceToken || retried);
        this.forceToken = false;
      } catch (cause) {
        if (this.socket !== socket) return;
        const error = new NotifyError('token_provider', `the token provider failed: ${String(cause)}`);
        this.emit('error', error);
        if (refreshing) this.scheduleRefresh(5_000);
        else this.lose(error);
        return;
      }
      if (this.socket !== socket) return;
      if (refreshing && token === this.sentToken) {
        this.scheduleRefresh();
        return;
      }
      try {
        await this.request({ type: 'auth', token });
        this.sentToken = token;
        if (refreshing) this.scheduleRefresh();
        return;
      } catch (cause) {
        const error = cause as NotifyError;
        if (error.code === 'disconnected' || this.socket !== socket) return;
        if (error.code === 'unauthorized' && !retried) continue;
        this.emit('error', error);
        // A token refused twice is no network failure: backing off and retrying would not help. Stop and say so.
        if (!refreshing) {
          this.wanted = false;
          this.lose(error);
        }
        return;
      }
    }
  }

  private scheduleRefresh(delay = this.tokens.refreshDelay()): void {
    this.clearTimer('refresh');
    const socket = this.socket;
    if (delay === undefined || !socket) return;
    this.timers.refresh = setTimeout(() => void this.authenticate(socket, true), delay);
  }

  private receive(data: string): void {
    // Any frame shows the connection is alive.
    this.clearTimer('heartbeatAck');
    let frame: ServerFrame;
    try {
      frame = JSON.parse(data) as ServerFrame;
    } catch {
      return;
    }
    switch (frame.type) {
      case 'ack':
      case 'error': {
        const pending = frame.id === undefined ? undefined : this.pending.get(frame.id);
        if (pending) {
          this.pending.delete(frame.id as string);
          if (frame.type === 'ack') pending.resolve(frame);
          else pending.reject(new NotifyError(frame.code, frame.message));
        } else if (frame.type === 'error') {
          // Unasked errors announce the server's close (unauthorized, token_expired, idle_timeout,
          // session_taken_over).
          const error = new NotifyError(frame.code, frame.message);
          this.closeReason = error;
          if (frame.code === 'token_expired') this.forceToken = true;
          // Another connection resumed the session: taking it back would close that one, which would take it
          // back in turn. The next connection starts a session of its own.
          if (frame.code === 'session_taken_over') this.sessionId = undefined;
          this.emit('error', error);
        }
        return;
      }
      case 'session':
        void this.startSession(frame);
        return;
      case 'heartbeat.ack':
        return;
      case 'presence':
        this.emit('presence', frame);
        return;
      // Not told apart by `id` (deliver): one item changes state many times, and a repeat states the same.
      case 'notification.state':
        this.emit('notificationState', frame);
        return;
      case 'notification.bulk':
        this.emit('notificationBulk', frame);
        return;
      default:
        this.deliver(frame as unknown as BroadcastFrame);
    }
  }

  /** Notifications, events and broadcasts, each id once (delivery is at least once; replays can repeat). */
  private deliver(frame: BroadcastFrame): void {
    if (typeof frame.id === 'string') {
      const key = `${frame.type}:${frame.id}`;
      if (this.seen.has(key)) return;
      this.seen.add(key);
      if (this.seen.size > SEEN_LIMIT) this.seen.delete(this.seen.values().next().value as string);
    }
    if (frame.type === 'notification') this.emit('notification', frame as unknown as NotificationFrame);
    else if (frame.type === 'event') this.emit('event', frame as unknown as EventFrame);
    else if (frame.type === 'presence.summary')
      this.emit('presenceSummary', frame as unknown as PresenceSummaryFrame);
    else if (!PROTOCOL_FRAME_TYPES.has(frame.type)) this.emit('broadcast', frame);
  }

  private async startSession(frame: SessionFrame): Promise<void> {
    if (this.sessionStarted) return;
    this.sessionStarted = true;
    const socket = this.socket;
    this.userId = frame.user_id;
    const previous = this.sessionId;
    let resumed: string | undefined;
    let replayed = 0;
    if (previous && previous !== frame.session_id) {
      try {
        const ack = await this.request({ type: 'reconnect', session_id: previous });
        resumed = ack.session_id ?? previous;
        replayed = ack.replayed ?? 0;
      } catch (cause) {
        const error = cause as NotifyError;
        if (this.socket !== socket || error.code === 'disconnected') return;
        if (error.code !== 'session_expired') this.emit('error', error);
      }
    }
    if (this.socket !== socket) return;
    this.sessionId = resumed ?? frame.session_id;
    if (!resumed) this.onServer = new Set();
    this.live = true;
    this.attempt = 0;
    this.clearTimer('connect');
    this.startHeartbeat(frame.heartbeat_interval_ms);
    this.scheduleRefresh();
    this.sync();
    this.setState('connected');
    this.emit('session', { sessionId: this.sessionId, userId: frame.user_id, resumed: !!resumed, replayed });
    if (previous && !resumed) this.emit('sessionExpired', { sessionId: previous });
  }

  /** Makes the service's session hold what the app asked for. */
  private sync(): void {
    if (this.presenceStatus && this.presenceStatus !== 'online') {
      this.request({ type: 'presence.update', status: this.presenceStatus }).catch(() => {});
    }
    for (const [channel, frame] of this.desired) {
      if (!this.onServer.has(channel)) this.syncChannel(channel, frame);
    }
    for (const channel of this.onServer) {
      if (this.desired.has(channel)) continue;
      this.request({ type: 'unsubscribe', channel }).then(
        () => this.onServer.delete(channel),
        () => {},
      );
    }
  }

  private startHeartbeat(intervalMs: number): void {
    this.clearTimer('heartbeat');
    this.timers.heartbeat = setInterval(() => {
      this.send({ type: 'heartbeat' });
      if (this.timers.heartbeatAck === undefined) {
        this.timers.heartbeatAck = setTimeout(
          () => this.lose(new NotifyError('timeout', 'heartbeat unanswered')),
          this.options.heartbeatTimeoutMs ?? 10_000,
        );
      }
    }, intervalMs);
  }

  /** Ends the current connection (if any) and, when still wanted, schedules the next one. */
  private lose(reason: NotifyError): void {
    const socket = this.socket;
    this.socket = undefined;
    this.live = false;
    for (const name of Object.keys(this.timers) as (keyof RealtimeClient['timers'])[]) this.clearTimer(name);
    const pending = this.pending;
    this.pending = new Map();
    for (const request of pending.values()) request.reject(new NotifyError('disconnected', reason.message));
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
      if (socket.readyState <= OPEN) socket.close(1000);
    }
    if (!this.wanted) {
      for (const channel of [...this.waiters.keys()]) this.settle(channel, reason);
      this.setState('disconnected', reason);
      return;
    }
    this.setState(this.sessionId ? 'reconnecting' : 'connecting', reason);
    const delay = reason.code === 'token_expired' ? 0 : backoffDelay(this.attempt++, this.options.backoff);
    this.timers.reconnect = setTimeout(() => {
      this.timers.reconnect = undefined;
      this.open();
    }, delay);
  }
}
