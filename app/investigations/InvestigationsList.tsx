"use client";

import { useState } from "react";
import { ErrorPanel } from "../../components/ErrorPanel";
import { InvestigationsTable, type InvestigationRow } from "../../components/InvestigationsTable";
import { callQuery, errorDocumentOf } from "../../components/home/trpc-client";
import type { ErrorDocument } from "../../server/domain/errors";
import type { listInvestigations } from "../../server/services/investigations";
import type { InvestigationFilter } from "./filter";

/** The list's first page (rendered by the server) and the pages "More" fetches after it, by keyset cursor. */
export function InvestigationsList(props: { initial: InvestigationRow[]; nextCursor: string | null; filter: InvestigationFilter; limit: number }) {
  const [rows, setRows] = useState(props.initial);
  const [cursor, setCursor] = useState(props.nextCursor);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorDocument | null>(null);

  const more = async () => {
    if (!cursor) return;
    setBusy(true);
    setError(null);
    try {
      const page = await callQuery<typeof listInvestigations>("investigations.list", {
        limit: props.limit,
        cursor,
        ...(props.filter === "all" ? {} : { status: props.filter }),
      });
      setRows((shown) => [...shown, ...page.items]);
      setCursor(page.next_cursor);
    } catch (e) {
      setError(errorDocumentOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <InvestigationsTable rows={rows} />
      <p className="investigations-footer">
        <span className="num" data-testid="investigations-shown">
          {rows.length} shown{cursor ? "" : " (all)"}
        </span>
        {cursor ? (
          <button type="button" className="investigations-more" onClick={() => void more()} disabled={busy} data-testid="investigations-more">
            {busy ? "Loading…" : `More (next ${props.limit})`}
          </button>
        ) : null}
      </p>
      {error ? <ErrorPanel error={error} /> : null}
    </>
  );
}
