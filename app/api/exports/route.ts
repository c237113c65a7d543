import { refusalOfWebRequest, refusalResponse } from "../../../server/http/guard";
import { callService } from "../../../server/services";
import { builtExportForDownload, bundleForDownload } from "../../../server/services/exports";
import { webServiceContext } from "../../../server/trpc/context";
import { errorResponse } from "../corpus/errors";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * The export dialog's download: after the boundary (Host, Origin, fetch metadata, CSRF token,
 * body bound), builds the investigation's export as the web actor — allowing a kind needs the
 * person's session (exports.download refuses otherwise) — and answers with the HTML as an
 * attachment. POST /api/exports with { investigation_id, choices: { allow, redact } } builds it in
 * the request; with { operation_id } it answers the file of an export operation that succeeded
 * (exports.start, which the dialog uses: progress and cancel while it builds).
 */
export async function POST(req: Request): Promise<Response> {
  const refusal = refusalOfWebRequest(req);
  if (refusal) return refusalResponse(refusal, "app");
  try {
    const body = (await req.json().catch(() => null)) as unknown;
    const ctx = webServiceContext(req.headers);
    const r =
      body && typeof body === "object" && "operation_id" in body
        ? await callService(builtExportForDownload, ctx, body)
        : await callService(bundleForDownload, ctx, body).then((b) => ({ file_name: b.file_name, html: b.html, redaction_mode: b.result.redaction_mode }));
    return new Response(r.html, {
      headers: {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Disposition": `attachment; filename="${r.file_name}"`,
        "Cache-Control": "no-store",
        "X-Emberscope-Redaction": r.redaction_mode,
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
