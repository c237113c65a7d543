import { EmberscopeError } from "../domain/errors";

/**
 * A Web request's body read into memory up to `limit` bytes: refused by its Content-Length before
 * anything is read, and cut (the stream cancelled) as soon as it grows past the limit. For the
 * small JSON bodies of tRPC and MCP; files stream to disk through /api/imports.
 */
export async function readBoundedBody(req: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = () => new EmberscopeError("REQUEST_TOO_LARGE", `The request body exceeds ${limit} bytes.`, { details: { limit } });
  if (Number(req.headers.get("content-length") ?? 0) > limit) throw tooLarge();
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
