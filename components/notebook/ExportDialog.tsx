"use client";

import { useEffect, useState } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import type { previewExport, startExport } from "../../server/services/exports";
import type { showOperation } from "../../server/services/operations";
import type { Operation } from "../../server/store/operations";
import { ErrorPanel } from "../ErrorPanel";
import { CancelOperation } from "../home/CancelOperation";
import { OperationProgress } from "../home/OperationProgress";
import { callMutation, callQuery, errorDocumentOf } from "../home/trpc-client";
import { workbenchFetch } from "../trpc-client";

const KINDS = ["PATH", "USER", "HOST", "EMAIL", "IP", "SECRET", "QUERY", "ENV", "DATA"] as const;
const KIND_LABEL: Record<(typeof KINDS)[number], string> = {
  PATH: "absolute paths and file:// URLs",
  USER: "user names",
  HOST: "host names",
  EMAIL: "e-mail addresses",
  IP: "IP addresses",
  SECRET: "keys, tokens, passwords, private keys",
  QUERY: "URL query values",
  ENV: "environment values",
  DATA: "unreadable JSON args",
};

type Preview = Awaited<ReturnType<typeof callQuery<typeof previewExport>>>;

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} KB`;
}

/**
 * The export dialog: the preview of every redaction (kind, count, where the first was found),
 * a choice per kind (redacted by default; leaving one as it is needs the person's session), and
 * the download of the one HTML file. The file is built by an export operation (exports.start):
 * the dialog shows its phase and progress and can cancel it, then downloads what it built. The
 * choice is recorded in the file's manifest.
 */
export function ExportDialog({ investigationId, onClose }: { investigationId: string; onClose: () => void }) {
  const [allow, setAllow] = useState<Set<string>>(new Set());
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<ErrorDocument | null>(null);
  const [busy, setBusy] = useState<"preview" | "download" | null>("preview");
  const [saved, setSaved] = useState<string | null>(null);
  const [op, setOp] = useState<Operation | null>(null);

  useEffect(() => {
    let live = true;
    setBusy("preview");
    setError(null);
    callQuery<typeof previewExport>("exports.preview", { investigation_id: investigationId, choices: { allow: [...allow] as never, redact: [] } })
      .then((p) => live && setPreview(p))
      .catch((e: unknown) => live && setError(errorDocumentOf(e)))
      .finally(() => live && setBusy(null));
    return () => {
      live = false;
    };
  }, [investigationId, allow]);

  const download = async () => {
    setBusy("download");
    setError(null);
    setSaved(null);
    setOp(null);
    try {
      const { operation_id } = await callMutation<typeof startExport>("exports.start", { investigation_id: investigationId, choices: { allow: [...allow] as never, redact: [] } });
      // The operation reports its phase and progress until it ends; a cancel ends it as cancelled.
      let current = await callQuery<typeof showOperation>("operations.get", { operation_id });
      setOp(current);
      while (current.state === "running" || current.state === "queued" || current.state === "cancelling") {
        await new Promise((r) => setTimeout(r, 250));
        current = await callQuery<typeof showOperation>("operations.get", { operation_id });
        setOp(current);
      }
      if (current.state !== "succeeded") {
        if (current.state === "cancelled") return;
        throw { error: (current.error as ErrorDocument | null) ?? { code: "INTERNAL_ERROR", message: `The export ended ${current.state}.`, retryable: true, details: {} } };
      }
      const response = await workbenchFetch("/api/exports", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ operation_id }),
      });
      if (!response.ok) {
        const body = (await response.json().catch(() => null)) as { error?: ErrorDocument } | null;
        throw { error: body?.error ?? { code: "INTERNAL_ERROR", message: `The export failed (HTTP ${response.status}).`, retryable: true, details: {} } };
      }
      const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") ?? "")?.[1] ?? "investigation.emberscope.html";
      const url = URL.createObjectURL(await response.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setSaved(name);
    } catch (e) {
      setError(errorDocumentOf(e));
    } finally {
      setBusy(null);
    }
  };

  const counts = new Map(preview?.report.map((r) => [r.kind, r]) ?? []);
  return (
    <div className="nb-overlay" role="dialog" aria-label="Export the investigation" data-testid="export-dialog">
      <div className="nb-overlay-card wide">
        <h2>Export as one file</h2>
        <p className="tip-muted">
          One HTML file with the notebook, the evidence its cells cite, DuckDB-WASM and a viewer. It opens offline in a browser; nothing is uploaded. Everything below is
          redacted unless you untick it.
        </p>
        <table className="data" data-testid="export-preview">
          <thead>
            <tr>
              <th>redact</th>
              <th>kind</th>
              <th className="num">found</th>
              <th>first found in</th>
            </tr>
          </thead>
          <tbody>
            {KINDS.map((kind) => (
              <tr key={kind} data-kind={kind}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Redact ${KIND_LABEL[kind]}`}
                    checked={!allow.has(kind)}
                    onChange={(e) => setAllow((prev) => {
                      const next = new Set(prev);
                      if (e.target.checked) next.delete(kind);
                      else next.add(kind);
                      return next;
                    })}
                    data-testid={`export-redact-${kind}`}
                  />
                </td>
                <td>
                  {kind} <span className="tip-muted">{KIND_LABEL[kind]}</span>
                </td>
                <td className="num" data-testid={`export-count-${kind}`}>
                  {counts.get(kind)?.count ?? "…"}
                </td>
                <td className="mono">{counts.get(kind)?.example ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {preview ? (
          <p className="tip-muted" data-testid="export-sizes">
            Redaction: {preview.redaction_mode} · evidence {preview.evidence.generations} generation(s), {preview.evidence.files} Parquet file(s): {formatBytes(preview.evidence.source_bytes)} in the workspace →{" "}
            {formatBytes(preview.evidence.bundle_bytes)} in the export (plus about 11 MB for DuckDB-WASM and the viewer).
          </p>
        ) : null}
        {op ? (
          <p data-testid="export-operation" data-state={op.state}>
            Export <code>{op.operation_id}</code>: <OperationProgress op={op} />{" "}
            {op.state === "running" || op.state === "queued" ? <CancelOperation operationId={op.operation_id} /> : null}
            {op.state === "cancelled" ? <span> — cancelled; nothing was written.</span> : null}
          </p>
        ) : null}
        {error ? <ErrorPanel error={error} /> : null}
        {saved ? <p data-testid="export-saved">Saved {saved}. Check it with <code>emberscope export verify {saved}</code>.</p> : null}
        <div className="nb-export-actions">
          <button type="button" className="plain-button" onClick={onClose}>
            Close
          </button>
          <button type="button" className="primary-button" disabled={busy !== null} onClick={() => void download()} data-testid="export-download">
            {busy === "download" ? "Building the file…" : busy === "preview" ? "Previewing…" : "Download"}
          </button>
        </div>
      </div>
    </div>
  );
}
