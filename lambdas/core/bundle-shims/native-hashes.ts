import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

/**
 * Stands in for `@smithy/core/checksum` in the Lambda bundles (an esbuild alias, lib/constructs/bundling.ts).
 * Every SDK client takes `Sha256` (SigV4 signing) and SQS `Md5` (checking message bodies) from it; the SDK's
 * classes use node:crypto but carry pure-JS fallbacks for a Node without it (≈ 5 KiB) that Lambda never runs,
 * and nothing the functions call uses the module's other exports. The same classes on node:crypto alone:
 * test/unit/lambda-bundle.test.ts hashes the same inputs with both and compares every digest.
 */

type SourceData = string | ArrayBuffer | ArrayBufferView;

/** What the SDK hands a hash: strings as UTF-8, any view or buffer as its bytes. */
const bytesOf = (data: SourceData): string | Buffer => {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
};

const asUint8Array = (digest: Buffer): Uint8Array =>
  new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);

/** SHA-256, or HMAC-SHA256 when made with a secret (the SDK's `Checksum` interface). */
export class Sha256 {
  readonly digestLength = 32;
  private hash: Hash | Hmac;
  private finished = false;
  private readonly isHmac: boolean;

  constructor(private readonly secret?: SourceData) {
    this.isHmac = Boolean(secret);
    this.hash = this.create();
  }

  update(data: SourceData): void {
    if (this.finished) throw new Error('Attempted to update an already finished hash.');
    this.hash.update(bytesOf(data));
  }

  async digest(): Promise<Uint8Array> {
    // An HMAC cannot be copied: like the SDK's class, it is finished by its digest; a plain hash is not.
    if (this.isHmac) {
      this.finished = true;
      return asUint8Array(this.hash.digest());
    }
    return asUint8Array((this.hash as Hash).copy().digest());
  }

  reset(): void {
    this.hash = this.create();
    this.finished = false;
  }

  private create(): Hash | Hmac {
    return this.isHmac && this.secret !== undefined
      ? createHmac('sha256', bytesOf(this.secret))
      : createHash('sha256');
  }
}

/** MD5, which SQS uses to check the bodies it was sent and hands out. */
export class Md5 {
  readonly digestLength = 16;
  private hash = createHash('md5');

  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }

  async digest(): Promise<Uint8Array> {
    return asUint8Array(this.hash.copy().digest());
  }

  reset(): void {
    this.hash = createHash('md5');
  }
}
