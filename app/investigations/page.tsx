import { AppShell, mainRail } from "../../components/AppShell";
import { TypedErrorPanel } from "../../components/TypedErrorPanel";
import { firstParam, type SearchParams } from "../../components/url-state";
import { callService, listInvestigations, workspaceStatus } from "../../server/services";
import { webServiceContext } from "../../server/trpc/context";
import { INVESTIGATION_FILTERS, readFilter } from "./filter";
import { InvestigationsList } from "./InvestigationsList";
import { NewInvestigationForm } from "./NewInvestigationForm";
import "./investigations.css";

export const dynamic = "force-dynamic";

const RAIL = mainRail("investigations");

/** Rows per page of the list (and per "More"). */
const PAGE = 25;

/** /investigations?status=open|concluded|abandoned|all: investigations, newest first, and a form to start one. */
export default async function InvestigationsPage(props: { searchParams: Promise<SearchParams> }) {
  const filter = readFilter(firstParam((await props.searchParams).status));
  const ctx = webServiceContext();
  try {
    const status = await callService(workspaceStatus, ctx, {});
    const page = await callService(listInvestigations, ctx, { limit: PAGE, ...(filter === "all" ? {} : { status: filter }) });
    return (
      <AppShell pinnedCommitId={status.head_commit_id} pinnedSeq={status.head.seq} rail={RAIL}>
        <h1>Investigations</h1>
        <p className="investigations-lead">
          An investigation is a question answered with pinned evidence, kept as a notebook of cells. Start one here, or add any view (flame graph, sandwich, call
          tree, trace window, compare, SQL) with its <strong>Add to investigation</strong> button.
        </p>
        <NewInvestigationForm />
        <nav className="investigations-filter" aria-label="Status" data-testid="investigations-filter">
          {INVESTIGATION_FILTERS.map((f) => (
            <a key={f} href={f === "open" ? "/investigations" : `/investigations?status=${f}`} aria-current={f === filter ? "page" : undefined} data-testid={`filter-${f}`}>
              {f}
            </a>
          ))}
        </nav>
        {page.items.length === 0 ? (
          <div className="empty" data-testid="investigations-empty">
            <strong>{filter === "all" ? "No investigations yet." : `No ${filter} investigations.`}</strong> Start one with the form above, from a view&apos;s{" "}
            <em>Add to investigation</em> button, or from a shell: <span className="command mono">npx emberscope investigations create TITLE</span>
          </div>
        ) : (
          <InvestigationsList key={filter} initial={page.items} nextCursor={page.next_cursor} filter={filter} limit={PAGE} />
        )}
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Investigations</h1>
        <TypedErrorPanel thrown={thrown} />
      </AppShell>
    );
  }
}
