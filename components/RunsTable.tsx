import type { ReactNode } from "react";
import type { Run } from "../server/domain/models";

/** `YYYY-MM-DD HH:MM:SS` of an ISO time (UTC, as stored). */
export function runTime(iso: string): string {
  return iso.slice(0, 19).replace("T", " ");
}

/** What tells a run apart in one line: its title, source and creation time (pickers, compare's subject line). */
export function runLabel(run: Run): string {
  return `${run.title} · ${run.source} · ${runTime(run.created_at).slice(0, 16)}`;
}

/** The workload of a capture (from its details), or nothing. */
function workloadOf(run: Run): string {
  return typeof run.details.workload === "string" ? run.details.workload : "";
}

/** An import's file name when its title no longer says it (it was renamed), else nothing. */
export function renamedFrom(run: Run): string {
  const file = run.details.file_name;
  return typeof file === "string" && file !== run.title ? file : "";
}

export interface RunSelection {
  selected: ReadonlySet<string>;
  toggle: (run: Run) => void;
  /** Selects (or clears) every run shown. */
  toggleAll: (runs: Run[], on: boolean) => void;
}

/**
 * Runs as a table: title (a link to the run; its id, and the file name of a renamed import,
 * beneath), kind, source, workload, status and when it was created. The runs library adds a
 * checkbox per row (`selection`) and an editable title (`title`).
 */
export function RunsTable({ runs, selection, title }: { runs: Run[]; selection?: RunSelection; title?: (run: Run) => ReactNode }) {
  const allShown = selection !== undefined && runs.length > 0 && runs.every((r) => selection.selected.has(r.run_id));
  return (
    <table className="data runs-table" data-testid="runs-table">
      <thead>
        <tr>
          {selection ? (
            <th className="runs-select">
              <input type="checkbox" aria-label="Select every run shown" checked={allShown} onChange={(e) => selection.toggleAll(runs, e.target.checked)} data-testid="select-page" />
            </th>
          ) : null}
          <th>Run</th>
          <th>Kind</th>
          <th>Source</th>
          <th>Workload</th>
          <th>Status</th>
          <th className="num">Created (UTC)</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.run_id} data-testid="run-row" data-run-id={run.run_id} aria-selected={selection ? selection.selected.has(run.run_id) : undefined}>
            {selection ? (
              <td className="runs-select">
                <input
                  type="checkbox"
                  aria-label={`Select ${run.title}`}
                  checked={selection.selected.has(run.run_id)}
                  onChange={() => selection.toggle(run)}
                  data-testid="select-run"
                />
              </td>
            ) : null}
            <td className="wide run-title-cell">
              {title ? (
                title(run)
              ) : (
                <a href={`/runs/${encodeURIComponent(run.run_id)}`} className="run-title" data-testid="run-title">
                  {run.title}
                </a>
              )}
              <div className="run-id mono">
                {run.run_id}
                {renamedFrom(run) ? ` · ${renamedFrom(run)}` : ""}
              </div>
            </td>
            <td>{run.kind}</td>
            <td>{run.source}</td>
            <td>{workloadOf(run)}</td>
            <td>
              <span className={`status status-${run.status}`}>{run.status}</span>
            </td>
            <td className="num" title={run.created_at}>
              {runTime(run.created_at)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The empty state of a workspace without runs: how to get the first one. */
export function NoRunsYet() {
  return (
    <div className="empty" data-testid="runs-empty">
      <strong>No runs yet.</strong> A run is one import or capture of performance evidence. To make the first one:
      <ol>
        <li>
          import a profile you already have (Chrome/V8 <code>.cpuprofile</code>, trace JSON, pprof, perf script, folded stacks, …):{" "}
          <span className="command mono">npx emberscope import PATH</span>
        </li>
        <li>
          or capture a workload declared in <code>emberscope.toml</code>: <span className="command mono">npx emberscope capture run node-cpuprofile --workload NAME</span>
        </li>
      </ol>
    </div>
  );
}
