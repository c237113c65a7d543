"use client";

import { useMemo, useState } from "react";
import { workflowCriticalPathReport, type CriticalPathReport } from "../../analysis/critical-path/report";
import type { CompileReport, Workflow } from "../../analysis/workflow/compile";
import { ErrorPanel } from "../ErrorPanel";
import type { WhatIfValue } from "../url-state";
import { formatValue } from "../../analysis/flame/format";
import { CompileSummary } from "./CompileSummary";
import { CriticalPathFigures } from "./CriticalPathFigures";
import { DagGantt } from "./DagGantt";
import { DagGraph } from "./DagGraph";
import { DEFAULT_LAYOUT, layoutDag } from "./dag-layout";
import { NodePanel } from "./NodePanel";
import { analysisErrorDocument } from "./run-critical-path";


/** Path steps listed by name before "… N more". */
const PATH_LISTED = 200;

/**
 * A compiled workflow's critical path in the page: the figures (recorded, or as if one node took
 * another time), the compiler's status and notice, the DAG with the selected node's panel, and the
 * recorded timeline. Everything is computed here by analysis/ (workflowCriticalPathReport), as the
 * server's critical_path.get computes it.
 */
export function WorkflowDagView(props: {
  workflow: Workflow;
  compile: CompileReport;
  selected: string | null;
  onSelect: (node: string | null) => void;
  whatIf: WhatIfValue | null;
  onWhatIf: (whatIf: WhatIfValue | null) => void;
}) {
  const { workflow } = props;
  const index = useMemo(() => new Map(workflow.nodes.map((n, i) => [n.id, i])), [workflow]);
  const recorded = useMemo(() => workflowCriticalPathReport(workflow), [workflow]);
  const asked = props.whatIf && index.has(props.whatIf.node) ? props.whatIf : null;
  const whatIf = useMemo((): { report: CriticalPathReport } | { error: ReturnType<typeof analysisErrorDocument> } | null => {
    if (!asked) return null;
    try {
      return { report: workflowCriticalPathReport(workflow, { whatIfNode: asked.node, whatIfNs: Math.round(asked.ms * 1e6) }) };
    } catch (error) {
      return { error: analysisErrorDocument(error) };
    }
  }, [workflow, asked?.node, asked?.ms]);
  const report = whatIf && "report" in whatIf ? whatIf.report : recorded;

  const edges = useMemo(() => {
    const from = workflow.edges.map((e) => index.get(e.from)!);
    const to = workflow.edges.map((e) => index.get(e.to)!);
    return { from, to, kinds: workflow.edges.map((e) => e.kind) };
  }, [workflow, index]);
  const path = useMemo(() => report.path.map((p) => index.get(p.id)!), [report, index]);
  const [expanded, setExpanded] = useState<{ path: readonly number[]; folds: ReadonlySet<string> }>({ path, folds: new Set() });
  // Folds are bands between the path's steps: a new path starts with them closed.
  const folds = expanded.path === path ? expanded.folds : DEFAULT_LAYOUT.expanded;
  const layout = useMemo(
    () => layoutDag({ nodeCount: workflow.nodes.length, from: edges.from, to: edges.to, path, weight: workflow.nodes.map((n) => n.recorded.own_ns) }, { ...DEFAULT_LAYOUT, expanded: folds }),
    [workflow, edges, path, folds],
  );
  const [reveal, setReveal] = useState<{ node: number } | null>(null);
  /** Opens a fold, keeping its first call in view. */
  const openFold = (fold: string) => {
    const element = layout.elements.find((e) => e.id === fold);
    setExpanded({ path, folds: new Set([...folds, fold]) });
    if (element?.kind === "fold") setReveal({ node: element.members[0] });
  };

  const selectedIndex = props.selected !== null ? (index.get(props.selected) ?? null) : null;
  const select = (node: number | null, from: "graph" | "elsewhere") => {
    if (node !== null) {
      const element = layout.elements[layout.elementOf[node]];
      if (element?.kind === "fold") setExpanded({ path, folds: new Set([...folds, element.id]) });
      if (from === "elsewhere" || element?.kind === "fold") setReveal({ node });
    }
    props.onSelect(node === null ? null : workflow.nodes[node].id);
  };
  const onPath = useMemo(() => new Set(path), [path]);
  const timing = report.nodes!;

  return (
    <div className="cp-view" data-testid="dag-view" data-state="ready" data-kind="workflow" data-nodes={workflow.nodes.length} data-path={report.path.map((p) => p.id).join(",")}>
      <CriticalPathFigures report={report} recorded={asked ? recorded : null} sequentialLabel="Sequential sum (one call at a time)" />
      {whatIf && "error" in whatIf ? <ErrorPanel error={whatIf.error} /> : null}
      {asked ? (
        <p className="cp-toolbar" data-testid="what-if-note">
          What if <span className="mono">{asked.node}</span> took {asked.ms} ms (recorded {formatValue(workflow.nodes[index.get(asked.node)!].recorded.own_ns, "ns")}):
          the figures, the path and the slack below are computed so.
          <button type="button" onClick={() => props.onWhatIf(null)}>
            Reset
          </button>
        </p>
      ) : null}
      <CompileSummary workflow={workflow} report={props.compile} />
      <p className="cp-toolbar cp-path" data-testid="cp-path">
        <strong>Critical path:</strong>
        {report.path.slice(0, PATH_LISTED).map((step, i) => (
          <span key={step.id}>
            {i > 0 ? "→ " : ""}
            <button type="button" onClick={() => select(index.get(step.id)!, "elsewhere")} title={`${step.name} (${step.service}): ${formatValue(step.critical_ns, "ns")} on the path`}>
              {step.id} {step.name.slice(0, 40)}
            </button>{" "}
            <span className="tip-muted">{formatValue(step.critical_ns, "ns")}</span>
          </span>
        ))}
        {report.path.length > PATH_LISTED ? <span className="tip-muted">… {report.path.length - PATH_LISTED} more</span> : null}
      </p>
      <div className="cp-main">
        <div className="cp-graph" data-testid="dag-graph" data-folded={layout.folded} data-elements={layout.elements.length}>
          <DagGraph
            layout={layout}
            nodes={workflow.nodes}
            timing={timing}
            edgeKinds={edges.kinds}
            selected={selectedIndex}
            reveal={reveal}
            start={path[0] ?? null}
            onSelect={(node) => select(node, "graph")}
            onOpenFold={openFold}
          />
          <div className="cp-graph-tools">
            <span className="cp-legend">
              <span>
                <i className="path" />
                critical path
              </span>
              <span>
                <i />
                data
              </span>
              <span>
                <i className="follows" />
                order
              </span>
              <span>
                <i className="child" />
                subagent
              </span>
              <span>
                <i className="unknown" />
                side effect unknown
              </span>
            </span>
            <span className="spacer" />
            {layout.folded ? (
              <span className="cp-legend folded" data-testid="dag-folded-note">
                {layout.folded.toLocaleString("en-US")} of {workflow.nodes.length.toLocaleString("en-US")} calls folded beside the path
              </span>
            ) : null}
          </div>
        </div>
        {selectedIndex !== null ? (
          <NodePanel
            node={workflow.nodes[selectedIndex]}
            timing={timing[selectedIndex]}
            edges={workflow.edges.filter((e) => e.from === props.selected || e.to === props.selected)}
            whatIfMs={asked?.node === props.selected ? asked.ms : null}
            onWhatIf={(ms) => props.onWhatIf(ms === null ? null : { node: props.selected!, ms })}
            onSelect={(id) => select(id === null ? null : (index.get(id) ?? null), "elsewhere")}
          />
        ) : (
          <aside className="cp-panel tip-muted" data-testid="node-panel-empty">
            Click a node (or a bar of the timeline) for its arguments, its recorded result and its side effect, and to ask what if it took another time. Drag to pan, wheel to scroll, ctrl+wheel or
            +/− to zoom, 0 shows the whole graph.
          </aside>
        )}
      </div>
      <h3 className="cp-section-title">Recorded timeline</h3>
      <DagGantt nodes={workflow.nodes} onPath={onPath} selected={selectedIndex} onSelect={(node) => select(node, "elsewhere")} pathLabel={asked ? "the what-if critical path" : "the critical path"} />
    </div>
  );
}
