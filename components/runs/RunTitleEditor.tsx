"use client";

import { useState, type FormEvent } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import type { Run } from "../../server/domain/models";
import type { renameRun, showRun } from "../../server/services/runs";
import { callMutation, callQuery, errorDocumentOf } from "../home/trpc-client";

/**
 * A run's title as a link, with a Rename button that edits it in place: Enter or Save renames by
 * compare-and-set on the revision shown, Esc or Cancel keeps it. When the run changed meanwhile
 * (REVISION_CONFLICT) the editor stays open with the text typed, and offers the current run.
 */
export function RunTitleEditor({ run, onRenamed }: { run: Run; onRenamed: (run: Run) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorDocument | null>(null);

  const close = () => {
    setDraft(null);
    setError(null);
  };
  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (draft === null) return;
    if (draft.trim() === run.title) return close();
    setBusy(true);
    setError(null);
    try {
      onRenamed(await callMutation<typeof renameRun>("runs.update", { run_id: run.run_id, title: draft, expected_revision: run.revision }));
      close();
    } catch (thrown) {
      setError(errorDocumentOf(thrown));
    } finally {
      setBusy(false);
    }
  };
  const loadCurrent = async () => {
    try {
      onRenamed(await callQuery<typeof showRun>("runs.get", { run_id: run.run_id }));
      setError(null);
    } catch (thrown) {
      setError(errorDocumentOf(thrown));
    }
  };

  if (draft === null) {
    return (
      <span className="run-title-line">
        <a href={`/runs/${encodeURIComponent(run.run_id)}`} className="run-title" data-testid="run-title">
          {run.title}
        </a>
        <button type="button" className="run-rename" onClick={() => setDraft(run.title)} aria-label={`Rename ${run.title}`} title="Rename" data-testid="rename-run">
          ✎
        </button>
      </span>
    );
  }
  return (
    <form className="run-title-form" onSubmit={(e) => void save(e)} data-testid="rename-form">
      <input
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => e.key === "Escape" && close()}
        maxLength={200}
        aria-label="New title"
        autoFocus
        disabled={busy}
        data-testid="rename-input"
      />
      <button type="submit" disabled={busy || draft.trim() === ""} data-testid="rename-save">
        {busy ? "Saving…" : "Save"}
      </button>
      <button type="button" onClick={close} disabled={busy}>
        Cancel
      </button>
      {error ? (
        <div className="run-title-error" role="alert" data-testid="rename-error">
          <strong>{error.code}</strong> {error.message}
          {error.code === "REVISION_CONFLICT" ? (
            <button type="button" onClick={() => void loadCurrent()}>
              Show the current title
            </button>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
