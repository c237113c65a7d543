"use client";

import { useMemo } from "react";
import { workflowCriticalPathReport } from "../../analysis/critical-path/report";
import type { ErrorDocument } from "../../server/domain/errors";
import { isError, useCriticalPathRows } from "../evidence/use-evidence";
import { analysisErrorDocument, criticalSpanIds, prepareRunCriticalPath, type ReviewedTool } from "./run-critical-path";

export type CriticalSpans = { state: "off" | "loading" } | { state: "error"; error: ErrorDocument } | { state: "ready"; keys: ReadonlySet<string>; kind: "workflow" | "spans" | "empty" };

/**
 * The spans on a run's critical path, as `generation_id:span_id` keys for the trace window to
 * mark: computed in the page from the same rows and code as the DAG view (a workflow's path
 * calls, or every trace root's path).
 */
export function useCriticalSpans(args: { runId: string; commitId: string; contracts: readonly ReviewedTool[]; metadata: Readonly<Record<string, string>>; enabled: boolean }): CriticalSpans {
  const rows = useCriticalPathRows({ runId: args.enabled ? args.runId : null, commitId: args.commitId });
  return useMemo((): CriticalSpans => {
    if (!args.enabled) return { state: "off" };
    if (rows === null) return { state: "loading" };
    if (isError(rows)) return { state: "error", error: rows };
    try {
      const prepared = prepareRunCriticalPath(rows, { runId: args.runId, contracts: args.contracts, metadata: args.metadata });
      const path = prepared.kind === "workflow" ? workflowCriticalPathReport(prepared.workflow).path.map((p) => p.id) : [];
      const keys = new Set([...criticalSpanIds(prepared, path)].map((id) => `${rows.generation}:${id}`));
      return { state: "ready", keys, kind: prepared.kind };
    } catch (error) {
      return { state: "error", error: analysisErrorDocument(error) };
    }
  }, [rows, args.enabled, args.runId, args.contracts, args.metadata]);
}
