import { Readable } from "node:stream";
import { readCorpusObject } from "../../../../../../server/services/corpus";
import { webServiceContext } from "../../../../../../server/trpc/context";
import { errorResponse } from "../../../errors";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Parses a single `bytes=a-b`, `bytes=a-` or `bytes=-n` range; null when absent, "invalid" when unsatisfiable. */
function parseRange(header: string | null, size: number): { start: number; end: number } | null | "invalid" {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return "invalid";
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "invalid";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return "invalid";
  return { start, end };
}

/**
 * One evidence file's bytes by content hash, for DuckDB-WASM in the browser: immutable (the URL
 * is the hash), with range requests so Parquet footers and row groups are read on demand.
 * Host and Origin are checked by the boundary ahead of it (proxy.ts, or `emberscope serve`).
 */
export async function GET(req: Request, { params }: { params: Promise<{ hex: string }> }): Promise<Response> {
  try {
    const { hex } = await params;
    const object = await readCorpusObject(webServiceContext(), hex);
    const etag = `"sha256-${hex}"`;
    const headers = new Headers({
      "Content-Type": "application/vnd.apache.parquet",
      "Cache-Control": "public, max-age=31536000, immutable",
      ETag: etag,
      "Accept-Ranges": "bytes",
    });
    if (req.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
    const range = parseRange(req.headers.get("range"), object.size);
    if (range === "invalid") {
      headers.set("Content-Range", `bytes */${object.size}`);
      return new Response(null, { status: 416, headers });
    }
    const { start, end } = range ?? { start: 0, end: object.size - 1 };
    headers.set("Content-Length", String(Math.max(0, end - start + 1)));
    if (range) headers.set("Content-Range", `bytes ${start}-${end}/${object.size}`);
    const status = range ? 206 : 200;
    if (object.size === 0) return new Response(null, { status, headers });
    const body = Readable.toWeb(object.open(start, end)) as unknown as ReadableStream<Uint8Array>;
    return new Response(body, { status, headers });
  } catch (error) {
    return errorResponse(error);
  }
}

// HEAD is answered by Next from GET (same headers, no body).
