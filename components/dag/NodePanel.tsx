import { useEffect, useState } from "react";
import type { NodeTiming } from "../../analysis/critical-path/report";
import type { WorkflowEdge, WorkflowNode } from "../../analysis/workflow/compile";
import { formatValue } from "../../analysis/flame/format";
import { ArgumentsTemplate } from "./ArgumentsTemplate";


/** What an edge says, from the selected node's side. */
function edgeWords(edge: WorkflowEdge, self: string): string {
  const other = edge.from === self ? edge.to : edge.from;
  if (edge.kind === "data_ref") return edge.to === self ? `reads ${other}'s result` : `${other} reads its result`;
  if (edge.kind === "child") return edge.to === self ? `${other} runs inside it (a subagent's call)` : `runs inside ${other}`;
  return edge.to === self ? `runs after ${other}` : `${other} runs after it`;
}

/**
 * The selected workflow node: what it called (the arguments template, its references selecting the
 * nodes they read), what it recorded, its side effect and whether a person reviewed it, its timing
 * on the DAG, and "what if it took …": a duration in ms the whole view is recomputed with.
 */
export function NodePanel(props: {
  node: WorkflowNode;
  timing: NodeTiming;
  /** The edges into and out of the node. */
  edges: readonly WorkflowEdge[];
  whatIfMs: number | null;
  onWhatIf: (ms: number | null) => void;
  onSelect: (node: string | null) => void;
}) {
  const { node, timing } = props;
  const recordedMs = node.recorded.own_ns / 1e6;
  const [draft, setDraft] = useState(String(props.whatIfMs ?? round(recordedMs)));
  useEffect(() => setDraft(String(props.whatIfMs ?? round(recordedMs))), [node.id, props.whatIfMs, recordedMs]);
  const into = props.edges.filter((e) => e.to === node.id);
  const out = props.edges.filter((e) => e.from === node.id);
  const apply = () => {
    const ms = Number(draft);
    if (Number.isFinite(ms) && ms >= 0) props.onWhatIf(ms);
  };
  return (
    <aside className="cp-panel" data-testid="node-panel" data-node={node.id}>
      <div className="cp-toolbar">
        <h3>
          <span className="mono">{node.id}</span> {node.tool}
        </h3>
        <span className="spacer" />
        <button type="button" onClick={() => props.onSelect(null)} aria-label="Close the node's panel">
          ×
        </button>
      </div>
      <dl>
        <dt>Agent</dt>
        <dd>{node.agent}</dd>
        <dt>Call ids</dt>
        <dd className="mono" data-testid="node-call-ids">
          {node.recorded.call_ids.join(", ")}
          {node.recorded.call_ids.length > 1 ? <span className="tip-muted"> ({node.recorded.call_ids.length - 1} repeated read merged)</span> : null}
        </dd>
        <dt>Side effect</dt>
        <dd data-testid="node-side-effect" className={node.side_effect === "unknown" ? "unknown" : undefined}>
          {node.side_effect}
          {node.side_effect_reviewed ? " (reviewed by a person)" : node.side_effect === "unknown" ? " — blocks the workflow until reviewed" : " (as the trace says; not reviewed)"}
        </dd>
        <dt>Recorded</dt>
        <dd>
          {formatValue(node.recorded.duration_ns, "ns")}
          {node.recorded.own_ns !== node.recorded.duration_ns ? <> · own {formatValue(node.recorded.own_ns, "ns")} (its subagent&apos;s calls take the rest)</> : null}
        </dd>
        <dt>Earliest start</dt>
        <dd>{formatValue(timing.earliest_start_ns, "ns")}</dd>
        <dt>Slack</dt>
        <dd data-testid="node-slack">{timing.on_path ? "0 (on the critical path)" : formatValue(timing.slack_ns, "ns")}</dd>
      </dl>
      {node.side_effect === "unknown" ? (
        <p className="unknown">
          A person reviews it with <span className="command mono">emberscope tools review {node.tool.slice(0, 80)} --read-only</span> (or <span className="mono">--write</span>).
        </p>
      ) : null}
      <h4>What if it took</h4>
      <form
        className="cp-whatif"
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <input type="number" min={0} step="any" value={draft} onChange={(e) => setDraft(e.target.value)} aria-label="Duration in ms" data-testid="what-if-ms" />
        <span>ms</span>
        <button type="submit" data-testid="what-if-apply">
          Apply
        </button>
        {props.whatIfMs !== null ? (
          <button type="button" onClick={() => props.onWhatIf(null)} data-testid="what-if-reset">
            Reset
          </button>
        ) : null}
        <span className="tip-muted">recorded {round(recordedMs)} ms</span>
      </form>
      {into.length || out.length ? (
        <>
          <h4>Depends on · needed by</h4>
          <div className="links">
            {into.map((e) => (
              <button key={`in${e.from}`} type="button" onClick={() => props.onSelect(e.from)} title={edgeWords(e, node.id)}>
                ← {e.from}
              </button>
            ))}
            {out.map((e) => (
              <button key={`out${e.to}`} type="button" onClick={() => props.onSelect(e.to)} title={edgeWords(e, node.id)}>
                {e.to} →
              </button>
            ))}
          </div>
        </>
      ) : null}
      <h4>Arguments (template)</h4>
      <ArgumentsTemplate value={node.arguments} onSelect={props.onSelect} />
      <h4>Recorded result{node.recorded.result_truncated ? " (cut at import)" : ""}</h4>
      {node.recorded.result === null ? <p className="tip-muted">None recorded.</p> : <pre className="mono" data-testid="node-result">{node.recorded.result}</pre>}
    </aside>
  );
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
