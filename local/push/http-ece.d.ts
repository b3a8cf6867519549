/** The part of `http_ece` (RFC 8188 / RFC 8291, no types of its own) the Web Push stand-in uses. */
declare module 'http_ece' {
  import type { ECDH } from 'node:crypto';

  /** Decrypts an `aes128gcm` body with the receiver's key and auth secret; throws when it does not decrypt. */
  export function decrypt(
    buffer: Buffer,
    params: { version: 'aes128gcm'; privateKey: ECDH; authSecret: Buffer | string },
  ): Buffer;
}
