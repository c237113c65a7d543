import { TypedErrorPanel } from "../../../components/TypedErrorPanel";
import { AppShell, mainRail } from "../../../components/AppShell";
import { callService, flameTimeline, flameTree, listArtifacts, listCommits, listToolContracts, runViewFacts, showHead, showRun } from "../../../server/services";
import type { FlameData } from "../../../components/evidence/use-evidence";
import { parseTrackSelection } from "../../../components/flame/track-selection";
import { timeOrderQuestion } from "../../../components/flame/time-order-question";
import { parseTransforms } from "../../../analysis/queries/transforms";
import { TIMELINE_ROW_KEYS } from "../../../analysis/queries/flame-timeline";
import { FLAME_NODE_KEYS } from "../../../analysis/queries/flame-tree";
import { packAnswer, type PackedAnswer } from "../../../analysis/queries/packed-rows";
import { budgetOf } from "./url-state";
import { RunShareMenu } from "../../../components/share/RunShareMenu";
import { webServiceContext } from "../../../server/trpc/context";
import "../../../components/flame/workbench.css";
import { CommitPicker } from "./CommitPicker";
import { RunWorkbench } from "./RunWorkbench";
import { firstParam, readUrlState, type SearchParams } from "../../../components/url-state";
import { RUN_URL_STATE } from "./url-state";
import { firstSqlAnswer } from "../../sql/first-answer";
import { LimitationLine, RunFailure } from "../../../components/run-views/RunFailure";

export const dynamic = "force-dynamic";


const RUN_RAIL = (runId: string) => mainRail(null, [{ href: `/runs/${encodeURIComponent(runId)}`, label: "This run", current: true }]);

/** /runs/[runId]?view=flame|sandwich|calltree|trace|dag|sql&commit=&metric=&zoom=&q=&sel=&orient=&mode=&window=&range= (RUN_URL_STATE) */
export default async function RunPage(props: { params: Promise<{ runId: string }>; searchParams: Promise<SearchParams> }) {
  const { runId } = await props.params;
  const search = await props.searchParams;
  const ctx = webServiceContext();
  const commit = firstParam(search.commit) ?? "HEAD";
  try {
    const initial = readUrlState(RUN_URL_STATE, search);
    // The SQL tab's first answer comes with the HTML (the server engine), before DuckDB-WASM starts; asked alongside the summary.
    const sqlFirstAsked = initial.view === "sql" ? firstSqlAnswer(ctx, commit, runId, initial.sql, "hotspots") : Promise.resolve(null);
    // The flame tree the page opens on is asked now, beside the summary, and streamed to the page
    // with it (no request after hydration); the page asks again if this one failed.
    const treeView = initial.view === "flame" || initial.view === "sandwich" || initial.view === "calltree";
    const transforms = parseTransforms(initial.tf);
    const inverted = initial.inv === "1";
    const firstFlame: Promise<PackedAnswer<FlameData, "nodes"> | null> = treeView
      ? callService(flameTree, ctx, {
          run_id: runId,
          commit_id: commit,
          metric: initial.metric ?? undefined,
          budget: budgetOf(initial.budget),
          tracks: parseTrackSelection(initial.tracks),
          ...(transforms.length || inverted ? { transforms, inverted } : {}),
        }).then(
          // Packed as time order's cells below: a fifth of the bytes in the HTML.
          (tree) => packAnswer(tree as FlameData, "nodes", FLAME_NODE_KEYS),
          () => null,
        )
      : Promise.resolve(null);
    // A page that opens in time order gets its cells the same way, asked beside the flame tree
    // (the page asks again if this failed or answers another commit or metric).
    const firstTimeOrder =
      initial.view === "flame" && initial.mode === "time-order"
        ? callService(flameTimeline, ctx, timeOrderQuestion({ runId, commitId: commit, metric: initial.metric, trackId: null, tracks: parseTrackSelection(initial.tracks), transforms })).then(
            // Packed: a fifth of the bytes streamed with the HTML (5.7 MB as an object per cell at 20,000 cells).
            (answer) => packAnswer(answer, "cells", TIMELINE_ROW_KEYS),
            () => null,
          )
        : Promise.resolve(null);
    const run = await callService(showRun, ctx, { run_id: runId });
    // Asked together (the run exists): the run view's facts read the evidence (not the summary's
    // top frames and track lists: the body, and the scripts it names, wait for none of that), the
    // others the catalog.
    const [summary, commits, head, artifacts] = await Promise.all([
      callService(runViewFacts, ctx, { run_id: runId, commit_id: commit }),
      // The picker offers only the commits that hold this run's evidence.
      callService(listCommits, ctx, { limit: 50, run_id: runId }),
      callService(showHead, ctx, {}),
      callService(listArtifacts, ctx, { run_id: runId, limit: 20 }),
    ]);
    const hasSpans = (summary.spans?.spans ?? 0) > 0;
    // The DAG view compiles tool calls with the tools a person reviewed.
    const contracts = hasSpans ? (await callService(listToolContracts, ctx, {})).tools.map((t) => ({ tool: t.tool, side_effect: t.side_effect })) : [];
    // The console output a capture keeps is not "the original file"; a profile or trace is.
    const hasArtifact = artifacts.items.some((a) => a.registrations.some((r) => r.run_id === runId && r.kind !== "stdout" && r.kind !== "stderr"));
    const headId = head.commit_id;
    const sqlFirst = await sqlFirstAsked;
    const pinned = commits.items.find((c) => c.commit_id === summary.commit_id);
    const options = commits.items.some((c) => c.commit_id === summary.commit_id) ? commits.items : [...commits.items, { commit_id: summary.commit_id, seq: -1, message: "" }];
    return (
      <AppShell pinnedCommitId={summary.commit_id} pinnedSeq={pinned?.seq} isHead={summary.commit_id === headId} rail={RUN_RAIL(runId)}>
        <div className="run-head">
          <div>
            <h1 data-testid="run-title">{run.title}</h1>
            <p className="tip-muted">
              <span className="mono">{run.run_id}</span> · {run.kind} · {run.source} · <span className={`status status-${run.status}`}>{run.status}</span> · reads commit{" "}
              <code data-testid="view-commit">{summary.commit_id}</code>
              {summary.commit_id !== headId ? <strong className="error-inline"> (not HEAD)</strong> : null}
            </p>
          </div>
          <span className="spacer" />
          <CommitPicker commits={options.map((c) => ({ commit_id: c.commit_id, seq: c.seq, message: c.message }))} current={summary.commit_id} headId={headId} />
          <a className="plain-button" href={`/compare?base=${encodeURIComponent(runId)}`}>
            Compare with…
          </a>
          <RunShareMenu runId={runId} commitId={summary.commit_id} metric={firstParam(search.metric) ?? summary.primary_metric} hasSamples={summary.metrics.some((m) => m.samples > 0)} hasArtifact={hasArtifact} />
        </div>
        <RunFailure run={run} />
        {summary.limitations.length ? (
          <details className="limitations">
            <summary>{summary.limitations.length} limitation(s) recorded by the importer</summary>
            <ul>
              {summary.limitations.map((l, i) => (
                <LimitationLine key={i} limitation={l} />
              ))}
            </ul>
          </details>
        ) : null}
        {/* A run that ended before it produced evidence has nothing to explore: its failure above says why. */}
        {run.status !== "succeeded" && summary.metrics.length === 0 && !hasSpans ? null : (
        <RunWorkbench
          runId={runId}
          commitId={summary.commit_id}
          metrics={summary.metrics.filter((m) => m.samples > 0).map((m) => ({ name: m.name, unit: m.unit, total: m.total }))}
          primaryMetric={summary.primary_metric}
          initial={initial}
          sqlFirst={sqlFirst}
          hasSpans={hasSpans}
          toolContracts={contracts}
          metadata={summary.metadata}
          title={run.title}
          firstFlame={firstFlame}
          firstTimeOrder={firstTimeOrder}
        />
        )}
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RUN_RAIL(runId)}>
        <h1>Run {runId}</h1>
        <TypedErrorPanel thrown={thrown} />
        <p>
          <a href="/">Back to the workspace</a>
        </p>
      </AppShell>
    );
  }
}
