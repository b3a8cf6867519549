/**
 * A push stand-in for testing the local plumbing around the providers' stand-ins (start, settings, "what did my
 * devices receive", marking a token dead), not a provider: it speaks no provider's protocol. `POST /send` with
 * `{"token", "push_id", "payload"}` records the push (200), or answers 410 for a token marked dead.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PushProvider } from '../../common/settings';
import type { PushStandIn, ReceivedPush } from '../../local/push/stand-in';
import type { PushStandInStarter } from '../../local/push/stand-ins';

export const recordingStandIn =
  (provider: PushProvider): PushStandInStarter =>
  async () => {
    const received: ReceivedPush[] = [];
    const dead = new Set<string>();
    const server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', () => {
        const { token, push_id, payload } = JSON.parse(text) as {
          token: string;
          push_id: string;
          payload: unknown;
        };
        if (dead.has(token)) {
          response.writeHead(410).end();
          return;
        }
        received.push({
          provider,
          token,
          push_id,
          headers: { 'content-type': String(request.headers['content-type']) },
          payload,
          at: new Date().toISOString(),
        });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const standIn: PushStandIn = {
      provider,
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      received: () => [...received],
      markDead: (token) => dead.add(token),
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
    // Credentials generated at start, as a provider stand-in's are.
    return {
      standIn,
      provider,
      credentials: { access_token: randomBytes(16).toString('hex') },
      settings: {},
    };
  };
