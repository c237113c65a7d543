import { AppShell } from "../components/AppShell";
import { CommitsTable } from "../components/CommitsTable";
import { ErrorPanel } from "../components/ErrorPanel";
import { RunsTable } from "../components/RunsTable";
import { WorkspaceFacts } from "../components/WorkspaceFacts";
import { toEmberscopeError } from "../server/domain/errors";
import { callService, listCommits, listRuns, SERVICES, workspaceStatus } from "../server/services";
import { webServiceContext } from "../server/trpc/context";

export const dynamic = "force-dynamic";

const RAIL = [
  { href: "/", label: "Workspace", current: true },
  { href: "/#runs", label: "Runs" },
  { href: "/#commits", label: "Commits" },
];

export default async function HomePage() {
  const ctx = webServiceContext();
  try {
    const status = await callService(workspaceStatus, ctx, {});
    const runs = await callService(listRuns, ctx, { limit: 25 });
    const commits = await callService(listCommits, ctx, { limit: 10 });
    return (
      <AppShell pinnedCommitId={status.head_commit_id} pinnedSeq={status.head.seq} rail={RAIL}>
        <h1>Workspace</h1>
        <WorkspaceFacts status={status} />
        <h2 id="runs">Recent runs</h2>
        <RunsTable runs={runs.items} truncated={runs.truncated} />
        <h2 id="commits">Corpus commits</h2>
        <CommitsTable commits={commits.items} />
      </AppShell>
    );
  } catch (thrown) {
    const error = toEmberscopeError(thrown).toDocument();
    const command = error.code === "WORKSPACE_NOT_FOUND" ? "npx emberscope init" : undefined;
    const recovery = SERVICES.find((s) => s.name === error.recovery?.operation);
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Workspace</h1>
        <ErrorPanel
          error={error}
          command={command}
          recoveryKind={recovery?.kind}
          recoveryLabel={recovery?.summary.split(/[.(]/)[0].trim()}
        />
      </AppShell>
    );
  }
}
