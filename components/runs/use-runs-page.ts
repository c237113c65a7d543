"use client";

import { useCallback, useEffect, useState } from "react";
import type { ErrorDocument } from "../../server/domain/errors";
import type { Run } from "../../server/domain/models";
import type { listRuns } from "../../server/services/runs";
import { callQuery, errorDocumentOf } from "../home/trpc-client";
import type { RunListInput, RunPage } from "./library-query";

interface Loaded {
  /** The arguments `page` or `error` answers. */
  key: string;
  page: RunPage | null;
  error: ErrorDocument | null;
}

/**
 * One page of runs.list for `input`, fetched through tRPC whenever the input changes (an answer
 * to an input since replaced is dropped). `initial` is what the server already answered for its
 * input (a page, or the typed error); `null` input fetches nothing. `replaceRun` puts a changed run (renamed) in place.
 */
export function useRunsPage(input: RunListInput | null, initial: { input: RunListInput; page: RunPage | null; error?: ErrorDocument | null } | null = null, revision = 0) {
  // `revision` counts workspace changes: a new one asks for the same page again (new runs, changed states).
  const key = input ? `${JSON.stringify(input)}#${revision}` : "";
  const [loaded, setLoaded] = useState<Loaded>(() => ({ key: initial ? `${JSON.stringify(initial.input)}#${revision}` : "", page: initial?.page ?? null, error: initial?.error ?? null }));
  useEffect(() => {
    if (!input || key === loaded.key) return;
    let current = true;
    callQuery<typeof listRuns>("runs.list", input).then(
      (page) => current && setLoaded({ key, page, error: null }),
      (thrown: unknown) => current && setLoaded({ key, page: null, error: errorDocumentOf(thrown) }),
    );
    return () => {
      current = false;
    };
    // `input` is read through `key`, its value; `loaded.key` only says whether it is answered.
  }, [key]);
  const replaceRun = useCallback(
    (run: Run) => setLoaded((l) => (l.page ? { ...l, page: { ...l.page, items: l.page.items.map((r) => (r.run_id === run.run_id ? run : r)) } } : l)),
    [],
  );
  // A refresh after a workspace change keeps the page shown, not "loading".
  const refreshing = input !== null && key !== loaded.key && loaded.key.startsWith(`${JSON.stringify(input)}#`);
  return { page: loaded.page, error: loaded.error, loading: input !== null && key !== loaded.key && !refreshing, replaceRun };
}

/** `value` once it has stayed the same for `ms` (typing into a search asks once it pauses). */
export function useSettledValue<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
