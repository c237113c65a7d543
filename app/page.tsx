import { ErrorPanel } from "../components/ErrorPanel";
import { TypedErrorPanel } from "../components/TypedErrorPanel";
import { AppShell, mainRail } from "../components/AppShell";
import { CommitsTable } from "../components/CommitsTable";
import { CapturePanel, type Adapter, type Workload } from "../components/home/CapturePanel";
import "../components/home/home.css";
import { ImportPanel } from "../components/home/ImportPanel";
import { IMPORTERS } from "../analysis/formats";
import { LiveOperations } from "../components/home/LiveOperations";
import { LiveRefresh } from "../components/home/LiveRefresh";
import { statusSignature } from "../components/home/status-signature";
import { InvestigationsTable } from "../components/InvestigationsTable";
import { NoRunsYet, RunsTable } from "../components/RunsTable";
import { WorkspaceFacts } from "../components/WorkspaceFacts";
import { toEmberscopeError, type ErrorDocument } from "../server/domain/errors";
import { callService, listCapabilities, listCommits, listInvestigations, listOperations, listRuns, listWorkloads, workspaceStatus } from "../server/services";
import type { ServiceContext } from "../server/services/service";
import { webServiceContext } from "../server/trpc/context";

export const dynamic = "force-dynamic";

const RAIL = mainRail("workspace");

/** Runs the home page lists (newest first); /runs has them all. */
const RECENT_RUNS = 10;

/** Open investigations the home page lists (newest first); /investigations has them all. */
const OPEN_INVESTIGATIONS = 5;

/** The bundled demo (examples/demo) declares a workload named "demo". */
const DEMO_WORKLOAD = "demo";

async function captureChoices(ctx: ServiceContext): Promise<{ workloads: Workload[]; adapters: Adapter[]; error: ErrorDocument | null }> {
  try {
    const [{ workloads }, { adapters }] = await Promise.all([callService(listWorkloads, ctx, {}), callService(listCapabilities, ctx, {})]);
    return { workloads, adapters, error: null };
  } catch (thrown) {
    return { workloads: [], adapters: [], error: toEmberscopeError(thrown).toDocument() };
  }
}

export default async function HomePage(props: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const ctx = webServiceContext();
  // A failed run's "Capture again" opens this page with its workload and adapter chosen.
  const search = await props.searchParams;
  const askedWorkload = typeof search.workload === "string" ? search.workload : undefined;
  const askedAdapter = typeof search.adapter === "string" ? search.adapter : undefined;
  try {
    const status = await callService(workspaceStatus, ctx, {});
    const runs = await callService(listRuns, ctx, { limit: RECENT_RUNS });
    const commits = await callService(listCommits, ctx, { limit: 10 });
    const operations = await callService(listOperations, ctx, { active: true, limit: 20 });
    const investigations = await callService(listInvestigations, ctx, { status: "open", limit: OPEN_INVESTIGATIONS });
    const choices = await captureChoices(ctx);
    const firstRun = runs.items.length === 0;
    const demoDeclared = choices.workloads.some((w) => w.name === DEMO_WORKLOAD);
    const capture = choices.error ? (
      <section className="home-panel">
        <h3>Capture a workload</h3>
        <ErrorPanel error={choices.error} command="npx emberscope workload list" />
      </section>
    ) : (
      <CapturePanel
        workloads={choices.workloads}
        adapters={choices.adapters}
        initialWorkload={askedWorkload ?? (firstRun && demoDeclared ? DEMO_WORKLOAD : undefined)}
        initialAdapter={askedAdapter}
        title={firstRun && demoDeclared ? "Capture the bundled demo" : undefined}
      />
    );
    return (
      <AppShell pinnedCommitId={status.head_commit_id} pinnedSeq={status.head.seq} rail={RAIL}>
        <h1>Workspace</h1>
        <LiveRefresh signature={statusSignature(status)} />
        <WorkspaceFacts status={status} />
        {/* One structure for both states, so an import in progress keeps its state when the page refreshes. */}
        <section className={firstRun ? "first-run" : "start-panels"} data-testid={firstRun ? "first-run" : "start-panels"}>
          <h2>{firstRun ? "Get the first evidence" : "Import or capture"}</h2>
          {firstRun ? (
            <p className="muted">
              {demoDeclared
                ? "This project declares the bundled demo workload: capture it with a CPU profiler (the plan is shown for review before anything runs), or import a profile you already have."
                : "Import a profile or trace you already have, or capture a workload declared in emberscope.toml."}
            </p>
          ) : null}
          <div className="home-panels">
            <ImportPanel formats={IMPORTERS.map((i) => i.title)} />
            {capture}
          </div>
        </section>
        <h2 id="operations">Live operations</h2>
        <LiveOperations initial={operations.items} />
        <h2 id="investigations">Open investigations</h2>
        {investigations.items.length === 0 ? (
          <div className="empty" data-testid="home-investigations-empty">
            <strong>No open investigations.</strong> Start one on <a href="/investigations">Investigations</a>, or add a view you are looking at with its{" "}
            <em>Add to investigation</em> button.
          </div>
        ) : (
          <div data-testid="home-investigations">
            <InvestigationsTable rows={investigations.items} compact />
            <p className="muted">
              <a href="/investigations">{investigations.next_cursor ? `All investigations (the ${OPEN_INVESTIGATIONS} newest open ones are shown)` : "All investigations"}</a>
            </p>
          </div>
        )}
        <h2 id="runs">Recent runs</h2>
        {runs.items.length ? (
          <>
            <RunsTable runs={runs.items} />
            <p className="muted">
              <a href="/runs" data-testid="all-runs">
                {runs.next_cursor ? `All ${runs.matching.toLocaleString("en-US")} runs (the ${RECENT_RUNS} newest are shown): filter, compare, rename` : "All runs: filter, compare, rename"}
              </a>
            </p>
          </>
        ) : (
          <NoRunsYet />
        )}
        <h2 id="commits">Corpus commits</h2>
        <CommitsTable commits={commits.items} />
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Workspace</h1>
        <TypedErrorPanel thrown={thrown} />
      </AppShell>
    );
  }
}
