/**
 * The AsyncAPI 3.0 description of the WebSocket API, built from the client frame schemas (the ones the frame
 * handlers validate with, lambdas/domain/realtime/client-frames.ts) and the server frame schemas
 * (lambdas/domain/realtime/server-frames.ts). The document describes the service: it receives client frames
 * and sends server frames. `npm run api-docs` writes it to docs/api/asyncapi.json.
 */

import { describeBound } from '../lambdas/core/identifiers';
import { timestamp } from '../lambdas/core/response-schemas';
import { MAX_BROADCAST_PAYLOAD_BYTES } from '../lambdas/domain/realtime/broadcast-schema';
import {
  CLIENT_FRAMES,
  type ClientFrameType,
  MAX_CLIENT_FRAME_BYTES,
} from '../lambdas/domain/realtime/client-frames';
import {
  MAX_CHANNELS_PER_CONNECTION,
  MAX_CONNECTION_SECS,
  MAX_REPLAYED_FRAMES,
  REALTIME_DEFAULTS,
} from '../lambdas/domain/realtime/config';
import {
  broadcastFrameSchema,
  gatewayErrorFrameSchema,
  SERVER_FRAMES,
} from '../lambdas/domain/realtime/server-frames';
import { TOPIC_NAME } from '../lambdas/domain/topics/names';
import { componentSchemas, jsonSchemaOf } from './json-schema';

type Json = Record<string, unknown>;
type ServerFrameType = keyof typeof SERVER_FRAMES;

const CHANNEL = '#/channels/connection';
const settings = REALTIME_DEFAULTS;
const KIB = MAX_CLIENT_FRAME_BYTES / 1024;

/** What each client frame does, and the frames that answer it. */
const CLIENT_FRAME_DOCS: Record<ClientFrameType, { summary: string; replies: ServerFrameType[] }> = {
  auth: {
    summary:
      `Authenticates a connection opened without \`?token\` (within ${settings.authTimeoutSecs} s of opening), or ` +
      "renews the token of an authenticated one before it expires (same user only; another user's token is error " +
      '`forbidden`). A service token is error `forbidden`, an invalid token error `unauthorized`; another `auth` ' +
      'may follow within the deadline. Answered by `ack`; the ' +
      'first authentication is followed by the `session` frame.',
    replies: ['ack', 'session', 'error'],
  },
  subscribe: {
    summary: 'Subscribes the connection to a channel (naming rules in the channel description).',
    replies: ['ack', 'error'],
  },
  unsubscribe: { summary: 'Leaves a channel.', replies: ['ack', 'error'] },
  'join.room': {
    summary:
      'Subscribes to `room:<room_id>` and makes the user a presence member of that room: the room’s subscribers ' +
      'get `presence` frames (`join`, `update`, `leave`).',
    replies: ['ack', 'error'],
  },
  'join.topic': { summary: 'Subscribes to `topic:<topic>` (an existing topic).', replies: ['ack', 'error'] },
  'presence.update': {
    summary: 'Sets the user’s status; rooms the user is in get a `presence` frame with `change: update`.',
    replies: ['ack', 'error'],
  },
  reconnect: {
    summary:
      `Resumes a session within ${settings.sessionTtlSecs} s of its connection’s end (for any reason, a clean ` +
      `close included): its channels and rooms are restored and the frames sent to them meanwhile (at most ` +
      `${MAX_REPLAYED_FRAMES}) are replayed in order right after the \`ack\`, whose \`replayed\` says how many. ` +
      'An unknown or expired session, or another user’s, is error `session_expired`.',
    replies: ['ack', 'error'],
  },
  heartbeat: {
    summary:
      `Keeps the connection alive: send one every ${settings.heartbeatIntervalMs / 1000} s ` +
      '(`heartbeat_interval_ms` of the `session` frame). Answered by `heartbeat.ack` from API Gateway itself, ' +
      'whatever the frame holds: no `id` is repeated and the frame is not validated.',
    replies: ['heartbeat.ack'],
  },
};

/** Frames besides the service's own types: broadcast payloads, and API Gateway's error answer. */
const OTHER_FRAMES = ['broadcast', 'gateway_error'] as const;

const SERVER_FRAME_DOCS: Record<ServerFrameType | (typeof OTHER_FRAMES)[number], string> = {
  session:
    'Sent once after authentication: the session id to give `reconnect`, and the heartbeat interval. The ' +
    'connection is then subscribed to `user:<own id>`.',
  ack: 'Answers a client frame that succeeded (`op` = its type, `id` = its id).',
  error:
    'Answers a client frame that failed (with its `id`), or announces a close the server starts: ' +
    '`unauthorized` (no `auth` in time), `token_expired`, `idle_timeout`.',
  'heartbeat.ack': 'Answers `heartbeat` (always exactly `{"type":"heartbeat.ack"}`).',
  notification:
    'A notification whose `channels` include `toast` or `realtime`, on `user:<recipient>` (one frame per ' +
    'such channel).',
  'notification.state':
    'A feed item of the user changed state (seen, read, archived, unarchived, snoozed, or woken up by its ' +
    'snooze) on any device or by its wake-up: its states after the change, on `user:<user>`, so every device ' +
    'shows the same. Sent again by a repeated call (the same states), and replayed on `reconnect`.',
  'notification.bulk':
    'Many feed items of the user changed at once: the items named in `ids` (POST /notifications/seen), or ' +
    'the items of the default feed delivered by `at` (older than `before` when set; POST /notifications/bulk, ' +
    'POST /notifications/read-all). On `user:<user>`; replayed on `reconnect`.',
  event: 'An event published with POST /events, to subscribers of `topic:<event_type>`.',
  presence:
    'A presence change of a member of a room the connection is subscribed to, in rooms of at most ' +
    '`scale.presence.announce_max` subscribed connections (default 100).',
  'presence.summary':
    'Instead of `presence` frames in larger rooms: how many users are in the room now and how many joined, ' +
    'left or changed status since the last summary; at most one per `scale.presence.summary_secs` (default ' +
    '30 s), only after a change.',
  broadcast:
    'A frame sent with POST /broadcast: its `payload`, delivered as is (any object with a string `type`, at ' +
    `most ${MAX_BROADCAST_PAYLOAD_BYTES / 1024} KiB).`,
  gateway_error:
    'Not the service’s but API Gateway’s own answer, without a `type`, when the function behind a client frame ' +
    'fails or times out: that frame was not processed (no `ack` or `error` follows); send it again.',
};

const messageName = (type: string) => type.replace('.', '_');
const frameComponent = (type: string) =>
  `${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')}Frame`;

/** A client frame's schema: the validated fields plus its `type`, which routes it. */
const clientFramePayload = (type: ClientFrameType): Json => {
  const schema = jsonSchemaOf(CLIENT_FRAMES[type], 'input', 'draft-7') as {
    properties?: Json;
    required?: string[];
  };
  return {
    ...schema,
    properties: { type: { type: 'string', const: type }, ...schema.properties },
    required: ['type', ...(schema.required ?? [])],
  };
};

const CONNECTION_DESCRIPTION = `One WebSocket connection per client, at \`/ws\`. Every frame, both ways, is a JSON object with a string \`type\`; every client frame may carry an \`id\` (string of at most 64 characters) that its answer repeats (except \`heartbeat.ack\`, which API Gateway itself sends from a fixed template).

**Authentication.** Only user tokens (the REST API's user access token: a JWT, or an opaque token where the deployment introspects them) may connect. Either give the token on the handshake, \`/ws?token=<token>\` (an invalid token fails the handshake with HTTP 401, a service token with 403), or open without one and send \`{"type": "auth", "token": "<token>"}\` within ${settings.authTimeoutSecs} s: otherwise the server sends error \`unauthorized\` and closes the connection, no later than ${settings.authTimeoutSecs + 5} s after it opened. Frames other than \`auth\` and \`heartbeat\` before authentication are answered by error \`unauthorized\`. When the token expires the server sends error \`token_expired\` and closes; send a fresh \`auth\` frame before it does.

**Channels** are named \`<kind>:<name>\`, the name ${describeBound('channelName')} without whitespace, control or bidirectional formatting characters (else error \`validation\`):
- \`user:<user id>\`: one's own only (error \`forbidden\` otherwise); every connection is subscribed to its own after authentication, and notifications arrive there.
- \`room:<room id>\`: any user; \`join.room\` also makes the user a presence member of the room.
- \`topic:<topic name>\`: an existing topic only (error \`not_found\` otherwise); names match \`${TOPIC_NAME.source}\`. Events of type \`<name>\` arrive there.
A connection holds at most ${MAX_CHANNELS_PER_CONNECTION} channels (one more is error \`validation\`).

**Heartbeat.** Send \`heartbeat\` every ${settings.heartbeatIntervalMs / 1000} s (the \`session\` frame's \`heartbeat_interval_ms\`). A connection silent for ${settings.idleTimeoutSecs} s gets error \`idle_timeout\` and is closed, no later than ${settings.idleTimeoutSecs + 30} s after its last frame; the user's presence updates.

**Reconnect and replay.** Keep the \`session_id\` of the \`session\` frame. After a drop, open a new connection, authenticate, and send \`reconnect\` within ${settings.sessionTtlSecs} s: the session's channels and rooms come back and up to ${MAX_REPLAYED_FRAMES} frames sent to them meanwhile are replayed in order after the \`ack\`.

**Close behaviour.** API Gateway cannot choose a close code when the server closes a connection, so every close the server starts is preceded by an \`error\` frame whose \`code\` says why (\`unauthorized\`, \`token_expired\`, \`idle_timeout\`, \`session_taken_over\`) and the close code is 1000 (the local runtime closes with 1000 too). Read the reason from that frame, not from the close code. The only other code a client sees is the gateway's 1009 (a frame over ${KIB} KiB). A connection lives at most ${MAX_CONNECTION_SECS / 3600} h (API Gateway's limit): reconnect then.

**Limits.** A client frame is at most ${KIB} KiB: a larger one closes the connection with 1009; one that reaches the service anyway (in fragments) gets error \`payload_too_large\`. Invalid JSON, an unknown \`type\` or missing or wrong fields get error \`validation\`; unknown extra fields are ignored.`;

export const buildAsyncApi = (): Json => {
  const clientTypes = Object.keys(CLIENT_FRAMES) as ClientFrameType[];
  const serverTypes = Object.keys(SERVER_FRAMES) as ServerFrameType[];
  const serverSchemas: Record<string, Parameters<typeof componentSchemas>[0][string]> = {
    Timestamp: timestamp,
  };
  for (const type of serverTypes) serverSchemas[frameComponent(type)] = SERVER_FRAMES[type];
  serverSchemas.BroadcastFrame = broadcastFrameSchema;
  serverSchemas.GatewayErrorFrame = gatewayErrorFrameSchema;

  const messages: Record<string, Json> = {};
  for (const type of clientTypes) {
    messages[messageName(type)] = {
      name: type,
      title: `${type} (client → server)`,
      summary: CLIENT_FRAME_DOCS[type].summary,
      payload: clientFramePayload(type),
    };
  }
  for (const type of [...serverTypes, ...OTHER_FRAMES]) {
    messages[messageName(type)] = {
      name: type,
      title: `${type} (server → client)`,
      summary: SERVER_FRAME_DOCS[type],
      payload: { $ref: `#/components/schemas/${frameComponent(type)}` },
    };
  }
  const channelMessage = (type: string) => ({ $ref: `${CHANNEL}/messages/${messageName(type)}` });

  const operations: Record<string, Json> = {};
  for (const type of clientTypes) {
    operations[`receive_${messageName(type)}`] = {
      action: 'receive',
      channel: { $ref: CHANNEL },
      summary: `A client sends \`${type}\``,
      messages: [channelMessage(type)],
      reply: {
        channel: { $ref: CHANNEL },
        messages: [...CLIENT_FRAME_DOCS[type].replies, 'gateway_error'].map(channelMessage),
      },
    };
  }
  for (const type of [...serverTypes, ...OTHER_FRAMES]) {
    operations[`send_${messageName(type)}`] = {
      action: 'send',
      channel: { $ref: CHANNEL },
      summary: `The server sends \`${type}\``,
      messages: [channelMessage(type)],
    };
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Notify WebSocket API',
      version: '1.0.0',
      description:
        'Realtime frames of the Notify service: notifications, events, presence and broadcasts to users, ' +
        'over one WebSocket per client. The REST API is described by docs/api/openapi.json (served at ' +
        '`GET /api/v1/openapi.json`); the rules in full are in docs/contract.md.',
      license: { name: 'Apache-2.0' },
    },
    defaultContentType: 'application/json',
    servers: {
      local: {
        host: '127.0.0.1:3000',
        protocol: 'ws',
        pathname: '/ws',
        description: 'the local runtime (`npm start`)',
        security: [{ $ref: '#/components/securitySchemes/queryToken' }],
      },
      deployed: {
        host: '{host}',
        protocol: 'wss',
        pathname: '/ws',
        description: 'a deployed stage (the stack output `WebSocketUrl`)',
        variables: { host: { default: 'ws.example.com' } },
        security: [{ $ref: '#/components/securitySchemes/queryToken' }],
      },
    },
    channels: {
      connection: {
        address: '/ws',
        title: 'A client connection',
        description: CONNECTION_DESCRIPTION,
        messages: Object.fromEntries(
          Object.keys(messages).map((name) => [name, { $ref: `#/components/messages/${name}` }]),
        ),
        bindings: {
          ws: {
            query: {
              type: 'object',
              properties: {
                token: {
                  type: 'string',
                  description: 'a user access token; or authenticate with an `auth` frame',
                },
              },
            },
            bindingVersion: '0.1.0',
          },
        },
      },
    },
    operations,
    components: {
      schemas: componentSchemas(serverSchemas, 'output', '#/components/schemas/', 'draft-7'),
      messages,
      securitySchemes: {
        queryToken: {
          type: 'httpApiKey',
          in: 'query',
          name: 'token',
          description:
            'A user access token on the handshake (`?token=`); or none, then an `auth` frame within ' +
            `${settings.authTimeoutSecs} s. Service tokens are refused (403).`,
        },
      },
    },
  };
};
