/**
 * Helpers for driving the client SDK (client/src) against the local runtime:
 *
 *   const socket = new GatedWebSocket();             // hold reconnects while a test makes the client miss frames
 *   createNotify({ ..., WebSocket: socket.constructor });
 *   await dropConnections('alice');                  // the server ends alice's connections (@connections DELETE)
 *   await bufferedNotificationIds(sessionId);        // notifications waiting in a session's replay buffer
 *   const phone = await startNotify(runtime, 'alice'); // a device of alice's: connected (stop() it when done)
 *   await sendTitled(service, 'alice', 'a', 'b');      // feed items titled a, then b (ids in that order)
 */
import { DeleteConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { WebSocket } from 'ws';
import {
  createNotify,
  type Notify,
  type NotifyOptions,
  type WebSocketConstructor,
  type WebSocketLike,
} from '../../client/src/index';
import type { NotifyService } from '../../client/src/service';
import { connectionsApi } from '../../lambdas/core/clients-connections';
import { bufferedFrames } from '../../lambdas/domain/realtime/sessions';
import { eventually } from './api';
import { awaitCleanUp, connectionIds, connectionsOf } from './disconnect';
import type { Runtime } from './runtime';

export { connectionIds };

/**
 * Ends every open connection of a user from the server's side, as the sweeper or an operator would, and waits
 * until the service has cleaned up after them (by `$disconnect`, or by the sweep when none came).
 */
export const dropConnections = async (userId: string): Promise<number> => {
  const ending = await connectionsOf(userId);
  for (const { id } of ending) await connectionsApi().send(new DeleteConnectionCommand({ ConnectionId: id }));
  await awaitCleanUp(ending);
  return ending.length;
};

/** The notification ids of the frames in a session's replay buffer, newest first (repeats kept). */
export const bufferedNotificationIds = async (sessionId: string): Promise<string[]> =>
  (await bufferedFrames(sessionId)).frames.flatMap((frame) => {
    const id = (frame as { notification_id?: unknown }).notification_id;
    return typeof id === 'string' ? [id] : [];
  });

/**
 * A WebSocket class (the `ws` package's, as Node 20 has no global one) whose new connections can be held back:
 * `hold()` makes the next connections wait until `release()`, so a test decides how long a client stays away.
 * `opened` counts connections made; `blackhole()` silently drops what the connections open now send and receive
 * (a dead network path that never closes); later connections work.
 */
export class SocketControl {
  opened = 0;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => {};
  private readonly live = new Set<WebSocket>();
  private readonly silenced = new Set<WebSocket>();

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  release(): void {
    this.open();
  }

  blackhole(): void {
    for (const socket of this.live) this.silenced.add(socket);
  }

  readonly WebSocket: WebSocketConstructor = (() => {
    const control = this;
    return class GatedWebSocket implements WebSocketLike {
      onopen: ((event: never) => void) | null = null;
      onmessage: ((event: never) => void) | null = null;
      onclose: ((event: never) => void) | null = null;
      onerror: ((event: never) => void) | null = null;
      private socket: WebSocket | undefined;
      private closedEarly = false;

      constructor(url: string) {
        void control.gate.then(() => {
          if (this.closedEarly) return;
          control.opened++;
          const socket = new WebSocket(url);
          this.socket = socket;
          control.live.add(socket);
          socket.onopen = () => (this.onopen as ((event: unknown) => void) | null)?.({});
          socket.onmessage = (event) => {
            if (!control.silenced.has(socket)) (this.onmessage as ((event: unknown) => void) | null)?.(event);
          };
          socket.onclose = (event) => {
            control.live.delete(socket);
            (this.onclose as ((event: unknown) => void) | null)?.(event);
          };
          socket.onerror = () => {};
        });
      }

      get readyState(): number {
        return this.socket?.readyState ?? (this.closedEarly ? 3 : 0);
      }

      send(data: string): void {
        if (this.socket && !control.silenced.has(this.socket)) this.socket.send(data);
      }

      close(code?: number): void {
        if (this.socket) this.socket.close(code);
        else this.closedEarly = true;
      }
    };
  })();
}

/** A device of `userId`: the SDK on the local runtime (or `options.apiUrl`), started and connected. */
export const startNotify = async (
  runtime: Runtime,
  userId: string,
  options: Partial<NotifyOptions> = {},
): Promise<Notify> => {
  const notify = createNotify({
    apiUrl: runtime.httpUrl,
    wsUrl: runtime.wsUrl,
    WebSocket: WebSocket as never,
    backoff: { initialMs: 50, maxMs: 200 },
    getToken: () => runtime.mintUserToken(userId),
    ...options,
  });
  await notify.start();
  await eventually(
    () => notify.realtime.state,
    (state) => state === 'connected',
  );
  return notify;
};

/** Notifications titled `titles` to `userId` (in-app and realtime), one after another: their ids are in order. */
export const sendTitled = async (service: NotifyService, userId: string, ...titles: string[]) => {
  for (const title of titles) {
    await service.createNotification({
      event_type: 'tests.inbox',
      title,
      recipient_ids: [userId],
      channels: ['in_app', 'realtime'],
    });
  }
};

/** A notification to `userId` with `extra` fields (category, tags, url, actions). */
export const sendWithExtras = async (
  service: NotifyService,
  userId: string,
  title: string,
  extra: Record<string, unknown>,
): Promise<void> => {
  await service.createNotification({
    event_type: 'tests.inbox',
    title,
    recipient_ids: [userId],
    channels: ['in_app', 'realtime'],
    ...extra,
  } as Parameters<NotifyService['createNotification']>[0]);
};
