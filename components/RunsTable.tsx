import type { Run } from "../server/domain/models";

/** Runs, newest first; the empty state says how to get the first one. */
export function RunsTable({ runs, truncated }: { runs: Run[]; truncated: boolean }) {
  if (runs.length === 0) {
    return (
      <div className="empty" data-testid="runs-empty">
        <strong>No runs yet.</strong> A run is one import or capture of performance evidence. To make the first one:
        <ol>
          <li>
            import a profile you already have (Chrome/V8 <code>.cpuprofile</code>, trace JSON, pprof, perf script, folded
            stacks, …): <span className="command mono">npx emberscope import PATH</span>
          </li>
          <li>
            or capture a workload declared in <code>emberscope.toml</code>:{" "}
            <span className="command mono">npx emberscope capture run node-cpuprofile --workload NAME</span>
          </li>
        </ol>
      </div>
    );
  }
  return (
    <>
      <table className="data" data-testid="runs-table">
        <thead>
          <tr>
            <th>Run</th>
            <th>Kind</th>
            <th>Source</th>
            <th>Status</th>
            <th>Created</th>
            <th>Title</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.run_id}>
              <td className="mono">
                <a href={`/runs/${encodeURIComponent(run.run_id)}`}>{run.run_id}</a>
              </td>
              <td>{run.kind}</td>
              <td>{run.source}</td>
              <td>
                <span className={`status status-${run.status}`}>{run.status}</span>
              </td>
              <td className="num">{run.created_at.replace("T", " ").slice(0, 19)}</td>
              <td className="wide">{run.title}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {truncated ? <p className="mono">More runs exist: npx emberscope runs list --cursor …</p> : null}
    </>
  );
}
