import { AppShell, mainRail } from "../../components/AppShell";
import { ErrorPanel } from "../../components/ErrorPanel";
import { toEmberscopeError } from "../../server/domain/errors";
import { callService, listCommits, listRuns, showRun, summarizeRun } from "../../server/services";
import { webServiceContext } from "../../server/trpc/context";
import "../../components/flame/workbench.css";
import { CommitPicker } from "../runs/[runId]/CommitPicker";
import { CompareWorkbench } from "./CompareWorkbench";
import { RunPicker } from "../../components/runs/RunPicker";
import "../../components/runs/runs.css";
import { firstParam, readUrlState, type SearchParams } from "../../components/url-state";
import { COMPARE_URL_STATE } from "./url-state";

export const dynamic = "force-dynamic";


const RAIL = mainRail("compare");

/** /compare?base=RUN&candidate=RUN[&commit=&metric=&from=base&norm=1&zoom=&q=] (COMPARE_URL_STATE) */
export default async function ComparePage(props: { searchParams: Promise<SearchParams> }) {
  const search = await props.searchParams;
  const ctx = webServiceContext();
  const base = firstParam(search.base);
  const candidate = firstParam(search.candidate);
  const commit = firstParam(search.commit) ?? "HEAD";
  try {
    // Two runs at least make a comparison; the pickers search and page through all of them.
    const enough = (await callService(listRuns, ctx, { limit: 2 })).items.length === 2;
    const commits = await callService(listCommits, ctx, { limit: 50 });
    const headId = commits.items[0]?.commit_id ?? null;
    const [baseRun, candidateRun] = await Promise.all([base, candidate].map((id) => (id ? callService(showRun, ctx, { run_id: id }) : null)));
    const both = baseRun && candidateRun ? ([baseRun, candidateRun] as const) : null;
    const summary = both ? await callService(summarizeRun, ctx, { run_id: candidate!, commit_id: commit }) : null;
    const commitId = summary?.commit_id ?? (commit === "HEAD" ? headId : commit);
    const pinned = commits.items.find((c) => c.commit_id === commitId);
    return (
      <AppShell pinnedCommitId={commitId} pinnedSeq={pinned?.seq} isHead={commitId === headId} rail={RAIL}>
        <div className="run-head">
          <h1>Compare runs</h1>
          <span className="spacer" />
          {commitId ? <CommitPicker commits={commits.items.map((c) => ({ commit_id: c.commit_id, seq: c.seq, message: c.message }))} current={commitId} headId={headId} /> : null}
        </div>
        {!enough ? (
          <div className="empty" data-testid="compare-needs-runs">
            <strong>Comparing needs two runs.</strong> Import or capture another profile of the same program (for example before and after a change):{" "}
            <span className="command mono">npx emberscope capture run node-cpuprofile --workload NAME</span>
          </div>
        ) : (
          <form className="compare-form" method="get" action="/compare">
            <RunPicker name="base" label="Base" initial={baseRun} testId="pick-base" />
            <span aria-hidden="true">→</span>
            <RunPicker name="candidate" label="Candidate" initial={candidateRun} testId="pick-candidate" />
            {commit !== "HEAD" ? <input type="hidden" name="commit" value={commit} /> : null}
            <button type="submit" className="button">
              Compare
            </button>
          </form>
        )}
        {both && summary && commitId ? (
          <>
            <p className="tip-muted" data-testid="compare-subject">
              base <a href={`/runs/${both[0].run_id}`}>{both[0].title}</a> <span className="mono">{both[0].run_id}</span> → candidate <a href={`/runs/${both[1].run_id}`}>{both[1].title}</a>{" "}
              <span className="mono">{both[1].run_id}</span> · reads commit <code data-testid="view-commit">{commitId}</code>
            </p>
            <CompareWorkbench
              base={both[0].run_id}
              candidate={both[1].run_id}
              commitId={commitId}
              metrics={summary.metrics.filter((m) => m.samples > 0).map((m) => m.name)}
              initial={readUrlState(COMPARE_URL_STATE, search)}
            />
          </>
        ) : enough ? (
          <p className="tip-muted">Pick a base and a candidate run. The differential flame graph draws the candidate, coloured red where it grew and blue where it shrank.</p>
        ) : null}
      </AppShell>
    );
  } catch (thrown) {
    const error = toEmberscopeError(thrown).toDocument();
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Compare runs</h1>
        <ErrorPanel error={error} command={error.code === "WORKSPACE_NOT_FOUND" ? "npx emberscope init" : error.code === "RUN_NOT_FOUND" ? "npx emberscope runs list" : undefined} />
      </AppShell>
    );
  }
}
