/**
 * Reads an IdP answer's body up to a limit. `Content-Length` is only a claim (and absent when chunked), so the
 * bytes are counted as they arrive, after any decompression; past the limit the rest is never read.
 */
export const bodyWithin = async (response: Response, maxBytes: number): Promise<Buffer | undefined> => {
  if (!response.body) return Buffer.alloc(0);
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body.cancel();
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    // Leaving the loop cancels the stream.
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
};
