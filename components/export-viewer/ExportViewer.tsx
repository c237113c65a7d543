import { useEffect, useMemo, useState } from "react";
import Markdown from "react-markdown";
import { renderSql } from "../../analysis/queries/define";
import { addPrunedRemainders, flameTreeQuery, type FlameNode } from "../../analysis/queries/flame-tree";
import { FlameGraphCell } from "../flame/FlameGraphCell";
import { ResultTable } from "../sql/ResultTable";
import type { Manifest } from "./bundle";
import { openSession } from "./engine";
import "./viewer.css";

/**
 * The read-only notebook of an export: notes, SQL cells (run by DuckDB-WASM over the evidence in
 * the file), flame graphs (the server's flame_tree query, run here), trace windows as span tables,
 * hypotheses and findings as recorded. Nothing is written and nothing is fetched.
 */

interface DocCell {
  cell_id: string;
  name: string | null;
  kind: string;
  commit_id: string | null;
  content: Record<string, unknown>;
}
interface Doc {
  investigation: { title: string; question: string; status: string };
  cells: DocCell[];
  hypotheses: { hypothesis_id: string; claim: string; prediction: string; status: string }[];
  findings: { finding_id: string; title: string; claim: string; assessment: string; limitations: string[]; references: { relation: string; target: Record<string, unknown> }[] }[];
}

const METRIC_PREFERENCE = ["cpu_ns", "wall_ns", "samples", "alloc_bytes", "instructions", "Ir"];

type State<T> = { state: "running" } | { state: "done"; value: T } | { state: "failed"; message: string };

function useQuery<T>(run: () => Promise<T>, deps: unknown[]): State<T> {
  const [state, setState] = useState<State<T>>({ state: "running" });
  useEffect(() => {
    let live = true;
    setState({ state: "running" });
    run().then(
      (value) => live && setState({ state: "done", value }),
      (e: unknown) => live && setState({ state: "failed", message: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, deps);
  return state;
}

function runGenerations(manifest: Manifest, commitId: string, runId: string): string[] {
  return manifest.generations.filter((g) => g.run_id === runId && g.commit_ids.includes(commitId)).map((g) => g.generation_id);
}

function SqlCell({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const sql = String(cell.content.sql ?? "").trim().replace(/;+\s*$/, "");
  const state = useQuery(async () => {
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

function FlameCell({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const runId = String(cell.content.run_id);
  const [zoom, setZoom] = useState<string | null>((cell.content.zoom as string | null | undefined) ?? null);
  const state = useQuery(async () => {
    const generations = runGenerations(manifest, cell.commit_id!, runId);
    if (!generations.length) return null;
    const session = await openSession(manifest, cell.commit_id!);
    const list = generations.map((g) => `'${g}'`).join(", ");
    const metrics = (
      await session.query(
        `SELECT m.name, any_value(m.unit) AS unit FROM samples s JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id WHERE s.generation_id IN (${list}) GROUP BY 1 ORDER BY 1`,
      )
    ).rows as { name: string; unit: string }[];
    const requested = typeof cell.content.metric === "string" ? metrics.find((m) => m.name === cell.content.metric) : undefined;
    const metric = requested ?? METRIC_PREFERENCE.map((n) => metrics.find((m) => m.name === n)).find(Boolean) ?? metrics[0];
    if (!metric) return null;
    const raw = (await session.query(renderSql(flameTreeQuery.sql, { generations, metric: metric.name, budget: 20_000 }))).rows as FlameNode[];
    return { nodes: addPrunedRemainders(raw).nodes, metric };
  }, [cell.cell_id]);
  if (state.state === "running") return <p className="tip-muted">Computing the flame graph in DuckDB-WASM…</p>;
  if (state.state === "failed") return <p className="ev-error">{state.message}</p>;
  if (!state.value) return <p className="tip-muted">The export carries no samples of run {runId} at this commit.</p>;
  return (
    <FlameGraphCell
      nodes={state.value.nodes}
      unit={state.value.metric.unit}
      metric={state.value.metric.name}
      zoom={zoom}
      onZoomChange={setZoom}
      search={typeof cell.content.search === "string" ? cell.content.search : undefined}
      orientation={(cell.content.orientation as "flame" | "icicle" | undefined) ?? undefined}
      compact
      maxHeight={480}
    />
  );
}

function TraceCell({ manifest, cell }: { manifest: Manifest; cell: DocCell }) {
  const runId = String(cell.content.run_id);
  const window = cell.content.window as [number, number] | undefined;
  const state = useQuery(async () => {
    const generations = runGenerations(manifest, cell.commit_id!, runId);
    if (!generations.length) return null;
    const session = await openSession(manifest, cell.commit_id!);
    const within = window ? ` AND start_ns < ${Number(window[1])} AND start_ns + dur_ns > ${Number(window[0])}` : "";
    return session.query(
      `SELECT name, category, start_ns, dur_ns, depth, status, args FROM spans WHERE generation_id IN (${generations.map((g) => `'${g}'`).join(", ")})${within} ORDER BY start_ns, depth LIMIT 500`,
    );
  }, [cell.cell_id]);
  if (state.state === "running") return <p className="tip-muted">Reading the spans…</p>;
  if (state.state === "failed") return <p className="ev-error">{state.message}</p>;
  if (!state.value) return <p className="tip-muted">The export carries no spans of run {runId} at this commit.</p>;
  return <ResultTable result={state.value as never} />;
}

function CellBody({ manifest, doc, cell }: { manifest: Manifest; doc: Doc; cell: DocCell }) {
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
      return <FlameCell manifest={manifest} cell={cell} />;
    case "trace":
      return <TraceCell manifest={manifest} cell={cell} />;
    case "hypothesis": {
      const h = doc.hypotheses.find((x) => x.hypothesis_id === cell.content.hypothesis_id);
      return h ? <p>{h.claim} <span className="tip-muted">({h.status}; predicts: {h.prediction})</span></p> : null;
    }
    case "finding": {
      const f = doc.findings.find((x) => x.finding_id === cell.content.finding_id);
      return f ? <p><strong>{f.title}</strong>: {f.claim} <span className="tip-muted">({f.assessment})</span></p> : null;
    }
    default:
      return (
        <p className="tip-muted">
          A {cell.kind} cell: this viewer shows it as recorded. <code>{JSON.stringify(cell.content)}</code>
        </p>
      );
  }
}

export function ExportViewer({ manifest, doc }: { manifest: Manifest; doc: Doc }) {
  const redacted = useMemo(() => manifest.redaction.report.filter((r) => r.count > 0), [manifest]);
  useEffect(() => {
    performance.mark("emberscope:export-painted");
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
          <CellBody manifest={manifest} doc={doc} cell={cell} />
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
