import { callService, exportSpeedscope } from "../../../../../server/services";
import { webServiceContext } from "../../../../../server/trpc/context";
import { errorResponse } from "../../../corpus/errors";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * GET /api/runs/RUN/speedscope?commit=C&metric=M: the run as a speedscope file to download
 * (evidence.export_speedscope). Host and Origin are checked by the boundary ahead of it.
 */
export async function GET(req: Request, { params }: { params: Promise<{ runId: string }> }): Promise<Response> {
  try {
    const { runId } = await params;
    const url = new URL(req.url);
    const metric = url.searchParams.get("metric");
    const result = await callService(exportSpeedscope, webServiceContext(req.headers), { run_id: runId, commit_id: url.searchParams.get("commit") ?? "HEAD", ...(metric ? { metric } : {}) });
    return new Response(JSON.stringify(result.document), {
      headers: {
        "Content-Type": "application/json",
        "Content-Disposition": `attachment; filename="${result.file_name}"`,
        "Cache-Control": "no-store",
        "X-Emberscope-Commit": result.commit_id,
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
