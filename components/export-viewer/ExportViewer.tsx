import { useEffect, useMemo, useState } from "react";
import Markdown from "react-markdown";
import { FlameGraphCell } from "../flame/FlameGraphCell";
import { ResultTable } from "../sql/ResultTable";
import { painted, type FlameSummaries, type FlameSummary, type Manifest } from "./bundle";
import { CalltreeCell, CompareOffline, CriticalPathOffline, SandwichOffline, StaticCell, TraceCell, treeFacts, useOffline, ViewChips, type DocCell } from "./cells";
import { openSession } from "./engine";
import { flameTree, sampleViewOf } from "./evidence";
import "./viewer.css";

/**
 * The read-only notebook of an export: notes, SQL cells (run by DuckDB-WASM over the evidence in
 * the file), flame graphs, sandwiches, call trees, comparisons, the trace window and span critical
 * paths (the server's queries run here, drawn by the app's own components), hypotheses and
 * findings as recorded. Nothing is written and nothing is fetched. The page paints at once from
 * the notebook and the flame summaries computed at export; the evidence goes live when the engine
 * is ready.
 */

interface Doc {
  investigation: { title: string; question: string; status: string };
  cells: DocCell[];
  hypotheses: { hypothesis_id: string; claim: string; prediction: string; status: string }[];
  findings: { finding_id: string; title: string; claim: string; assessment: string; limitations: string[]; references: { relation: string; target: Record<string, unknown> }[] }[];
}

function SqlCell({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const sql = String(cell.content.sql ?? "").trim().replace(/;+\s*$/, "");
  const state = useOffline(async () => {
    const session = await openSession(manifest, cell.commit_id!);
    if (cell.name) {
      await session.query(`CREATE OR REPLACE TABLE notebook."${cell.name.replace(/"/g, '""')}" AS ${sql}`);
      return session.query(`SELECT * FROM notebook."${cell.name.replace(/"/g, '""')}"`);
    }
    return session.query(sql);
  }, [cell.cell_id]);
  return (
    <div data-testid="export-sql-cell" data-state={state.state}>
      <pre className="ev-sql">{sql}</pre>
      {state.state === "running" ? <p className="tip-muted">Running in DuckDB-WASM…</p> : null}
      {state.state === "failed" ? <p className="ev-error" data-testid="export-sql-error">{state.message}</p> : null}
      {state.state === "done" ? (
        <>
          <ResultTable result={state.value as never} />
          <script type="application/json" data-testid="export-sql-rows" dangerouslySetInnerHTML={{ __html: JSON.stringify(state.value.rows).replace(/</g, "\\u003c") }} />
        </>
      ) : null}
    </div>
  );
}

function FlameCell({ manifest, cell, summary }: { manifest: Manifest; cell: DocCell; summary: FlameSummary | undefined }) {
  const runId = String(cell.content.run_id);
  const [zoom, setZoom] = useState<string | null>((cell.content.zoom as string | null | undefined) ?? null);
  // The cell's tracks and transforms (and inversion), as the workspace draws it; the summary was computed with them too.
  const view = sampleViewOf(cell.content);
  const live = useOffline(() => flameTree(manifest, cell.commit_id!, runId, { metric: cell.content.metric as string | undefined, ...view }), [cell.cell_id]);
  // The summary computed at export paints at once; the live tree replaces it when the engine has it.
  const shown = live.state === "done" ? (live.value ? { nodes: live.value.nodes, metric: live.value.metric.name, unit: live.value.metric.unit } : null) : (summary ?? null);
  if (live.state === "failed" && !summary) return <p className="ev-error">{live.message}</p>;
  if (!shown) return live.state === "running" ? <p className="tip-muted">Computing the flame graph in DuckDB-WASM…</p> : <p className="tip-muted">The export carries no samples of run {runId} at this commit.</p>;
  const source = live.state === "done" ? "live" : "summary";
  return (
    <div data-testid="export-flame" data-source={source} {...treeFacts(shown.nodes, view)}>
      {live.state === "done" && live.value ? <ViewChips manifest={manifest} cell={cell} tree={live.value} view={view} /> : null}
      {source === "summary" ? (
        <p className="tip-muted" data-testid="export-flame-summary">
          {live.state === "failed" ? `The engine failed (${live.message}); showing` : "Showing"} the summary computed at export (the {shown.nodes.length.toLocaleString("en-US")} heaviest call paths){live.state === "running" ? "; the full flame graph goes live when DuckDB-WASM is ready…" : "."}
        </p>
      ) : null}
      <FlameGraphCell
        key={source}
        nodes={shown.nodes}
        unit={shown.unit}
        metric={shown.metric}
        zoom={zoom}
        onZoomChange={setZoom}
        search={typeof cell.content.search === "string" ? cell.content.search : undefined}
        orientation={(cell.content.orientation as "flame" | "icicle" | undefined) ?? undefined}
        compact
        maxHeight={480}
      />
    </div>
  );
}

function CellBody({ manifest, doc, cell, summaries }: { manifest: Manifest; doc: Doc; cell: DocCell; summaries: FlameSummaries }) {
  switch (cell.kind) {
    case "note":
      return (
        <div className="nb-markdown" data-testid="export-note">
          <Markdown disallowedElements={["img"]} unwrapDisallowed>
            {String(cell.content.markdown ?? "")}
          </Markdown>
        </div>
      );
    case "sql":
      return <SqlCell manifest={manifest} cell={cell} />;
    case "flame":
      return <FlameCell manifest={manifest} cell={cell} summary={summaries[cell.cell_id]} />;
    case "trace":
      return <TraceCell manifest={manifest} cell={cell} />;
    case "sandwich":
      return <SandwichOffline manifest={manifest} cell={cell} />;
    case "calltree":
      return <CalltreeCell manifest={manifest} cell={cell} />;
    case "compare":
      return <CompareOffline manifest={manifest} cell={cell} />;
    case "critical_path":
      return <CriticalPathOffline manifest={manifest} cell={cell} />;
    case "experiment":
      return <StaticCell cell={cell} reason="an experiment's trials and decision live in the workspace's control store, which an export does not carry; the findings below state what it concluded." />;
    case "hypothesis": {
      const h = doc.hypotheses.find((x) => x.hypothesis_id === cell.content.hypothesis_id);
      return h ? <p>{h.claim} <span className="tip-muted">({h.status}; predicts: {h.prediction})</span></p> : null;
    }
    case "finding": {
      const f = doc.findings.find((x) => x.finding_id === cell.content.finding_id);
      return f ? <p><strong>{f.title}</strong>: {f.claim} <span className="tip-muted">({f.assessment})</span></p> : null;
    }
    default:
      return <StaticCell cell={cell} reason={`this viewer has no live view of a ${cell.kind} cell.`} />;
  }
}

export function ExportViewer({ manifest, doc, summaries }: { manifest: Manifest; doc: Doc; summaries: FlameSummaries }) {
  const redacted = useMemo(() => manifest.redaction.report.filter((r) => r.count > 0), [manifest]);
  useEffect(() => {
    // The frame that shows the notebook; the evidence's decoding and the engine wait for it.
    requestAnimationFrame(() => {
      performance.mark("emberscope:export-painted");
      setTimeout(painted, 0);
    });
  }, []);
  return (
    <main className="ev-page" data-testid="export-viewer">
      <header className="ev-header">
        <h1 data-testid="export-title">{doc.investigation.title}</h1>
        {doc.investigation.question ? <p className="ev-question">{doc.investigation.question}</p> : null}
        <p className="tip-muted">
          Emberscope export of {manifest.created_at} · read-only · opened offline · redaction: <span data-testid="export-redaction-mode">{manifest.redaction.mode}</span>
        </p>
        <details className="ev-redactions">
          <summary>What was redacted ({redacted.reduce((n, r) => n + r.count, 0)} values)</summary>
          <table className="data">
            <thead>
              <tr>
                <th>kind</th>
                <th className="num">count</th>
                <th>action</th>
                <th>first found in</th>
              </tr>
            </thead>
            <tbody>
              {redacted.map((r) => (
                <tr key={r.kind}>
                  <td>{r.kind}</td>
                  <td className="num">{r.count}</td>
                  <td>{r.action}</td>
                  <td>{r.example}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      </header>
      {doc.cells.map((cell) => (
        <section key={cell.cell_id} className="ev-cell" data-testid="export-cell" data-kind={cell.kind} data-cell-id={cell.cell_id}>
          <div className="ev-cell-head">
            <span className="ev-kind">{cell.kind}</span>
            {cell.name ? <code>{cell.name}</code> : null}
            {cell.commit_id ? <span className="tip-muted">at {cell.commit_id}</span> : null}
          </div>
          <CellBody manifest={manifest} doc={doc} cell={cell} summaries={summaries} />
        </section>
      ))}
      {doc.findings.length ? (
        <section className="ev-cell" data-testid="export-findings">
          <h2>Findings</h2>
          {doc.findings.map((f) => (
            <div key={f.finding_id}>
              <strong>{f.title}</strong> — {f.claim} <span className="tip-muted">({f.assessment})</span>
            </div>
          ))}
        </section>
      ) : null}
    </main>
  );
}
