import { TypedErrorPanel } from "../../components/TypedErrorPanel";
import { AppShell, mainRail } from "../../components/AppShell";
import { RunPicker } from "../../components/runs/RunPicker";
import "../../components/runs/runs.css";
import { callService, listCommits, showCommit, showRun } from "../../server/services";
import { webServiceContext } from "../../server/trpc/context";
import { SqlWorkbench } from "./SqlWorkbench";
import { firstSqlAnswer } from "./first-answer";

export const dynamic = "force-dynamic";

const RAIL = mainRail("sql");

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** /sql?commit=ID|HEAD&run=RUN&sql=TEXT: the SQL console over one pinned commit (HEAD by default), running TEXT first. */
export default async function SqlPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const ctx = webServiceContext();
  try {
    const commit = await callService(showCommit, ctx, { commit_id: one(params.commit) ?? "HEAD" });
    const commits = await callService(listCommits, ctx, { limit: 50 });
    const runId = one(params.run) || null;
    const run = runId ? await callService(showRun, ctx, { run_id: runId }) : null;
    // The server engine answers the first query now, so its rows come with the HTML.
    const first = commit.generations.length ? await firstSqlAnswer(ctx, commit.commit_id, runId, one(params.sql) ?? null, one(params.preset) ?? null) : null;
    return (
      <AppShell pinnedCommitId={commit.commit_id} pinnedSeq={commit.seq} rail={RAIL}>
        <h1>SQL</h1>
        <form className="sql-scope" method="get" action="/sql">
          <label>
            Commit{" "}
            <select name="commit" defaultValue={commit.commit_id}>
              {commits.items.map((c) => (
                <option key={c.commit_id} value={c.commit_id}>
                  #{c.seq} · {c.commit_id} · {c.message.slice(0, 60)}
                </option>
              ))}
            </select>
          </label>{" "}
          <RunPicker name="run" label="Run" initial={run} none="every run in the commit" testId="pick-run" />{" "}
          <button type="submit" className="button">
            Pin
          </button>
        </form>
        {commit.generations.length === 0 ? (
          <div className="empty" data-testid="sql-no-evidence">
            <strong>This commit has no evidence yet.</strong> Import a profile or capture a workload from the <a href="/">home page</a> (or{" "}
            <span className="command mono">npx emberscope import PATH</span>), then come back: the new commit&apos;s Parquet files become the views here.
          </div>
        ) : null}
        <SqlWorkbench key={`${commit.commit_id}/${runId ?? ""}`} commitId={commit.commit_id} runId={runId} initialPreset={one(params.preset)} initialSql={one(params.sql) ?? null} first={first} />
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>SQL</h1>
        <TypedErrorPanel thrown={thrown} />
      </AppShell>
    );
  }
}
