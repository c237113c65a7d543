"use client";

import { useRouter } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import type { ImportResult } from "../../server/services/imports";
import { CSRF_HEADER } from "../../server/http/header-names";
import { ErrorPanel } from "../ErrorPanel";
import { csrfToken } from "../trpc-client";
import { FORMAT_IDS } from "../../analysis/formats/types";
import { pauseLiveRefresh, resumeLiveRefresh } from "./LiveRefresh";
import { warmLayoutWorker } from "../flame/use-flame-layout";

/** One file of a drop or a pick, as it goes: waiting → uploading → done or failed (then retried with a format). */
type Entry =
  | { id: number; file: File; phase: "waiting" }
  | { id: number; file: File; phase: "uploading"; loaded: number }
  | { id: number; file: File; phase: "done"; result: ImportResult }
  | { id: number; file: File; phase: "failed"; error: ErrorDocument; format: string };

/** Errors a chosen format can fix: the file was not recognised, or was read as the wrong format. */
const FORMAT_FIXES = new Set(["UNSUPPORTED_FORMAT", "ARTIFACT_PARSE_FAILED", "ARTIFACT_EMPTY"]);

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** Uploads one file to /api/imports (the import service) with the CSRF token, reporting upload progress. */
type UploadAnswer = { ok: true; result: ImportResult } | { ok: false; error: ErrorDocument };

async function upload(file: File, onProgress: (loaded: number) => void, format: string | null = null, refreshToken = false): Promise<UploadAnswer> {
  let token: string;
  try {
    token = await csrfToken(refreshToken);
  } catch {
    return { ok: false, error: { code: "INTERNAL_ERROR", message: "The server did not answer: is emberscope serve still running?", retryable: true, details: {} } };
  }
  const answer = await new Promise<UploadAnswer>((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/imports?${new URLSearchParams({ name: file.name, ...(format ? { format } : {}) }).toString()}`);
    xhr.setRequestHeader(CSRF_HEADER, token);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      try {
        const body = JSON.parse(xhr.responseText) as ImportResult | { error: ErrorDocument };
        resolve(xhr.status === 200 ? { ok: true, result: body as ImportResult } : { ok: false, error: (body as { error: ErrorDocument }).error });
      } catch {
        resolve({ ok: false, error: { code: "INTERNAL_ERROR", message: `The server answered ${xhr.status} without a result.`, retryable: true, details: {} } });
      }
    };
    xhr.onerror = () => resolve({ ok: false, error: { code: "INTERNAL_ERROR", message: "The upload failed: is emberscope serve still running?", retryable: true, details: {} } });
    xhr.send(file);
  });
  // The server restarted since the page loaded: once more with its new token.
  if (!answer.ok && answer.error.details?.reason === "csrf_token_invalid" && !refreshToken) return upload(file, onProgress, format, true);
  return answer;
}

/**
 * Import by drag-and-drop or file picker, one file or several at once: each is uploaded in turn
 * (→ imports.import) and listed with its run. A file that was not recognised, or not read as the
 * format it was taken for, offers the format picker: import it again as the chosen format.
 */
/** `formats`: every importer's title, from the format registry (the page passes them; the importers stay on the server). */
export function ImportPanel({ formats }: { formats: readonly string[] }) {
  const router = useRouter();
  const input = useRef<HTMLInputElement>(null);
  const nextId = useRef(1);
  const [over, setOver] = useState(false);
  const [entries, setEntries] = useState<Entry[]>([]);

  // The upload needs the CSRF token: asked for now, so that a drop does not wait for it (a failure is met again at the drop).
  useEffect(() => void csrfToken().catch(() => undefined), []);

  const update = (id: number, entry: Entry) => setEntries((list) => list.map((e) => (e.id === id ? entry : e)));

  const importOne = async (id: number, file: File, format: string | null): Promise<ImportResult | null> => {
    update(id, { id, file, phase: "uploading", loaded: 0 });
    const answer = await upload(file, (loaded) => setEntries((list) => list.map((e) => (e.id === id && e.phase === "uploading" ? { ...e, loaded } : e))), format);
    if (answer.ok) {
      // For the daily benchmark: when the import answered, with the server's own phases.
      performance.mark("emberscope:import-done", { detail: answer.result.timings_ms });
      update(id, { id, file, phase: "done", result: answer.result });
      return answer.result;
    }
    update(id, { id, file, phase: "failed", error: answer.error, format: format ?? "" });
    return null;
  };

  /** One file imported: its run opens at once (as speedscope opens a dropped file), in this page's client. */
  const openRun = (result: ImportResult) => {
    performance.mark("emberscope:open-run");
    router.push(`/runs/${encodeURIComponent(result.run_id)}`);
  };

  const importFiles = async (files: File[]) => {
    const batch: Entry[] = files.map((file) => ({ id: nextId.current++, file, phase: "waiting" }));
    setEntries(batch);
    // The page shows this batch itself, then opens the run or refreshes once.
    pauseLiveRefresh();
    // One file opens its run on its flame graph: the graph's layout worker starts under the upload.
    if (batch.length === 1) warmLayoutWorker();
    const imported: ImportResult[] = [];
    for (const entry of batch) {
      const result = await importOne(entry.id, entry.file, null);
      if (result) imported.push(result);
    }
    if (batch.length === 1 && imported.length === 1) return openRun(imported[0]);
    resumeLiveRefresh();
    if (imported.length) router.refresh();
  };

  const retry = async (entry: Extract<Entry, { phase: "failed" }>) => {
    pauseLiveRefresh();
    const result = await importOne(entry.id, entry.file, entry.format || null);
    if (result && entries.length === 1) return openRun(result);
    resumeLiveRefresh();
    if (result) router.refresh();
  };

  const busy = entries.some((e) => e.phase === "uploading" || e.phase === "waiting");
  const phase = entries.length === 0 ? "idle" : busy ? "uploading" : entries.some((e) => e.phase === "failed") ? "failed" : "done";
  return (
    <section className="home-panel" aria-labelledby="import-heading">
      <h3 id="import-heading">Import a profile or trace</h3>
      <div
        className={`dropzone${over ? " over" : ""}`}
        data-testid="import-dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          const files = Array.from(e.dataTransfer.files);
          if (files.length && !busy) void importFiles(files);
        }}
      >
        <p>
          Drop files here, or{" "}
          <button type="button" className="linklike" onClick={() => input.current?.click()} disabled={busy}>
            choose some
          </button>
          .
        </p>
        <p className="muted">Chrome/V8, Firefox Profiler, speedscope, pprof, perf, callgrind, folded stacks, JFR, OpenTelemetry, Jaeger, agent sessions…</p>
        <details className="format-list" data-testid="import-formats">
          <summary className="muted">All {formats.length} formats</summary>
          <ul>
            {formats.map((title) => (
              <li key={title}>{title}</li>
            ))}
          </ul>
        </details>
        <input
          ref={input}
          type="file"
          multiple
          hidden
          data-testid="import-file-input"
          onChange={(e) => {
            const files = Array.from(e.target.files ?? []);
            e.target.value = "";
            if (files.length) void importFiles(files);
          }}
        />
      </div>
      <div aria-live="polite" data-testid="import-status" data-phase={phase} data-count={entries.length}>
        {entries.length > 1 ? (
          <p className="muted" data-testid="import-batch">
            {entries.filter((e) => e.phase === "done").length} of {entries.length} files imported
            {entries.some((e) => e.phase === "failed") ? `, ${entries.filter((e) => e.phase === "failed").length} failed` : ""}.
          </p>
        ) : null}
        {entries.map((entry) => (
          <div key={entry.id} className="import-entry" data-testid="import-entry" data-phase={entry.phase}>
            {entry.phase === "waiting" ? <p className="muted">{entry.file.name}: waiting</p> : null}
            {entry.phase === "uploading" ? (
              <div className="progress-line">
                Uploading {entry.file.name}: {formatBytes(entry.loaded)} of {formatBytes(entry.file.size)}
                <progress max={entry.file.size || 1} value={entry.loaded} />
                {entry.loaded >= entry.file.size ? <span className="muted"> · normalizing to evidence…</span> : null}
              </div>
            ) : null}
            {entry.phase === "done" ? (
              <p className="ok-line">
                Imported <strong>{entry.file.name}</strong> as {entry.result.format} · run <code>{entry.result.run_id}</code> · {(entry.result.rows.samples ?? 0).toLocaleString("en-US")} sample rows,{" "}
                {(entry.result.rows.spans ?? 0).toLocaleString("en-US")} spans · commit <code>{entry.result.commit_id}</code>
                {entry.result.limitations.length ? ` · ${entry.result.limitations.length} limitation(s)` : ""} ·{" "}
                <a href={`/runs/${entry.result.run_id}`} data-testid="import-open-run">
                  Open the run
                </a>
              </p>
            ) : null}
            {entry.phase === "failed" ? (
              <>
                <p>Importing {entry.file.name} failed:</p>
                {/* The picker below replaces the shell's --format. */}
                <ErrorPanel error={FORMAT_FIXES.has(entry.error.code) ? { ...entry.error, message: entry.error.message.replace(/name it with --format\.?/, "choose its format below.") } : entry.error} />
                {FORMAT_FIXES.has(entry.error.code) ? (
                  <form
                    className="format-picker"
                    data-testid="import-format-picker"
                    onSubmit={(e) => {
                      e.preventDefault();
                      if (entry.format) void retry(entry);
                    }}
                  >
                    <label>
                      Read it as{" "}
                      <select value={entry.format} onChange={(e) => update(entry.id, { ...entry, format: e.target.value })} data-testid="import-format">
                        <option value="">choose a format…</option>
                        {FORMAT_IDS.map((id) => (
                          <option key={id} value={id}>
                            {id}
                          </option>
                        ))}
                      </select>
                    </label>{" "}
                    <button type="submit" className="button" disabled={!entry.format || busy} data-testid="import-format-retry">
                      Import again as {entry.format || "…"}
                    </button>
                  </form>
                ) : null}
              </>
            ) : null}
          </div>
        ))}
      </div>
    </section>
  );
}
