import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { WEBSOCKET_FRAME_MAX_BYTES } from '../../common/limits';
import type { WebSocketMockRoute, WebSocketRoute } from '../../lib/wiring';
import type { LocalAccess } from '../access';
import { AWS_LIKE_ODDS, type Delivery, exactDelivery } from '../delivery';
import type { InvokeFunction } from '../lambda/types';
import type { GatewayMeter } from '../metering/gateway-meter';
import { apiGatewayId, apiGatewayTime, sourceIpOf } from './ids';

/** API Gateway WebSocket limits (docs/local-runtime.md cites them). */
export const WS_FRAME_LIMIT_BYTES = WEBSOCKET_FRAME_MAX_BYTES;
export const WS_MESSAGE_LIMIT_BYTES = 128 * 1024;
export const WS_IDLE_TIMEOUT_MS = 10 * 60 * 1000;
export const WS_MAX_CONNECTION_MS = 2 * 60 * 60 * 1000;

/** Close code API Gateway uses when it ends a connection itself (idle, 2-hour limit, shutdown). */
const GOING_AWAY = 1001;
/** A close without a close frame (the client went away before or without one). */
const ABNORMAL_CLOSURE = 1006;

export interface WebSocketGatewayOptions {
  readonly routes: readonly WebSocketRoute[];
  /** Routes the gateway answers itself with a fixed frame (MOCK integration + route response): no invocation. */
  readonly mockRoutes?: readonly WebSocketMockRoute[];
  readonly invoke: InvokeFunction;
  /** Stage name: the `@connections` API lives under `/<stage>/@connections`. */
  readonly stage: string;
  readonly apiId?: string;
  readonly idleTimeoutMs?: number;
  readonly maxConnectionMs?: number;
  /** Counts messages (both ways) and connection time, as API Gateway bills them (benchmarks). */
  readonly meter?: GatewayMeter;
  /** Refuses `@connections` calls from functions not granted `execute-api:ManageConnections`. */
  readonly access?: LocalAccess;
  /** AWS-like delivery: `$disconnect` is sometimes not delivered, as API Gateway promises only best effort. */
  readonly delivery?: Delivery;
  /**
   * How long after `$connect` answers the socket opens (API Gateway completes the handshake after its integration
   * returns; until then a post to the connection is answered 410, as here before the socket is registered).
   * Default 0: at once.
   */
  readonly openDelayMs?: number;
}

interface Connection {
  readonly id: string;
  readonly socket: WebSocket;
  readonly connectedAt: number;
  lastActiveAt: number;
  readonly sourceIp: string;
  readonly userAgent: string;
  readonly domainName: string;
  idleTimer: NodeJS.Timeout | undefined;
  readonly maxTimer: NodeJS.Timeout;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** WebSocket events use the 1.0 shape: header names as sent, plus the multi-value maps. */
/**
 * The single-value map (the last value of a name) and the multi-value map of name/value pairs from the client,
 * gathered in a Map so that `__proto__` or `constructor` is a name like any other.
 */
const valueMaps = (pairs: Iterable<readonly [string, string]>) => {
  const values = new Map<string, string[]>();
  for (const [name, value] of pairs) values.set(name, [...(values.get(name) ?? []), value]);
  return {
    single: Object.fromEntries([...values].map(([name, all]) => [name, all.at(-1) as string])),
    multi: Object.fromEntries(values),
  };
};

const headersOf = (request: IncomingMessage) => {
  const raw = request.rawHeaders;
  const pairs: [string, string][] = [];
  for (let index = 0; index + 1 < raw.length; index += 2)
    pairs.push([raw[index] ?? '', raw[index + 1] ?? '']);
  const { single, multi } = valueMaps(pairs);
  return { headers: single, multiValueHeaders: multi };
};

const queryOf = (url: URL) => {
  if (!url.search) return {};
  const { single, multi } = valueMaps(url.searchParams);
  return { queryStringParameters: single, multiValueQueryStringParameters: multi };
};

/**
 * Makes the socket's frame parser close with 1009 on any single data frame over API Gateway's 32 KiB frame
 * limit (ws itself only checks the whole message, against `maxPayload`). Relies on ws 8's Receiver internals.
 */
const enforceFrameLimit = (socket: WebSocket): void => {
  const receiver = (socket as unknown as { _receiver?: Record<string, unknown> })._receiver;
  const original = receiver?.haveLength as ((cb: unknown) => void) | undefined;
  if (!receiver || typeof original !== 'function') {
    throw new Error('ws internals changed: cannot enforce the 32 KiB frame limit');
  }
  receiver.haveLength = function (this: Record<string, unknown>, cb: (error: Error) => void) {
    if ((this._opcode as number) < 0x08 && (this._payloadLength as number) > WS_FRAME_LIMIT_BYTES) {
      const createError = this.createError as (...args: unknown[]) => Error;
      cb(
        createError.call(
          this,
          RangeError,
          'Frame size exceeded',
          false,
          1009,
          'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH',
        ),
      );
      return;
    }
    original.call(this, cb);
  };
};

/** Sends a message as API Gateway does: split into frames of at most 32 KiB. */
const sendFragmented = (socket: WebSocket, data: Buffer, binary: boolean): void => {
  if (data.length <= WS_FRAME_LIMIT_BYTES) {
    socket.send(data, { binary, fin: true });
    return;
  }
  for (let offset = 0; offset < data.length; offset += WS_FRAME_LIMIT_BYTES) {
    const chunk = data.subarray(offset, offset + WS_FRAME_LIMIT_BYTES);
    socket.send(chunk, { binary, fin: offset + WS_FRAME_LIMIT_BYTES >= data.length });
  }
};

const managementError = (response: ServerResponse, status: number, errorType: string, message: string) => {
  const body = JSON.stringify({ message });
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-amzn-errortype': errorType,
    'x-amzn-requestid': apiGatewayId(),
  });
  response.end(body);
};

const readLimited = (request: IncomingMessage, limit: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(over ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });

/**
 * API Gateway WebSocket API stand-in: `$connect` decides the handshake, messages are routed on
 * `$request.body.type` (else `$default`), `$disconnect` follows a close (always, or with AWS-like delivery
 * nearly always), and the `@connections` management
 * API (PostToConnection, GetConnection, DeleteConnection) answers as AWS does, 410 GoneException included.
 */
export const createWebSocketGateway = (options: WebSocketGatewayOptions) => {
  const apiId = options.apiId ?? 'local';
  const idleTimeoutMs = options.idleTimeoutMs ?? WS_IDLE_TIMEOUT_MS;
  const maxConnectionMs = options.maxConnectionMs ?? WS_MAX_CONNECTION_MS;
  const routes = new Map(options.routes.map((route) => [route.routeKey, route]));
  const mockReplies = new Map(
    (options.mockRoutes ?? []).map((route) => [route.routeKey, JSON.stringify(route.reply)]),
  );
  const connections = new Map<string, Connection>();
  const pending = new Set<Promise<unknown>>();
  const chosenProtocol = new WeakMap<IncomingMessage, string>();
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: WS_MESSAGE_LIMIT_BYTES,
    perMessageDeflate: false,
    handleProtocols: (_protocols, request) => chosenProtocol.get(request) ?? false,
  });
  const managementPrefix = `/${options.stage}/@connections/`;
  const chooser = (options.delivery ?? exactDelivery()).chooser('websocket');

  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise);
    promise.finally(() => pending.delete(promise)).catch(() => {});
    return promise;
  };

  const invokeRoute = (routeKey: string, event: unknown) => {
    const route = routes.get(routeKey);
    if (!route) return undefined;
    return track(options.invoke({ ...route, id: `ws.${routeKey}` }, event));
  };

  const baseContext = (
    connection: Pick<Connection, 'id' | 'connectedAt' | 'sourceIp' | 'userAgent' | 'domainName'>,
  ) => {
    const now = Date.now();
    return {
      stage: options.stage,
      connectedAt: connection.connectedAt,
      requestTimeEpoch: now,
      requestTime: apiGatewayTime(now),
      identity: { sourceIp: connection.sourceIp, userAgent: connection.userAgent },
      requestId: apiGatewayId(),
      extendedRequestId: apiGatewayId(),
      domainName: connection.domainName,
      connectionId: connection.id,
      apiId,
      messageDirection: 'IN',
    };
  };

  const touch = (connection: Connection) => {
    connection.lastActiveAt = Date.now();
    clearTimeout(connection.idleTimer);
    connection.idleTimer = setTimeout(() => connection.socket.close(GOING_AWAY, 'Going away'), idleTimeoutMs);
  };

  const rejectHandshake = (socket: Duplex, status: number, body: string) => {
    if (socket.destroyed) return;
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
        'Connection: close\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };

  const onMessage = (connection: Connection, data: RawData, isBinary: boolean) => {
    touch(connection);
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    options.meter?.webSocketMessage('in', buffer.length);
    const body = isBinary ? buffer.toString('base64') : buffer.toString('utf8');
    let routeKey = '$default';
    if (!isBinary) {
      try {
        const parsed: unknown = JSON.parse(body);
        const type = isRecord(parsed) ? parsed.type : undefined;
        const known = typeof type === 'string' && (routes.has(type) || mockReplies.has(type));
        if (known && !type.startsWith('$')) routeKey = type;
      } catch {
        // Not JSON: the selection expression yields nothing, so $default takes it.
      }
    }
    const reply = (text: string) => {
      if (connection.socket.readyState === WebSocket.OPEN) {
        const data = Buffer.from(text, 'utf8');
        options.meter?.webSocketMessage('out', data.length);
        sendFragmented(connection.socket, data, false);
      }
    };
    const mockReply = mockReplies.get(routeKey);
    if (mockReply !== undefined) {
      // A MOCK integration: the route response's template goes back, and no function runs.
      reply(mockReply);
      return;
    }
    const context = { ...baseContext(connection), routeKey, eventType: 'MESSAGE', messageId: apiGatewayId() };
    const invocation = invokeRoute(routeKey, { requestContext: context, body, isBase64Encoded: isBinary });
    if (!invocation) {
      // API Gateway's answer when no route matches and no $default exists.
      reply(
        JSON.stringify({ message: 'Forbidden', connectionId: connection.id, requestId: context.requestId }),
      );
      return;
    }
    invocation.then(
      (result) => {
        // A two-way route: the integration's `body` goes back to the client.
        if (isRecord(result) && typeof result.body === 'string' && result.body !== '') reply(result.body);
      },
      () =>
        reply(
          JSON.stringify({
            message: 'Internal server error',
            connectionId: connection.id,
            requestId: context.requestId,
          }),
        ),
    );
  };

  /** `$disconnect` of a connection whose `$connect` succeeded, however it ended. */
  const disconnect = (connection: Parameters<typeof baseContext>[0], code: number, reason: string) => {
    const context = {
      ...baseContext(connection),
      routeKey: '$disconnect',
      eventType: 'DISCONNECT',
      disconnectStatusCode: code,
      disconnectReason: reason,
    };
    // API Gateway delivers $disconnect on a best-effort basis: the service must not depend on it.
    if (chooser.chance(AWS_LIKE_ODDS.lostDisconnect)) return;
    invokeRoute('$disconnect', {
      headers: {},
      multiValueHeaders: {},
      requestContext: context,
      isBase64Encoded: false,
    })?.catch(() => {});
  };

  const onClose = (connection: Connection, code: number, reason: Buffer) => {
    connections.delete(connection.id);
    options.meter?.webSocketClosed(connection.id);
    clearTimeout(connection.idleTimer);
    clearTimeout(connection.maxTimer);
    disconnect(connection, code, reason.toString('utf8'));
  };

  const handleUpgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on('error', () => socket.destroy());
    const url = new URL(request.url ?? '/', 'http://localhost');
    const { headers, multiValueHeaders } = headersOf(request);
    const identity = {
      id: apiGatewayId(),
      connectedAt: Date.now(),
      sourceIp: sourceIpOf(request.socket.remoteAddress),
      userAgent: request.headers['user-agent'] ?? '',
      domainName: request.headers.host ?? '127.0.0.1',
    };
    const connectEvent = {
      headers,
      multiValueHeaders,
      ...queryOf(url),
      requestContext: { ...baseContext(identity), routeKey: '$connect', eventType: 'CONNECT' },
      isBase64Encoded: false,
    };
    let result: unknown;
    try {
      result = await invokeRoute('$connect', connectEvent);
    } catch {
      rejectHandshake(socket, 500, JSON.stringify({ message: 'Internal server error' }));
      return;
    }
    const status = isRecord(result) && typeof result.statusCode === 'number' ? result.statusCode : 200;
    if (status < 200 || status > 299) {
      const body = isRecord(result) && typeof result.body === 'string' ? result.body : '';
      rejectHandshake(socket, status, body);
      return;
    }
    // The client left while `$connect` ran or before the socket opened: it was connected all the same. (A socket
    // whose peer closed is not always destroyed yet, but no longer both readable and writable.)
    const gone = () => socket.destroyed || !socket.readable || !socket.writable;
    const leftEarly = () => {
      socket.destroy();
      disconnect(identity, ABNORMAL_CLOSURE, '');
    };
    if (gone()) return leftEarly();
    const responseHeaders = isRecord(result) && isRecord(result.headers) ? result.headers : {};
    const protocol = Object.entries(responseHeaders).find(
      ([name]) => name.toLowerCase() === 'sec-websocket-protocol',
    )?.[1];
    if (typeof protocol === 'string') chosenProtocol.set(request, protocol);
    if (options.openDelayMs) await new Promise((resolve) => setTimeout(resolve, options.openDelayMs));
    if (gone()) return leftEarly();
    server.handleUpgrade(request, socket, head, (ws) => {
      enforceFrameLimit(ws);
      const connection: Connection = {
        ...identity,
        socket: ws,
        lastActiveAt: identity.connectedAt,
        idleTimer: undefined,
        maxTimer: setTimeout(() => ws.close(GOING_AWAY, 'Going away'), maxConnectionMs),
      };
      touch(connection);
      connections.set(connection.id, connection);
      options.meter?.webSocketOpened(connection.id);
      ws.on('message', (data, isBinary) => onMessage(connection, data, isBinary));
      ws.on('error', () => {});
      ws.once('close', (code, reason) => onClose(connection, code, reason));
    });
  };

  /** The `@connections` management API; returns false when the path is not under this stage's prefix. */
  const handleManagement = async (request: IncomingMessage, response: ServerResponse): Promise<boolean> => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (!path.startsWith(managementPrefix)) return false;
    const connectionId = decodeURIComponent(path.slice(managementPrefix.length));
    const method = request.method ?? 'GET';
    const operation = { POST: 'PostToConnection', GET: 'GetConnection', DELETE: 'DeleteConnection' }[method];
    if (!operation || connectionId === '' || connectionId.includes('/')) {
      request.resume();
      managementError(
        response,
        400,
        'UnsupportedOperationException',
        `The local @connections stand-in does not implement ${method} ${path}`,
      );
      return true;
    }
    try {
      options.access?.checkManageConnections(request.headers, apiId, options.stage, method);
    } catch (error) {
      request.resume();
      const { name, message } = error as Error;
      managementError(response, 403, name, message);
      return true;
    }
    const data = method === 'POST' ? await readLimited(request, WS_MESSAGE_LIMIT_BYTES) : Buffer.alloc(0);
    if (method !== 'POST') request.resume();
    const connection = connections.get(connectionId);
    if (!connection || connection.socket.readyState !== WebSocket.OPEN) {
      managementError(response, 410, 'GoneException', `Connection ${connectionId} is gone`);
      return true;
    }
    if (operation === 'PostToConnection') {
      if (!data) {
        managementError(
          response,
          413,
          'PayloadTooLargeException',
          `Message exceeds the ${WS_MESSAGE_LIMIT_BYTES} byte WebSocket message limit`,
        );
        return true;
      }
      options.meter?.webSocketMessage('out', data.length);
      sendFragmented(connection.socket, data, !isUtf8(data));
      touch(connection);
      response.writeHead(200, { 'content-length': 0, 'x-amzn-requestid': apiGatewayId() });
      response.end();
    } else if (operation === 'GetConnection') {
      options.meter?.connectionChecked?.();
      const body = JSON.stringify({
        connectedAt: new Date(connection.connectedAt).toISOString(),
        identity: { sourceIp: connection.sourceIp, userAgent: connection.userAgent },
        lastActiveAt: new Date(connection.lastActiveAt).toISOString(),
      });
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-amzn-requestid': apiGatewayId(),
      });
      response.end(body);
    } else {
      connection.socket.close(1000, '');
      response.writeHead(204, { 'x-amzn-requestid': apiGatewayId() });
      response.end();
    }
    return true;
  };

  return {
    handleUpgrade: (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
      handleUpgrade(request, socket, head).catch(() => socket.destroy());
    },
    handleManagement,
    get connectionCount(): number {
      return connections.size;
    },
    /** Closes every connection (1001, as API Gateway on shutdown) and waits for the `$disconnect` calls. */
    close: async (): Promise<void> => {
      const closing = [...connections.values()].map(
        (connection) =>
          new Promise<void>((resolve) => {
            connection.socket.once('close', () => resolve());
            connection.socket.close(GOING_AWAY, 'Going away');
            setTimeout(() => {
              connection.socket.terminate();
              resolve();
            }, 1000).unref();
          }),
      );
      await Promise.all(closing);
      await Promise.race([
        Promise.allSettled([...pending]),
        new Promise((resolve) => setTimeout(resolve, 5000).unref()),
      ]);
      server.close();
    },
  };
};
