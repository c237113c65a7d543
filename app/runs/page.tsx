import { AppShell, mainRail } from "../../components/AppShell";
import { NoRunsYet } from "../../components/RunsTable";
import { TypedErrorPanel } from "../../components/TypedErrorPanel";
import { listInputOf, RUNS_PAGE_SIZE, RUNS_URL_STATE } from "../../components/runs/library-query";
import { RunsLibrary } from "../../components/runs/RunsLibrary";
import { LiveRefresh } from "../../components/home/LiveRefresh";
import { statusSignature } from "../../components/home/status-signature";
import "../../components/runs/runs.css";
import { readUrlState, type SearchParams } from "../../components/url-state";
import { toEmberscopeError } from "../../server/domain/errors";
import { RunKind, RunStatus } from "../../server/domain/models";
import { callService, listRunFacets, listRuns, workspaceStatus } from "../../server/services";
import { webServiceContext } from "../../server/trpc/context";

export const dynamic = "force-dynamic";

const RAIL = mainRail("runs");

/** /runs?q=&kind=&status=&source=&workload=&from=&to=&order=&cursor= (RUNS_URL_STATE): every run, a keyset page at a time. */
export default async function RunsPage(props: { searchParams: Promise<SearchParams> }) {
  const state = readUrlState(RUNS_URL_STATE, await props.searchParams);
  const ctx = webServiceContext();
  try {
    const status = await callService(workspaceStatus, ctx, {});
    const facets = await callService(listRunFacets, ctx, {});
    // Filters or a cursor the list refuses are its typed error, shown in the list with a way out.
    const first = await callService(listRuns, ctx, listInputOf(state, RUNS_PAGE_SIZE)).then(
      (page) => ({ page, error: null }),
      (thrown: unknown) => ({ page: null, error: toEmberscopeError(thrown).toDocument() }),
    );
    return (
      <AppShell pinnedCommitId={status.head_commit_id} pinnedSeq={status.head.seq} rail={RAIL}>
        <h1>Runs</h1>
        {facets.total === 0 ? (
          <>
            {/* The first run appears without a reload. */}
            <NoRunsYet />
            <LiveRefresh signature={statusSignature(status)} />
          </>
        ) : (
          <RunsLibrary initialState={state} initialPage={first.page} initialError={first.error} choices={{ kinds: RunKind.options, statuses: RunStatus.options, facets }} signature={statusSignature(status)} />
        )}
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Runs</h1>
        <TypedErrorPanel thrown={thrown} />
      </AppShell>
    );
  }
}
