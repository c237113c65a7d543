"use client";

import { useState } from "react";
import { ErrorPanel } from "../../components/ErrorPanel";
import { callMutation, errorDocumentOf } from "../../components/home/trpc-client";
import type { ErrorDocument } from "../../server/domain/errors";
import type { createInvestigation } from "../../server/services/investigations";

/** Starts an investigation (title and the question it answers) and opens its notebook. */
export function NewInvestigationForm() {
  const [title, setTitle] = useState("");
  const [question, setQuestion] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorDocument | null>(null);

  const create = async () => {
    setBusy(true);
    setError(null);
    try {
      const inv = await callMutation<typeof createInvestigation>("investigations.create", { title, question });
      window.location.assign(`/investigations/${encodeURIComponent(inv.investigation_id)}`);
    } catch (e) {
      setError(errorDocumentOf(e));
      setBusy(false);
    }
  };

  return (
    <form
      className="new-investigation"
      data-testid="new-investigation"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <h3>New investigation</h3>
      <label>
        <span>Title</span>
        <input value={title} maxLength={200} onChange={(e) => setTitle(e.target.value)} placeholder="Why did parse get slower?" data-testid="new-investigation-title" />
      </label>
      <label>
        <span>Question</span>
        <textarea
          value={question}
          maxLength={4000}
          rows={2}
          onChange={(e) => setQuestion(e.target.value)}
          placeholder="What would answer it, e.g. which change moved parse's self time between the two captures?"
          data-testid="new-investigation-question"
        />
      </label>
      <div>
        <button type="submit" className="button" disabled={busy} data-testid="new-investigation-create">
          {busy ? "Creating…" : "Create and open"}
        </button>
      </div>
      {error ? <ErrorPanel error={error} /> : null}
    </form>
  );
}
