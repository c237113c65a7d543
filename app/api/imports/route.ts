import { randomBytes } from "node:crypto";
import { createWriteStream, promises as fsp } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { EmberscopeError } from "../../../server/domain/errors";
import { DEFAULT_INPUT_BOUNDS } from "../../../server/evidence/input";
import { ParquetGenerationWriter } from "../../../server/evidence/parquet-writer";
import { refusalOfWebRequest, refusalResponse } from "../../../server/http/guard";
import { importUploadedFile, prepareRunView } from "../../../server/services";
import { startWarmUp } from "../../../server/services/warm-up";
import { locateWorkspace } from "../../../server/store/layout";
import { webServiceContext } from "../../../server/trpc/context";
import { errorResponse } from "../corpus/errors";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

// Once this route is loaded (serve asks for it as it starts, before the first drop), the server
// keeps a spare writer DuckDB for the next upload under 16 MB (ParquetGenerationWriter.keepSpare;
// larger ones write from a worker thread), and under `serve` warms this route's import and the
// run page's first flame tree on a made profile in a throwaway workspace (server/services/warm-up.ts;
// GET /api/imports/warm-up says when it ended); the build, which loads it too, does neither.
if (process.env.NEXT_PHASE !== "phase-production-build") {
  ParquetGenerationWriter.keepSpare();
  if (process.env.EMBERSCOPE_WARM_UP === "1") void startWarmUp();
}

/** The uploaded file's own name (it becomes the run's title and helps format detection), made safe. */
function safeFileName(raw: string | null): string {
  const base = (raw ?? "").split(/[\\/]/).pop() ?? "";
  const cleaned = base.replace(/[^\w.\-+@ ()]/g, "_").replace(/^\.+/, "").slice(0, 200);
  return cleaned || "upload.bin";
}

/**
 * Upload transport for imports.import: after the boundary (server/http/guard.ts: Host, Origin,
 * fetch metadata, the CSRF token, the declared size), streams the request body into the
 * workspace's tmp/ (cut with 413 once it passes the import size limit), imports that staged file as
 * the web actor (importUploadedFile: no request may name a path inside the workspace folder),
 * removes the copy.
 * POST /api/imports?name=FILE[&format=F] with the file's bytes as the body.
 */
export async function POST(req: Request): Promise<Response> {
  const started = performance.now();
  const refusal = refusalOfWebRequest(req);
  if (refusal) return refusalResponse(refusal, "upload");
  let staging: string | null = null;
  let overflowed: EmberscopeError | null = null;
  try {
    const url = new URL(req.url);
    const ctx = webServiceContext(req.headers);
    const layout = locateWorkspace(ctx.locator);
    if (!req.body) throw new EmberscopeError("INVALID_ARGUMENTS", "The request has no body; send the file's bytes.", { details: { argument: "body" } });
    staging = path.join(/*turbopackIgnore: true*/ layout.tmp, `upload-${process.pid}-${randomBytes(8).toString("hex")}`);
    await fsp.mkdir(staging, { recursive: true });
    const file = path.join(/*turbopackIgnore: true*/ staging, safeFileName(url.searchParams.get("name")));
    const limit = DEFAULT_INPUT_BOUNDS.maxBytes;
    let size = 0;
    await pipeline(
      Readable.fromWeb(req.body as import("node:stream/web").ReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Uint8Array>) {
        for await (const chunk of chunks) {
          size += chunk.length;
          if (size > limit) {
            overflowed = new EmberscopeError("ARTIFACT_TOO_LARGE", `The file is larger than the ${limit}-byte import limit.`, { details: { bound: "size", limit } });
            throw overflowed;
          }
          yield chunk;
        }
      },
      createWriteStream(file, { mode: 0o600 }),
    );
    const received = performance.now();
    const format = url.searchParams.get("format");
    // Handed over in-process: no request may name a path inside the workspace folder.
    const result = await importUploadedFile(ctx, file, format ? { format } : {});
    const imported = performance.now();
    // The page opens the run next: its first query starts now.
    prepareRunView(ctx, result.run_id, result.commit_id);
    // Where the request's time went on the server (the daily benchmark reads it from the browser's resource timing).
    const timing = { receive: received - started, import: imported - received, prepare: performance.now() - imported };
    const serverTiming = Object.entries(timing).map(([name, ms]) => `${name};dur=${ms.toFixed(1)}`).join(", ");
    return Response.json(result, { headers: { "Cache-Control": "no-store", "Server-Timing": serverTiming } });
  } catch (error) {
    // The rest of an oversized body is never read: the answer closes the connection.
    if (overflowed) return refusalResponse({ status: 413, error: overflowed }, "upload");
    return errorResponse(error);
  } finally {
    if (staging) await fsp.rm(staging, { recursive: true, force: true }).catch(() => undefined);
  }
}
