import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { v7 as uuidv7 } from 'uuid';
import type { CorsPolicy, Wiring } from '../../lib/wiring';
import type { LocalAccess } from '../access';
import type { Delivery } from '../delivery';
import type { InvokeFunction } from '../lambda/types';
import type { GatewayMeter } from '../metering/gateway-meter';
import { API_BASE_PATH, createHttpGateway } from './http';
import { createWebSocketGateway, type WebSocketGatewayOptions } from './websocket';

/** The WebSocket API's path on the local port. */
export const WS_PATH = '/ws';

export class PortInUseError extends Error {
  constructor(readonly port: number) {
    super(`Port ${port} is already in use: stop what runs there or choose another with --port or PORT`);
    this.name = 'PortInUseError';
  }
}

export interface GatewayServerOptions {
  readonly wiring: Pick<Wiring, 'httpRoutes' | 'webSocketRoutes' | 'webSocketMockRoutes'>;
  readonly invoke: InvokeFunction;
  /** Stage of the WebSocket API; `@connections` lives under `/<stage>/@connections`. */
  readonly stage: string;
  readonly port: number;
  readonly host?: string;
  /** The gateway's timing: idle timeout, longest connection, and (tests) how late sockets open. */
  readonly webSocket?: Pick<WebSocketGatewayOptions, 'idleTimeoutMs' | 'maxConnectionMs' | 'openDelayMs'>;
  /** Counts billable requests, messages and connection time (benchmarks). */
  readonly meter?: GatewayMeter;
  /** The REST API's CORS configuration (API Gateway's corsPreflight); none: preflights get 405. */
  readonly cors?: CorsPolicy;
  /** Local least privilege for `@connections` (local/access.ts). */
  readonly access?: LocalAccess;
  /** AWS-like delivery (lost `$disconnect`s; local/delivery.ts); default exact. */
  readonly delivery?: Delivery;
  /** Local-only pages and endpoints (the demo): asked first, answers true when it took the request. */
  readonly localRoutes?: (request: IncomingMessage, response: ServerResponse) => boolean;
}

export interface GatewayServer {
  readonly port: number;
  readonly server: Server;
  /** Lets requests through; until then every request is answered 503 (the runtime is still starting). */
  open(): void;
  readonly webSocket: ReturnType<typeof createWebSocketGateway>;
  close(): Promise<void>;
}

const plainError = (response: ServerResponse, status: number, code: string, message: string) => {
  const body = JSON.stringify({ code, message, request_id: '' });
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
};

/**
 * One HTTP server for both APIs, as the README promises: REST under /api/v1, the WebSocket API at /ws and its
 * `@connections` management API under /<stage>/@connections.
 */
export const startGatewayServer = async (options: GatewayServerOptions): Promise<GatewayServer> => {
  const http = createHttpGateway({
    routes: options.wiring.httpRoutes,
    invoke: options.invoke,
    ...(options.cors ? { cors: options.cors } : {}),
  });
  const webSocket = createWebSocketGateway({
    routes: options.wiring.webSocketRoutes,
    mockRoutes: options.wiring.webSocketMockRoutes ?? [],
    invoke: options.invoke,
    stage: options.stage,
    ...options.webSocket,
    ...(options.meter ? { meter: options.meter } : {}),
    ...(options.access ? { access: options.access } : {}),
    ...(options.delivery ? { delivery: options.delivery } : {}),
  });
  let open = false;

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    if (!open) {
      request.resume();
      plainError(response, 503, 'unavailable', 'The local runtime is starting');
      return;
    }
    if (options.localRoutes?.(request, response)) return;
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (path === API_BASE_PATH || path.startsWith(`${API_BASE_PATH}/`)) {
      options.meter?.httpRequest();
      void http.handle(request, response);
      return;
    }
    webSocket.handleManagement(request, response).then(
      (handled) => {
        if (!handled) void http.handle(request, response);
      },
      () => {
        if (!response.headersSent) plainError(response, 500, 'internal', 'Internal error');
      },
    );
  };

  const server = createServer(onRequest);
  // Node answers an unparseable request (headers over its 16 KiB, bad syntax) with a bare status line; clients
  // of this service expect the contract's error body everywhere.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify({
      code: 'validation',
      message: tooLarge ? 'Request headers are larger than 16 KiB' : 'Malformed HTTP request',
      request_id: uuidv7(),
      details: [{ field: '(headers)', issue: tooLarge ? 'too large' : 'malformed' }],
    });
    socket.end(
      `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.on('upgrade', (request: IncomingMessage, socket, head: Buffer) => {
    const path = (request.url ?? '/').split('?')[0];
    if (!open || path !== WS_PATH) {
      socket.end(
        `HTTP/1.1 ${open ? '404 Not Found' : '503 Service Unavailable'}\r\nConnection: close\r\n\r\n`,
      );
      return;
    }
    webSocket.handleUpgrade(request, socket, head);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(options.port) : error);
    };
    server.once('error', onError);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', onError);
      resolve();
    });
  });

  return {
    port: (server.address() as AddressInfo).port,
    server,
    webSocket,
    open: () => {
      open = true;
    },
    close: async () => {
      await webSocket.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
};
