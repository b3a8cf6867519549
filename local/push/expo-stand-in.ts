import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type PushStandIn, type ReceivedPush, readBody } from './stand-in';

/*
 * Expo's push service on 127.0.0.1: `POST /--/api/v2/push/send` with one message or an array of up to 100, each
 * answered by a push ticket as Expo answers it (`{"data": [{"status": "ok", "id"}]}`, or a ticket error such as
 * `DeviceNotRegistered` for a token marked dead), request errors as `{"errors": [{"code", "message"}]}`.
 */

/** An answer the stand-in gives instead of its own, for tests of the sender's classification. */
export type ExpoFault =
  | { readonly status: number; readonly retryAfter?: string }
  | { readonly ticketError: string }
  /** No answer at all until the stand-in closes: a send cut off by a crash of its sender. */
  | { readonly hang: true };

export interface ExpoStandIn extends PushStandIn {
  /** The next `times` messages get this answer, before any check of theirs. */
  failNext(fault: ExpoFault, times?: number): void;
  /** Messages held unanswered (`hang` faults), as they arrived. */
  held(): readonly ReceivedPush[];
}

export interface ExpoStandInOptions {
  /** When set, requests must carry `Authorization: Bearer <accessToken>` (Expo's enhanced push security). */
  readonly accessToken?: string;
}

const SEND_PATH = '/--/api/v2/push/send';
const MAX_MESSAGES = 100;
const MAX_MESSAGE_BYTES = 4096;
const READ_LIMIT = 1024 * 1024;
const EXPO_TOKEN = /^Expo(nent)?PushToken\[[^\]]+\]$/;
const PRIORITIES = new Set(['default', 'normal', 'high']);

const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const requestError = (res: ServerResponse, status: number, code: string, message: string) =>
  answer(res, status, { errors: [{ code, message }] });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What is wrong with a message's fields (Expo answers the whole request 400 `VALIDATION_ERROR`). */
const shapeProblem = (message: unknown): string | undefined => {
  if (!isObject(message)) return 'a message must be an object';
  if (typeof message.to !== 'string') return '"to" must be a push token';
  for (const field of ['title', 'body', 'sound', 'subtitle', 'categoryId', 'channelId'] as const) {
    if (message[field] !== undefined && typeof message[field] !== 'string')
      return `"${field}" must be a string`;
  }
  if (message.data !== undefined && !isObject(message.data)) return '"data" must be an object';
  if (message.priority !== undefined && !PRIORITIES.has(message.priority as string)) {
    return '"priority" must be one of default, normal, high';
  }
  for (const field of ['badge', 'ttl', 'expiration'] as const) {
    if (message[field] !== undefined && !Number.isInteger(message[field]))
      return `"${field}" must be an integer`;
  }
  return undefined;
};

const headersOf = (req: IncomingMessage): Record<string, string> =>
  Object.fromEntries(
    Object.entries(req.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
    ),
  );

const receivedPush = (message: Record<string, unknown>, headers: Record<string, string>): ReceivedPush => {
  const ids = isObject(message.data) && isObject(message.data._notify) ? message.data._notify : {};
  return {
    provider: 'expo',
    token: String(message.to),
    push_id: typeof ids.push_id === 'string' ? ids.push_id : null,
    headers,
    payload: message,
    at: new Date().toISOString(),
  };
};

export const startExpoStandIn = async (options: ExpoStandInOptions = {}): Promise<ExpoStandIn> => {
  const received: ReceivedPush[] = [];
  const held: ReceivedPush[] = [];
  const dead = new Set<string>();
  const faults: ExpoFault[] = [];

  const ticketFor = (message: Record<string, unknown>, headers: Record<string, string>) => {
    const token = message.to as string;
    if (!EXPO_TOKEN.test(token) || dead.has(token)) {
      return {
        status: 'error',
        message: `"${token}" is not a registered push notification recipient`,
        details: { error: 'DeviceNotRegistered', expoPushToken: token },
      };
    }
    if (Buffer.byteLength(JSON.stringify(message)) > MAX_MESSAGE_BYTES) {
      return {
        status: 'error',
        message: `Message too big: over ${MAX_MESSAGE_BYTES} bytes`,
        details: { error: 'MessageTooBig' },
      };
    }
    received.push(receivedPush(message, headers));
    return { status: 'ok', id: randomUUID() };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== SEND_PATH) return requestError(res, 404, 'NOT_FOUND', 'Not found');
    if (req.method !== 'POST') return requestError(res, 405, 'METHOD_NOT_ALLOWED', 'Use POST');
    if (options.accessToken && req.headers.authorization !== `Bearer ${options.accessToken}`) {
      return requestError(res, 401, 'UNAUTHORIZED', 'The bearer token is invalid');
    }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      return requestError(res, 400, 'VALIDATION_ERROR', 'Content-Type must be application/json');
    }
    const body = await readBody(req, READ_LIMIT);
    if (!body) return requestError(res, 413, 'PAYLOAD_TOO_LARGE', 'Request too large');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return requestError(res, 400, 'VALIDATION_ERROR', 'The body is not JSON');
    }
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    if (messages.length === 0 || messages.length > MAX_MESSAGES) {
      return requestError(res, 400, 'PUSH_TOO_MANY_NOTIFICATIONS', `Send 1 to ${MAX_MESSAGES} messages`);
    }
    const problem = messages.map(shapeProblem).find((found) => found !== undefined);
    if (problem) return requestError(res, 400, 'VALIDATION_ERROR', problem);
    const fault = faults.shift();
    const headers = headersOf(req);
    if (fault && 'hang' in fault) {
      for (const message of messages as Record<string, unknown>[]) held.push(receivedPush(message, headers));
      return; // the connection stays open, unanswered, until `close`
    }
    if (fault && 'status' in fault) {
      return answer(
        res,
        fault.status,
        {
          errors: [
            { code: fault.status === 429 ? 'TOO_MANY_REQUESTS' : 'INTERNAL_SERVER_ERROR', message: 'fault' },
          ],
        },
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    }
    const tickets = messages.map((message: Record<string, unknown>) =>
      fault
        ? { status: 'error', message: fault.ticketError, details: { error: fault.ticketError } }
        : ticketFor(message, headers),
    );
    // One message: Expo answers a ticket object; an array: an array of tickets.
    return answer(res, 200, { data: Array.isArray(parsed) ? tickets : tickets[0] });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => requestError(res, 500, 'INTERNAL_SERVER_ERROR', 'stand-in failure'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    provider: 'expo',
    url: `http://127.0.0.1:${port}`,
    received: () => [...received],
    held: () => [...held],
    markDead: (token) => {
      dead.add(token);
    },
    failNext: (fault, times = 1) => {
      for (let index = 0; index < times; index += 1) faults.push(fault);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
