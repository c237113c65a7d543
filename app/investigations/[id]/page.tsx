import { AppShell, mainRail } from "../../../components/AppShell";
import { TypedErrorPanel } from "../../../components/TypedErrorPanel";
import { Notebook } from "../../../components/notebook/Notebook";
import { callService, listCommits, showInvestigation } from "../../../server/services";
import { webServiceContext } from "../../../server/trpc/context";
import "../../../components/flame/workbench.css";

export const dynamic = "force-dynamic";

/** The notebook belongs to the Investigations section of the rail. */
const RAIL = mainRail("investigations");

/** /investigations/[id]: the investigation as a notebook of live cells, each pinned to its commit. */
export default async function InvestigationPage(props: { params: Promise<{ id: string }> }) {
  const { id } = await props.params;
  const ctx = webServiceContext();
  try {
    const view = await callService(showInvestigation, ctx, { investigation_id: id });
    const commits = await callService(listCommits, ctx, { limit: 1 });
    const head = commits.items[0] ?? null;
    return (
      <AppShell pinnedCommitId={head?.commit_id ?? null} pinnedSeq={head?.seq} rail={RAIL}>
        <Notebook initial={view} headCommitId={head?.commit_id ?? null} />
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Investigation {id}</h1>
        <TypedErrorPanel thrown={thrown} />
        <p>
          <a href="/investigations">All investigations</a>
        </p>
      </AppShell>
    );
  }
}
