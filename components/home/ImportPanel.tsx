"use client";

import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import type { ImportResult } from "../../server/services/imports";
import { CSRF_HEADER } from "../../server/http/header-names";
import { ErrorPanel } from "../ErrorPanel";
import { csrfToken } from "../trpc-client";

type State =
  | { phase: "idle" }
  | { phase: "uploading"; name: string; loaded: number; total: number }
  | { phase: "importing"; name: string }
  | { phase: "done"; name: string; result: ImportResult }
  | { phase: "failed"; name: string; error: ErrorDocument };

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** Uploads one file to /api/imports (the import service) with the CSRF token, reporting upload progress. */
type UploadAnswer = { ok: true; result: ImportResult } | { ok: false; error: ErrorDocument };

async function upload(file: File, onProgress: (loaded: number) => void, refreshToken = false): Promise<UploadAnswer> {
  let token: string;
  try {
    token = await csrfToken(refreshToken);
  } catch {
    return { ok: false, error: { code: "INTERNAL_ERROR", message: "The server did not answer: is emberscope serve still running?", retryable: true, details: {} } };
  }
  const answer = await new Promise<UploadAnswer>((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/imports?name=${encodeURIComponent(file.name)}`);
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
  if (!answer.ok && answer.error.details?.reason === "csrf_token_invalid" && !refreshToken) return upload(file, onProgress, true);
  return answer;
}

/** Import by drag-and-drop or file picker: upload → imports.import → the new run is listed. */
export function ImportPanel() {
  const router = useRouter();
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const [state, setState] = useState<State>({ phase: "idle" });

  const importFile = async (file: File) => {
    setState({ phase: "uploading", name: file.name, loaded: 0, total: file.size });
    const answer = await upload(file, (loaded) => setState((s) => (s.phase === "uploading" ? { ...s, loaded } : s)));
    if (answer.ok) {
      setState({ phase: "done", name: file.name, result: answer.result });
      router.refresh();
    } else {
      setState({ phase: "failed", name: file.name, error: answer.error });
    }
  };

  const busy = state.phase === "uploading" || state.phase === "importing";
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
          const file = e.dataTransfer.files[0];
          if (file && !busy) void importFile(file);
        }}
      >
        <p>
          Drop a file here, or{" "}
          <button type="button" className="linklike" onClick={() => input.current?.click()} disabled={busy}>
            choose one
          </button>
          .
        </p>
        <p className="muted">Chrome/V8 .cpuprofile and .heapprofile, Chrome trace JSON, speedscope, pprof, perf script, folded stacks, callgrind, OTLP/JSON.</p>
        <input
          ref={input}
          type="file"
          hidden
          data-testid="import-file-input"
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = "";
            if (file) void importFile(file);
          }}
        />
      </div>
      <div aria-live="polite" data-testid="import-status" data-phase={state.phase}>
        {state.phase === "uploading" ? (
          <div className="progress-line">
            Uploading {state.name}: {formatBytes(state.loaded)} of {formatBytes(state.total)}
            <progress max={state.total || 1} value={state.loaded} />
            {state.loaded >= state.total ? <span className="muted"> · normalizing to evidence…</span> : null}
          </div>
        ) : null}
        {state.phase === "done" ? (
          <p className="ok-line">
            Imported <strong>{state.name}</strong> as {state.result.format} · run <code>{state.result.run_id}</code> · {(state.result.rows.samples ?? 0).toLocaleString("en-US")} sample rows,{" "}
            {(state.result.rows.spans ?? 0).toLocaleString("en-US")} spans · commit <code>{state.result.commit_id}</code>
            {state.result.limitations.length ? ` · ${state.result.limitations.length} limitation(s)` : ""} ·{" "}
            <a href={`/runs/${state.result.run_id}`} data-testid="import-open-run">
              Open the run
            </a>
          </p>
        ) : null}
        {state.phase === "failed" ? (
          <>
            <p>Importing {state.name} failed:</p>
            <ErrorPanel error={state.error} command={`npx emberscope import ${state.name}`} />
          </>
        ) : null}
      </div>
    </section>
  );
}
