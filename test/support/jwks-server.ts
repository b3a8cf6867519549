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
 *   idp.publishJwk(weak.publicJwk);                   // a public key the test signs with itself (weakRsaKey)
 *   idp.behave('oversized', 0, 8 << 20);               // the key set padded to 8 MiB, streamed without a length
 *   await idp.stop();
 */
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
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
  /** Publishes a public JWK as given (keys jose will not generate or sign with, such as 1024-bit RSA). */
  publishJwk(jwk: JWK): void;
  /** Stops publishing a key; tokens it signs are then rejected once verifiers refresh the set. */
  removeKey(kid: string): void;
  /**
   * How the key set answers from now on: `normal`; `down` (503); `slow` (answers after `slowMs`, default 6 s,
   * beyond the verifier's 5 s timeout); `garbage` (200 with a body that is no JSON); `oversized` (200 with the
   * key set padded to `oversizedBytes`, default 8 MiB, streamed in chunks without a content-length).
   */
  behave(mode: JwksBehaviour, slowMs?: number, oversizedBytes?: number): void;
  /** Bytes of the oversized key set written before the reader went away (a verifier must stop reading). */
  readonly oversizedBytesSent: number;
  stop(): Promise<void>;
}

export type JwksBehaviour = 'normal' | 'down' | 'slow' | 'garbage' | 'oversized';

export const JWKS_PATH = '/.well-known/jwks.json';

export const generateSigningKey = async (alg: AsymmetricAlg = 'RS256', kid?: string): Promise<SigningKey> => {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const id = kid ?? `${alg.toLowerCase()}-${randomUUID()}`;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: id, alg, use: 'sig' };
  return { kid: id, alg, privateKey, publicJwk };
};

/**
 * An RSA key shorter than RS256 allows (default 1024 bits), which jose will neither generate nor sign with: its
 * public JWK is published with `publishJwk`, and `sign` writes an RS256 token with node:crypto.
 */
export const weakRsaKey = (bits = 1024) => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const kid = `weak-rsa-${randomUUID()}`;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    kid,
    publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } as JWK,
    sign: (claims: Record<string, unknown>): string => {
      const input = `${encode({ alg: 'RS256', kid, typ: 'JWT' })}.${encode(claims)}`;
      return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
    },
  };
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
  let oversizedBytes = 8 * 1024 * 1024;
  let oversizedBytesSent = 0;
  const extraJwks: JWK[] = [];

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
      const keys = [...published.map((key) => key.publicJwk), ...extraJwks];
      if (behaviour === 'oversized') {
        // A valid key set with a long padding member, written chunk by chunk as the reader takes it.
        response.writeHead(200, { 'content-type': 'application/jwk-set+json' });
        const chunk = 'x'.repeat(64 * 1024);
        oversizedBytesSent = 0;
        const head = `${JSON.stringify({ keys }).slice(0, -1)},"padding":"`;
        response.write(head);
        const writeMore = () => {
          while (oversizedBytesSent < oversizedBytes) {
            if (response.destroyed) return;
            oversizedBytesSent += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', writeMore);
          }
          response.end('"}');
        };
        writeMore();
        return;
      }
      const delay = behaviour === 'slow' ? slowMs : 0;
      const body = JSON.stringify({ keys });
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
    get oversizedBytesSent() {
      return oversizedBytesSent;
    },
    publishJwk: (jwk) => {
      extraJwks.push(jwk);
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
    behave: (mode, delayMs, bytes) => {
      behaviour = mode;
      if (delayMs !== undefined) slowMs = delayMs;
      if (bytes !== undefined) oversizedBytes = bytes;
    },
    stop: () => stopServer(server),
  };
};
