"use client";

import { useState } from "react";
import { formatValue } from "../../../analysis/flame/format";
import { useCriticalPath } from "../../evidence/use-evidence";
import type { CellViewProps } from "../context";
import { evidencePending } from "./evidence-state";

const ns = (value: number) => formatValue(value, "ns");

/**
 * A critical path at the cell's commit (critical_path.get): the figures, the path, and for a
 * workflow the calls with least slack and a what-if kept in the cell; for span traces the
 * per-operation critical time and the trace shown.
 */
export function CriticalPathCellView({ cell, content, onContent }: CellViewProps<"critical_path">) {
  const answer = useCriticalPath({ runId: content.run_id, commitId: cell.server.commit_id!, traceId: content.trace_id, whatIf: content.what_if });
  const [draft, setDraft] = useState<{ node: string; ms: string }>({ node: content.what_if?.node ?? "", ms: content.what_if ? String(content.what_if.duration_ms) : "" });
  const pending = evidencePending(answer, "the critical path");
  if (pending || !answer || !("path" in answer)) return pending;
  // One entry per trace: its first root (an asynchronous follower is a root of the same trace).
  const traceIds = (answer.traces ?? []).filter((t, i, all) => all.findIndex((u) => u.trace_id === t.trace_id) === i);
  const applyWhatIf = () => {
    const ms = Number(draft.ms);
    if (draft.node && draft.ms !== "" && Number.isFinite(ms) && ms >= 0) onContent({ ...content, what_if: { node: draft.node, duration_ms: ms } });
  };
  return (
    <div className="critical-path-cell" data-testid="critical-path-cell">
      <div className="cp-figures" data-testid="critical-path-figures">
        <div>
          <span>{answer.kind === "workflow" ? "Sequential (one call at a time)" : "Trace's work, one span at a time"}</span>
          <strong data-testid="cp-sequential">{ns(answer.sequential_ns)}</strong>
        </div>
        <div>
          <span>Critical path</span>
          <strong data-testid="cp-length">{ns(answer.critical_path_ns)}</strong>
        </div>
        <div>
          <span>Speed-up bound</span>
          <strong data-testid="cp-bound">{answer.speedup_bound.toFixed(2)}×</strong>
        </div>
        {answer.what_if ? (
          <div>
            <span>What if</span>
            <strong>
              {answer.what_if.node} took {ns(answer.what_if.duration_ns)} (recorded {ns(answer.what_if.recorded_ns)}){" "}
              <button type="button" className="plain-button" onClick={() => onContent({ run_id: content.run_id, trace_id: content.trace_id })}>
                reset
              </button>
            </strong>
          </div>
        ) : null}
      </div>
      {answer.workflow_status === "blocked" ? (
        <p className="tip-muted">The workflow is blocked: some tools&apos; side effects are unknown until a person reviews them (emberscope tools review TOOL --read-only). The path is computed all the same.</p>
      ) : null}
      {traceIds.length > 1 ? (
        <label>
          Trace{" "}
          <select value={answer.trace} onChange={(e) => onContent({ ...content, trace_id: e.target.value })}>
            {traceIds.map((t) => (
              <option key={t.trace_id} value={t.trace_id}>
                {t.name} — {ns(t.critical_path_ns)}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <table className="data" data-testid="cp-path">
        <thead>
          <tr>
            <th>{answer.kind === "workflow" ? "Node" : "Span"}</th>
            <th>Name</th>
            <th>{answer.kind === "workflow" ? "Agent" : "Service"}</th>
            <th>Start</th>
            <th>On the path</th>
          </tr>
        </thead>
        <tbody>
          {answer.path.map((p) => (
            <tr key={p.id}>
              <td className="mono">{p.id}</td>
              <td>{p.name}</td>
              <td>{p.service}</td>
              <td>{ns(p.start_ns)}</td>
              <td>{ns(p.critical_ns)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {answer.nodes ? (
        <details>
          <summary>Least slack first: what to make faster first</summary>
          <table className="data">
            <thead>
              <tr>
                <th>Node</th>
                <th>Tool</th>
                <th>Duration</th>
                <th>Slack</th>
              </tr>
            </thead>
            <tbody>
              {answer.nodes.slice(0, 20).map((n) => (
                <tr key={n.id}>
                  <td className="mono">{n.id}</td>
                  <td>{n.name}</td>
                  <td>{ns(n.duration_ns)}</td>
                  <td>{n.on_path ? "on the path" : ns(n.slack_ns)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              applyWhatIf();
            }}
          >
            What if{" "}
            <select aria-label="node" value={draft.node} onChange={(e) => setDraft({ ...draft, node: e.target.value })}>
              <option value="">a node…</option>
              {answer.nodes.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.id} {n.name}
                </option>
              ))}
            </select>{" "}
            took <input aria-label="milliseconds" inputMode="decimal" size={8} value={draft.ms} onChange={(e) => setDraft({ ...draft, ms: e.target.value })} /> ms{" "}
            <button type="submit" className="plain-button">
              Recompute
            </button>
          </form>
        </details>
      ) : (
        <details>
          <summary>Per operation over the run&apos;s traces</summary>
          <table className="data">
            <thead>
              <tr>
                <th>Service</th>
                <th>Operation</th>
                <th>Critical time</th>
                <th>Count</th>
                <th>p50</th>
                <th>p95</th>
              </tr>
            </thead>
            <tbody>
              {answer.operations.map((o) => (
                <tr key={`${o.service}\u0000${o.operation}`}>
                  <td>{o.service}</td>
                  <td>{o.operation}</td>
                  <td>{ns(o.critical_ns)}</td>
                  <td>{o.count}</td>
                  <td>{ns(o.p50_ns ?? 0)}</td>
                  <td>{ns(o.p95_ns ?? 0)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </div>
  );
}
