"use client";

import { useMemo } from "react";
import { spanCriticalPathReport, type CriticalPathReport } from "../../analysis/critical-path/report";
import type { FlameInputNode } from "../../analysis/flame/tree";
import type { ErrorDocument } from "../../server/domain/errors";
import { criticalPathFlame, type FollowsFromLink, type SpanInput } from "../../analysis/critical-path/spans";
import { ErrorPanel } from "../ErrorPanel";
import { FlameGraphCell } from "../flame/FlameGraphCell";
import { formatValue } from "../../analysis/flame/format";
import { CriticalPathFigures } from "./CriticalPathFigures";
import { analysisErrorDocument } from "./run-critical-path";


const LISTED = 500;

/**
 * The critical path of span traces (OTLP, Jaeger, Chrome), computed in the page by analysis/
 * (Jaeger's walk from each root, CRISP's aggregate): the chosen trace's figures and path, the
 * per-operation critical time over all the run's traces with p50/p95, and that aggregate as a
 * flame graph of calling contexts.
 */
export function SpanCriticalPathView(props: { runId: string; spans: readonly SpanInput[]; links: readonly FollowsFromLink[]; trace: string | null; onTrace: (trace: string | null) => void }) {
  const computed = useMemo((): { report: CriticalPathReport; flame: FlameInputNode[] } | { error: ErrorDocument } => {
    try {
      const { report, result } = spanCriticalPathReport(props.spans, props.links, props.trace ? { trace: props.trace } : {});
      return { report, flame: criticalPathFlame(props.spans, result) };
    } catch (error) {
      return { error: analysisErrorDocument(error) };
    }
  }, [props.spans, props.links, props.trace]);
  if ("error" in computed) {
    return (
      <div className="cp-view" data-testid="dag-view" data-state="error">
        <ErrorPanel error={computed.error} command={`npx emberscope critical-path ${props.runId}`} />
        {props.trace ? (
          <p>
            <button type="button" onClick={() => props.onTrace(null)}>
              Show the trace with the longest path
            </button>
          </p>
        ) : null}
      </div>
    );
  }
  const { report, flame } = computed;
  // One choice per trace: its longest root's path.
  const traces = new Map<string, { name: string; ns: number }>();
  for (const t of report.traces ?? []) {
    const seen = traces.get(t.trace_id);
    if (!seen || t.critical_path_ns > seen.ns) traces.set(t.trace_id, { name: t.name, ns: t.critical_path_ns });
  }
  const first = report.path.length ? Math.min(...report.path.map((p) => p.start_ns)) : 0;
  return (
    <div className="cp-view" data-testid="dag-view" data-state="ready" data-kind="spans" data-trace={report.trace} data-path={report.path.map((p) => p.id).join(",")}>
      <div className="cp-toolbar">
        {traces.size > 1 ? (
          <label className="field">
            <span>Trace</span>
            <select value={report.trace} onChange={(e) => props.onTrace(e.target.value)} data-testid="cp-trace-picker">
              {[...traces].map(([id, t]) => (
                <option key={id} value={id}>
                  {id.slice(0, 40)} · {t.name.slice(0, 60)} · {formatValue(t.ns, "ns")}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span className="tip-muted">
            Trace <span className="mono">{report.trace}</span>
          </span>
        )}
        <span className="tip-muted">
          {traces.size.toLocaleString("en-US")} trace{traces.size === 1 ? "" : "s"}, {props.spans.length.toLocaleString("en-US")} spans · the Trace view marks the spans on the critical paths
        </span>
      </div>
      <CriticalPathFigures report={report} sequentialLabel="Sequential work (one span at a time)" />
      <h3 className="cp-section-title">Path of this trace ({report.path.length} spans with time on it)</h3>
      <div className="cp-table">
        <table className="data" data-testid="cp-path-table">
          <thead>
            <tr>
              <th>Span</th>
              <th>Service</th>
              <th className="num">Start</th>
              <th className="num">Duration</th>
              <th className="num">On the path</th>
              <th className="num">Share</th>
            </tr>
          </thead>
          <tbody>
            {report.path.slice(0, LISTED).map((p) => (
              <tr key={p.id} className="on-path">
                <td className="wide" title={p.name}>
                  {p.name}
                </td>
                <td>{p.service}</td>
                <td className="num">{formatValue(p.start_ns - first, "ns")}</td>
                <td className="num">{formatValue(p.end_ns - p.start_ns, "ns")}</td>
                <td className="num">{formatValue(p.critical_ns, "ns")}</td>
                <td className="num">{report.critical_path_ns > 0 ? `${((p.critical_ns / report.critical_path_ns) * 100).toFixed(1)}%` : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3 className="cp-section-title">Per operation, over the run&apos;s {traces.size.toLocaleString("en-US")} traces</h3>
      <div className="cp-table">
        <table className="data" data-testid="cp-operations">
          <thead>
            <tr>
              <th>Service</th>
              <th>Operation</th>
              <th className="num">Critical time</th>
              <th className="num">Spans</th>
              <th className="num">Traces</th>
              <th className="num">p50 per trace</th>
              <th className="num">p95 per trace</th>
            </tr>
          </thead>
          <tbody>
            {report.operations.slice(0, LISTED).map((op) => (
              <tr key={`${op.service}\u0000${op.operation}`}>
                <td>{op.service}</td>
                <td className="wide" title={op.operation}>
                  {op.operation}
                </td>
                <td className="num" data-ns={op.critical_ns}>
                  {formatValue(op.critical_ns, "ns")}
                </td>
                <td className="num">{op.count.toLocaleString("en-US")}</td>
                <td className="num">{(op.traces ?? 0).toLocaleString("en-US")}</td>
                <td className="num">{formatValue(op.p50_ns ?? 0, "ns")}</td>
                <td className="num">{formatValue(op.p95_ns ?? 0, "ns")}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {report.operations.length > LISTED ? <p className="tip-muted">The {LISTED} heaviest of {report.operations.length.toLocaleString("en-US")} operations are listed.</p> : null}
      </div>
      <h3 className="cp-section-title">Critical time by calling context (all traces)</h3>
      <FlameGraphCell nodes={flame} unit="ns" metric="critical_ns" rootName="critical paths" label="Critical-path flame graph" testId="cp-flame" />
    </div>
  );
}
