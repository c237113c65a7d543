import { Readable } from "node:stream";
import { readRunArtifact } from "../../../../../server/services";
import { webServiceContext } from "../../../../../server/trpc/context";
import { errorResponse } from "../../../corpus/errors";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * GET /api/runs/RUN/artifact: the run's original artifact (the imported file, or what the
 * capture's profiler wrote) as a download. Host and Origin are checked by the boundary ahead of it.
 */
export async function GET(req: Request, { params }: { params: Promise<{ runId: string }> }): Promise<Response> {
  try {
    const { runId } = await params;
    const artifact = await readRunArtifact(webServiceContext(req.headers), runId);
    const body = Readable.toWeb(artifact.open()) as unknown as ReadableStream<Uint8Array>;
    return new Response(body, {
      headers: {
        "Content-Type": "application/octet-stream",
        "Content-Length": String(artifact.size),
        "Content-Disposition": `attachment; filename="${artifact.fileName}"`,
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
