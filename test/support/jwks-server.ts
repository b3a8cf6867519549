/**
 * A real JWKS endpoint for tests: an HTTP server on 127.0.0.1 (free port) serving the public halves of
 * generated RS256/ES256 keys at `/.well-known/jwks.json`.
 *
 *   const idp = await startJwksServer();            // one RS256 and one ES256 key
 *   const env = { ...authEnvFor(idp) };              // SERVICE__AUTH__* pointing at it (see tokens.ts)
 *   const token = await userToken(idp.key('RS256'), { sub: 'u1' });
 *   const next = await idp.addKey('RS256');          // rotation: publish a new key
 *   idp.removeKey(first.kid);                         // ... and retire the old one
 *   idp.fetchCount;                                   // how many times the key set was fetched
 *   await idp.stop();
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK } from 'jose';
import { listenOnLoopback, stopServer } from './loopback-server';

export type AsymmetricAlg = 'RS256' | 'ES256';

/** A key the test signs with; its public half is served while it is in the set. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: AsymmetricAlg;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export interface JwksServer {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly origin: string;
  /** The key set address (`SERVICE__AUTH__JWKS_URL`). */
  readonly jwksUrl: string;
  /** Number of requests served for the key set so far. */
  readonly fetchCount: number;
  /** Keys currently published, oldest first. */
  keys(): readonly SigningKey[];
  /** The newest published key of that algorithm; throws when there is none. */
  key(alg?: AsymmetricAlg): SigningKey;
  /** Generates and publishes a new key (rotation). */
  addKey(alg?: AsymmetricAlg, kid?: string): Promise<SigningKey>;
  /** Stops publishing a key; tokens it signs are then rejected once verifiers refresh the set. */
  removeKey(kid: string): void;
  /**
   * How the key set answers from now on: `normal`; `down` (503); `slow` (answers after `slowMs`, default 6 s,
   * beyond the verifier's 5 s timeout); `garbage` (200 with a body that is no JSON).
   */
  behave(mode: JwksBehaviour, slowMs?: number): void;
  stop(): Promise<void>;
}

export type JwksBehaviour = 'normal' | 'down' | 'slow' | 'garbage';

export const JWKS_PATH = '/.well-known/jwks.json';

export const generateSigningKey = async (alg: AsymmetricAlg = 'RS256', kid?: string): Promise<SigningKey> => {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const id = kid ?? `${alg.toLowerCase()}-${randomUUID()}`;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: id, alg, use: 'sig' };
  return { kid: id, alg, privateKey, publicJwk };
};

export interface JwksServerOptions {
  /** Keys to generate at start; default one RS256 and one ES256. */
  readonly algs?: readonly AsymmetricAlg[];
}

export const startJwksServer = async (options: JwksServerOptions = {}): Promise<JwksServer> => {
  const published: SigningKey[] = [];
  for (const alg of options.algs ?? ['RS256', 'ES256']) published.push(await generateSigningKey(alg));
  let fetchCount = 0;
  let behaviour: JwksBehaviour = 'normal';
  let slowMs = 6_000;

  const server: Server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === JWKS_PATH) {
      fetchCount += 1;
      if (behaviour === 'down') {
        response.writeHead(503, { 'content-type': 'text/plain' });
        response.end('unavailable');
        return;
      }
      if (behaviour === 'garbage') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('<html>not a key set');
        return;
      }
      const delay = behaviour === 'slow' ? slowMs : 0;
      const body = JSON.stringify({ keys: published.map((key) => key.publicJwk) });
      setTimeout(() => {
        if (response.destroyed) return;
        response.writeHead(200, {
          'content-type': 'application/jwk-set+json',
          'cache-control': 'max-age=300',
        });
        response.end(body);
      }, delay);
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":"not found"}');
  });
  const origin = await listenOnLoopback(server);

  return {
    origin,
    jwksUrl: `${origin}${JWKS_PATH}`,
    get fetchCount() {
      return fetchCount;
    },
    keys: () => [...published],
    key: (alg = 'RS256') => {
      const newest = published.filter((key) => key.alg === alg).at(-1);
      if (!newest) throw new Error(`no ${alg} key is published`);
      return newest;
    },
    addKey: async (alg = 'RS256', kid) => {
      const key = await generateSigningKey(alg, kid);
      published.push(key);
      return key;
    },
    removeKey: (kid) => {
      const index = published.findIndex((key) => key.kid === kid);
      if (index === -1) throw new Error(`key ${kid} is not published`);
      published.splice(index, 1);
    },
    behave: (mode, delayMs) => {
      behaviour = mode;
      if (delayMs !== undefined) slowMs = delayMs;
    },
    stop: () => stopServer(server),
  };
};
