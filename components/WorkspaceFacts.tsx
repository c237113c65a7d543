import type { WorkspaceStatus } from "../server/services/workspace";

/** The workspace at a glance: identity, schema, HEAD and record counts. */
export function WorkspaceFacts({ status }: { status: WorkspaceStatus }) {
  const facts: [string, string | number, boolean?][] = [
    ["Workspace", status.workspace_id, true],
    ["HEAD commit", `${status.head_commit_id} (#${status.head.seq})`, true],
    ["Schema", `v${status.schema_version}`],
    ["Runs", status.counts.runs],
    ["Artifacts", status.counts.artifacts],
    ["Commits", status.counts.commits],
    ["Generations", status.counts.generations],
    ["Active operations", status.counts.operations_active],
  ];
  return (
    <dl className="facts" data-testid="workspace-facts">
      {facts.map(([label, value, mono]) => (
        <div className="fact" key={label}>
          <dt>{label}</dt>
          <dd className={mono ? "mono" : undefined}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
