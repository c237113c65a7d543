import { headers } from "next/headers";
import type { CompileReport, Workflow } from "../../../analysis/workflow/compile";
import { AppShell, mainRail } from "../../../components/AppShell";
import { TypedErrorPanel } from "../../../components/TypedErrorPanel";
import { firstParam, type SearchParams } from "../../../components/url-state";
import { callService, getWorkflow, getWorkflowRun, listExposedWorkflows, listWorkflowRuns, workflowPolicy, workspaceStatus } from "../../../server/services";
import { webServiceContext } from "../../../server/trpc/context";
import { PersonAction } from "./PersonAction";
import { WorkflowPageDag } from "./WorkflowPageDag";
import "../../../components/dag/dag.css";
import "./workflow-page.css";

export const dynamic = "force-dynamic";

const RAIL = mainRail("runs");
/** The most nodes the page reads (workflows.get pages of 2,000). */
const MAX_NODES = 20_000;

const ms = (v: number | null | undefined) => (typeof v === "number" ? `${v.toFixed(1)} ms` : "—");

type RunSummary = {
  state?: string;
  wall_ms?: number;
  counts?: Record<string, number>;
  reproduced?: boolean | null;
  nodes?: { node: string; tool: string; state: string; start_ms: number | null; end_ms: number | null; recorded_ms: number; error: { code: string } | null; blocked_by: string | null }[];
  benchmark?: { repetitions: number; wall_ms: { median: number; min: number; max: number; mad: number; each: number[] }; sequential_ms: number; critical_path_ms: number; speedup_bound: number; achieved_speedup: number; efficiency: number };
};

/** /workflows/[id]?run=wfr_…: a stored workflow — its DAG and critical path, its tools' contracts and policy, its runs with per-call replayed vs recorded times, and a benchmark's chart. */
export default async function WorkflowPage(props: { params: Promise<{ id: string }>; searchParams: Promise<SearchParams> }) {
  const { id } = await props.params;
  const chosenRun = firstParam((await props.searchParams).run);
  // With the request's headers: whether this browser holds the person's session (the acts below need it).
  const ctx = webServiceContext(await headers());
  const person = ctx.person === true;
  try {
    const status = await callService(workspaceStatus, ctx, {});
    let page = await callService(getWorkflow, ctx, { workflow_id: id, limit: 2000 });
    const record = page.workflow;
    const nodes = [...page.nodes];
    const edges = [...page.edges];
    while (page.next_cursor && nodes.length < MAX_NODES) {
      page = await callService(getWorkflow, ctx, { workflow_id: id, limit: 2000, cursor: page.next_cursor });
      nodes.push(...page.nodes);
      edges.push(...page.edges);
    }
    const workflow: Workflow = {
      format: "emberscope.workflow",
      version: 1,
      source: { run_id: record.run_id, commit_id: record.commit_id, trace_id: null },
      status: record.status,
      blocked_tools: record.blocked_tools,
      inputs: page.inputs as Workflow["inputs"],
      nodes: nodes.map((n) => ({
        id: n.id,
        tool: n.tool,
        side_effect: n.side_effect as Workflow["nodes"][number]["side_effect"],
        side_effect_reviewed: n.side_effect_reviewed,
        agent: n.agent,
        arguments: n.arguments as Workflow["nodes"][number]["arguments"],
        recorded: { call_ids: n.call_ids, start_ns: n.start_ns, duration_ns: n.duration_ns, own_ns: n.own_ns, result: n.result, result_truncated: n.result_truncated },
      })),
      edges,
    };
    const r = record.report;
    const compile: CompileReport = { ...r, filtered: r.filtered.items as CompileReport["filtered"], deduplicated: r.deduplicated.items, not_deduplicated: r.not_deduplicated.items, ties: r.ties.items as CompileReport["ties"], unreadable: r.unreadable.items as CompileReport["unreadable"] };
    const policy = await callService(workflowPolicy, ctx, { workflow_id: id });
    const runs = await callService(listWorkflowRuns, ctx, { workflow_id: id, limit: 20 });
    const exposure = (await callService(listExposedWorkflows, ctx, { workflow_id: id })).exposures[0] ?? null;
    const exposed = exposure?.state === "exposed";
    const readOnly = policy.tools.every((t) => t.side_effect === "read" && t.review === "reviewed" && t.registered);
    const shownId = chosenRun ?? runs.items[0]?.workflow_run_id ?? null;
    const shown = shownId ? await callService(getWorkflowRun, ctx, { workflow_run_id: shownId, limit: 2000 }) : null;
    const summary = (shown?.summary ?? null) as RunSummary | null;
    return (
      <AppShell pinnedCommitId={status.head_commit_id} pinnedSeq={status.head.seq} rail={RAIL}>
        <h1 data-testid="workflow-title">Workflow {record.workflow_id}</h1>
        <p className="workflow-lead">
          Version {record.version} of run <a href={`/runs/${record.run_id}?view=dag`}>{record.run_id}</a> · {record.node_count} calls · {record.status}
          {record.blocked_tools.length ? ` (unknown: ${record.blocked_tools.join(", ")})` : ""} · <code title={record.digest}>{record.digest.slice(0, 19)}…</code>
        </p>

        <section className="workflow-section" data-testid="workflow-policy">
          <h2>Tools, contracts and policy</h2>
          <p className="workflow-note">
            Live replay runs only code registered for a tool (built-ins and the tools folder in emberscope.toml), bound to a contract a person reviewed; a tool that
            writes runs only where a person approved it for this workflow. {policy.would_run ? "A live run would pass every check." : "A live run would be refused now."}
          </p>
          <table className="workflow-table">
            <thead>
              <tr>
                <th>tool</th>
                <th className="num">calls</th>
                <th>side effect</th>
                <th>code</th>
                <th>review</th>
                <th>approved</th>
                <th>live run</th>
                <th>your acts</th>
              </tr>
            </thead>
            <tbody>
              {policy.tools.map((t) => (
                <tr key={t.tool} data-testid={`policy-${t.tool}`}>
                  <td>{t.tool}</td>
                  <td className="num">{t.calls}</td>
                  <td>{t.side_effect}</td>
                  <td>{t.registered ? "registered" : "none"}</td>
                  <td>{t.review}</td>
                  <td>{t.side_effect === "write" ? (t.approved ? "yes" : "no") : "—"}</td>
                  <td>
                    {t.refusal ? (
                      <>
                        {t.refusal}{" "}
                        <code className="workflow-fix">
                          {t.refusal === "APPROVAL_REQUIRED"
                            ? `emberscope workflows approve ${record.workflow_id} ${t.tool}`
                            : t.refusal === "TOOL_NOT_REVIEWED"
                              ? `emberscope tools review ${t.tool} --${t.side_effect === "write" ? "write" : "read-only"}`
                              : "register it in the tools folder"}
                        </code>
                      </>
                    ) : (
                      "ok"
                    )}
                  </td>
                  <td>
                    {t.review !== "reviewed" ? (
                      <>
                        <PersonAction path="tools.review" input={{ tool: t.tool, side_effect: "read", note: "reviewed on the workflow page" }} label="Review: read-only" testId={`review-read-${t.tool}`} person={person} title="Its calls only read: they may be merged and reordered." />
                        <PersonAction path="tools.review" input={{ tool: t.tool, side_effect: "write", note: "reviewed on the workflow page" }} label="Review: writes" testId={`review-write-${t.tool}`} person={person} title="Its calls change the world." />
                      </>
                    ) : null}
                    {t.side_effect === "write" ? (
                      t.approved ? (
                        <PersonAction path="workflows.approve" input={{ workflow_id: record.workflow_id, tool: t.tool, revoke: true }} label="Revoke approval" testId={`revoke-${t.tool}`} person={person} />
                      ) : (
                        <PersonAction path="workflows.approve" input={{ workflow_id: record.workflow_id, tool: t.tool, note: "approved on the workflow page" }} label="Approve its writes" testId={`approve-${t.tool}`} person={person} title="Allow this tool's side effects in this workflow's live runs (bound to its content)." />
                      )
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>

        <section className="workflow-section" data-testid="workflow-exposure">
          <h2>Exposed to agents</h2>
          <p className="workflow-note">
            A person can offer a reviewed, read-only workflow as a tool of this workspace&apos;s MCP server: agents then call it by name with its runtime inputs, and each call replays it live
            through every check, audited like every agent call. It is bound to this content and these contracts: if either changes, its calls are refused until exposed again.
          </p>
          {person ? null : (
            <p className="workflow-note" data-testid="workflow-sign-in">
              This browser is not signed in as you, so the buttons on this page are locked: open the sign-in link <code>emberscope serve</code> printed (or a new one from{" "}
              <code>emberscope serve link</code>), or use the CLI (<code>emberscope workflows expose {record.workflow_id}</code>, <code>emberscope tools review TOOL --read-only</code>).
            </p>
          )}
          <div className="workflow-exposure">
            <span data-testid="exposure-state">
              {exposed ? (
                <>
                  exposed as <code>{exposure.tool}</code> (revision {exposure.revision}, by {exposure.changed_by}){exposure.current ? "" : ` — refused now: ${exposure.stale_reason}; expose it again`}
                </>
              ) : exposure ? (
                <>not exposed (withdrawn {exposure.updated_at})</>
              ) : (
                <>not exposed</>
              )}
            </span>
            {exposed && exposure.current ? (
              <PersonAction path="workflows.expose" input={{ workflow_id: record.workflow_id, withdraw: true }} label="Withdraw" testId="withdraw-workflow" person={person} />
            ) : (
              <PersonAction
                path="workflows.expose"
                input={{ workflow_id: record.workflow_id, note: "exposed on the workflow page" }}
                label={exposed ? "Expose again" : "Expose as an MCP tool"}
                testId="expose-workflow"
                person={person}
                title={readOnly ? "Every tool is registered, reviewed and read-only." : "Refused unless every tool is registered, reviewed and read-only."}
              />
            )}
          </div>
        </section>

        <section className="workflow-section" data-testid="workflow-runs">
          <h2>Runs</h2>
          {runs.items.length === 0 ? (
            <p className="workflow-note">
              Not replayed yet: <code>emberscope workflows run {record.workflow_id} --mode frozen</code> or <code>emberscope workflows benchmark {record.workflow_id} --repetitions 5</code>
            </p>
          ) : (
            <table className="workflow-table">
              <thead>
                <tr>
                  <th>run</th>
                  <th>kind</th>
                  <th>mode</th>
                  <th>state</th>
                  <th>replay as spans</th>
                  <th>created</th>
                </tr>
              </thead>
              <tbody>
                {runs.items.map((run) => (
                  <tr key={run.workflow_run_id} aria-current={run.workflow_run_id === shownId ? "true" : undefined}>
                    <td>
                      <a href={`/workflows/${record.workflow_id}?run=${run.workflow_run_id}`}>{run.workflow_run_id}</a>
                    </td>
                    <td>{run.kind}</td>
                    <td>{run.mode}</td>
                    <td>{run.state}</td>
                    <td>{run.replay_run_id ? <a href={`/runs/${run.replay_run_id}?view=dag`}>{run.replay_run_id}</a> : "—"}</td>
                    <td>{run.created_at}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {shown && summary ? (
            <div className="workflow-run" data-testid="workflow-run-detail">
              <h3>
                {shown.workflow_run.kind} {shown.workflow_run.workflow_run_id} ({shown.workflow_run.mode}): {shown.workflow_run.state}
                {summary.wall_ms !== undefined ? ` in ${ms(summary.wall_ms)}` : ""}
                {summary.counts ? ` — ${summary.counts.succeeded} succeeded, ${summary.counts.failed} failed, ${summary.counts.skipped} skipped, ${summary.counts.cancelled} cancelled` : ""}
              </h3>
              {summary.benchmark ? <BenchmarkChart figures={summary.benchmark} /> : null}
              {summary.nodes ? (
                <table className="workflow-table" data-testid="workflow-run-nodes">
                  <thead>
                    <tr>
                      <th>node</th>
                      <th>tool</th>
                      <th>state</th>
                      <th className="num">recorded</th>
                      <th className="num">replayed</th>
                      <th className="num">started at</th>
                    </tr>
                  </thead>
                  <tbody>
                    {summary.nodes.map((n) => (
                      <tr key={n.node}>
                        <td>{n.node}</td>
                        <td>{n.tool}</td>
                        <td>
                          {n.state}
                          {n.error ? ` ${n.error.code}` : ""}
                          {n.blocked_by ? ` (after ${n.blocked_by} failed)` : ""}
                        </td>
                        <td className="num">{ms(n.recorded_ms)}</td>
                        <td className="num">{n.start_ms !== null && n.end_ms !== null ? ms(n.end_ms - n.start_ms) : "—"}</td>
                        <td className="num">{ms(n.start_ms)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : null}
            </div>
          ) : null}
        </section>

        <section className="workflow-section">
          <h2>DAG and critical path</h2>
          <WorkflowPageDag workflow={workflow} compile={compile} />
        </section>
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Workflow {id}</h1>
        <TypedErrorPanel thrown={thrown} />
      </AppShell>
    );
  }
}

/** Each repetition's wall time on one axis with the critical-path bound and the recorded sequential sum. */
function BenchmarkChart({ figures }: { figures: NonNullable<RunSummary["benchmark"]> }) {
  const width = 640;
  const height = 120;
  const pad = 40;
  const max = Math.max(figures.sequential_ms, ...figures.wall_ms.each) * 1.05;
  const x = (v: number) => pad + (v / max) * (width - 2 * pad);
  return (
    <figure className="workflow-benchmark" data-testid="benchmark-chart">
      <svg width={width} height={height} role="img" aria-label="Benchmark wall times against the critical-path bound and the recorded sum">
        <line x1={pad} x2={width - pad} y1={70} y2={70} stroke="currentColor" strokeOpacity={0.3} />
        <line x1={x(figures.critical_path_ms)} x2={x(figures.critical_path_ms)} y1={20} y2={80} stroke="#2a7" strokeWidth={2} />
        <text x={x(figures.critical_path_ms)} y={14} fontSize={11} textAnchor="middle">
          bound {ms(figures.critical_path_ms)}
        </text>
        <line x1={x(figures.sequential_ms)} x2={x(figures.sequential_ms)} y1={20} y2={80} stroke="#c44" strokeWidth={2} />
        <text x={x(figures.sequential_ms)} y={14} fontSize={11} textAnchor="end">
          recorded sum {ms(figures.sequential_ms)}
        </text>
        {figures.wall_ms.each.map((w, i) => (
          <circle key={i} cx={x(w)} cy={60 - (i % 3) * 8} r={4} fill="#36c" fillOpacity={0.8}>
            <title>{`repetition ${i + 1}: ${ms(w)}`}</title>
          </circle>
        ))}
        <text x={pad} y={100} fontSize={11}>
          0
        </text>
        <text x={width - pad} y={100} fontSize={11} textAnchor="end">
          {ms(max)}
        </text>
      </svg>
      <figcaption>
        {figures.repetitions} repetitions: median {ms(figures.wall_ms.median)} (min {ms(figures.wall_ms.min)}, max {ms(figures.wall_ms.max)}, MAD {ms(figures.wall_ms.mad)}); speed-up{" "}
        {figures.achieved_speedup.toFixed(2)}× of a {figures.speedup_bound.toFixed(2)}× bound ({(figures.efficiency * 100).toFixed(1)} %).
      </figcaption>
    </figure>
  );
}
