import type { CompileReport, Workflow } from "../../analysis/workflow/compile";

/**
 * What the compiler did and did not establish: the workflow's status (blocked tools, with the
 * command a person reviews them with), its structural notice, and the counts of its report with
 * their lists (filtered calls, merged reads, ties, cut arguments). Observed text (tool names,
 * call ids, errors) is rendered as text.
 */
export function CompileSummary(props: { workflow: Workflow; report: CompileReport }) {
  const { workflow, report } = props;
  const refs = report.references;
  const rows: [string, string | number, React.ReactNode][] = [
    ["Tool calls read", report.events, null],
    [
      "Filtered (failed, unfinished, results without a call)",
      report.filtered.length,
      report.filtered.length ? report.filtered.map((f) => `${f.tool} (${f.call_id}): ${f.status}${f.error ? ` — ${f.error.slice(0, 200)}` : ""}`).join("\n") : null,
    ],
    ["Deduplicated reads (same tool, arguments and result)", report.deduplicated.length, report.deduplicated.length ? report.deduplicated.map((d) => `${d.call_id} → ${d.node}`).join("\n") : null],
    ["Repeated reads kept (the result changed)", report.not_deduplicated.length, report.not_deduplicated.length ? report.not_deduplicated.map((d) => `${d.node} (${d.call_id}) same call as ${d.same_as}`).join("\n") : null],
    ["References inferred", `${refs.data_ref} to results · ${refs.input} to inputs`, null],
    ["Ties (several sources had the value)", report.ties.length, report.ties.length ? report.ties.map((t) => `${t.node} ${t.argument || "(whole)"}: chose ${JSON.stringify(t.chosen)} over ${t.others.length}`).join("\n") : null],
    ["Cut at import (no references in or from them)", report.unreadable.length, report.unreadable.length ? report.unreadable.map((u) => `${u.call_id}: ${u.part}`).join("\n") : null],
    ["Links between reads dropped", report.read_links_dropped, null],
    ["Edges", `${report.edges.data_ref} data · ${report.edges.follows_from} order · ${report.edges.child} subagent`, null],
  ];
  return (
    <>
      <div className="cp-status" data-testid="workflow-status" data-status={workflow.status}>
        {workflow.status === "blocked" ? (
          <div>
            <span className="blocked">Blocked</span>: {workflow.blocked_tools.length} tool{workflow.blocked_tools.length === 1 ? "" : "s"} of unknown side effect. The trace does not say whether they only read; a person reviews each
            (only reviewed reads are merged and reordered):
            <ul data-testid="blocked-tools">
              {workflow.blocked_tools.map((tool) => (
                <li key={tool}>
                  <span className="command mono">emberscope tools review {shellWord(tool)} --read-only</span>
                </li>
              ))}
            </ul>
          </div>
        ) : (
          <span>
            <span className="ready">Ready</span>: every tool&apos;s side effect is known ({workflow.nodes.filter((n) => n.side_effect_reviewed).length} of {workflow.nodes.length} nodes from reviewed contracts).
          </span>
        )}
      </div>
      <p className="cp-notice" data-testid="compile-notice">
        {report.notice}
      </p>
      <details className="cp-counts" data-testid="compile-counts">
        <summary>
          {report.events} calls → {workflow.nodes.length} nodes, {workflow.edges.length} edges · {report.filtered.length} filtered · {report.deduplicated.length} deduplicated · {report.ties.length} ties
        </summary>
        <table className="data">
          <tbody>
            {rows.map(([label, value, list]) => (
              <tr key={label}>
                <td>{label}</td>
                <td className="num">{value}</td>
                <td className="wide">{list ? <pre className="mono">{list}</pre> : null}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {workflow.inputs && Object.keys(workflow.inputs).length ? (
          <p>
            Runtime inputs: <span className="mono">{Object.keys(workflow.inputs).join(", ")}</span>
          </p>
        ) : null}
      </details>
    </>
  );
}

/** A tool name as one shell word (quoted when it holds anything but safe characters). */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_.:/@-]+$/.test(text) ? text : `'${text.replaceAll("'", `'"'"'`)}'`;
}
