import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ConnectionsCall = 'post' | 'get' | 'delete';

export interface LiveConnectionsEndpoint {
  /** Base URL for the `@connections` client (`NOTIFY_WS_CALLBACK_URL`). */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * An `@connections` endpoint answering as API Gateway does for connections that are all open: a post succeeds
 * (200), GetConnection says the client was active just now, DeleteConnection succeeds (204). For audiences too
 * large for real sockets on one machine (bench/scale.ts, the segmented broadcast test); every call is reported
 * with the connection id. Listens on 127.0.0.1 only.
 */
export const startLiveConnectionsEndpoint = async (
  onCall: (call: ConnectionsCall, connectionId: string) => void,
): Promise<LiveConnectionsEndpoint> => {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const connectionId = decodeURIComponent((request.url ?? '').split('/@connections/')[1] ?? '');
      if (request.method === 'POST') {
        onCall('post', connectionId);
        response.writeHead(200).end();
      } else if (request.method === 'GET') {
        onCall('get', connectionId);
        const now = new Date().toISOString();
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ connectedAt: now, lastActiveAt: now, identity: { sourceIp: '127.0.0.1' } }));
      } else {
        onCall('delete', connectionId);
        response.writeHead(204).end();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
