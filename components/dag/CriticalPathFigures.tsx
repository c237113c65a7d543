import type { CriticalPathReport } from "../../analysis/critical-path/report";
import { formatValue } from "../../analysis/flame/format";


const percent = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : "—");
const signed = (ns: number) => (ns > 0 ? `+${formatValue(ns, "ns")}` : ns < 0 ? `−${formatValue(-ns, "ns")}` : "no change");
const times = (x: number) => `${x.toFixed(2)}×`;

/**
 * The benchmark figures of a critical-path report: the sequential sum (one call or span at a
 * time), the critical path (unbounded concurrency) and their ratio, the speed-up bound. With a
 * what-if, the recorded figures are shown beside the new ones. Exact values are in data-ns /
 * data-value, so a test compares them with the server's answer.
 */
export function CriticalPathFigures(props: { report: CriticalPathReport; recorded?: CriticalPathReport | null; sequentialLabel: string }) {
  const { report, recorded } = props;
  const changed = recorded && recorded !== report;
  const was = (text: string) => (changed ? <span className="was">recorded {text}</span> : null);
  return (
    <dl className={`facts cp-figures${changed ? " what-if" : ""}`} data-testid="cp-figures" data-kind={report.kind}>
      <div className="fact">
        <dt>{props.sequentialLabel}</dt>
        <dd data-testid="fig-sequential" data-ns={report.sequential_ns}>
          {formatValue(report.sequential_ns, "ns")}
          {changed ? was(formatValue(recorded.sequential_ns, "ns")) : null}
        </dd>
      </div>
      <div className="fact">
        <dt>Critical path</dt>
        <dd data-testid="fig-critical" data-ns={report.critical_path_ns}>
          {formatValue(report.critical_path_ns, "ns")} <span className="tip-muted">({percent(report.critical_path_ns, report.sequential_ns)} of it)</span>
          {changed ? was(`${formatValue(recorded.critical_path_ns, "ns")} · ${signed(report.critical_path_ns - recorded.critical_path_ns)}`) : null}
        </dd>
      </div>
      <div className="fact">
        <dt>Speed-up bound</dt>
        <dd data-testid="fig-bound" data-value={report.speedup_bound}>
          {times(report.speedup_bound)}
          {changed ? was(times(recorded.speedup_bound)) : null}
        </dd>
      </div>
      <div className="fact">
        <dt>On the path</dt>
        <dd data-testid="fig-path-length">
          {report.path.length.toLocaleString("en-US")} {report.kind === "workflow" ? "calls" : "spans"}
          {report.nodes ? <span className="was">of {report.nodes.length.toLocaleString("en-US")} nodes</span> : null}
        </dd>
      </div>
    </dl>
  );
}
