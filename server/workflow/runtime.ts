import { canonicalJson } from "../../analysis/notebook/digest";
import { recordedValue, resolveArguments, UnresolvedReference } from "../../analysis/workflow/arguments";
import type { Json, Workflow, WorkflowNode } from "../../analysis/workflow/compile";
import { scheduleByEvents, type NodeOutcome } from "../../analysis/workflow/schedule";
import { EmberscopeError, toEmberscopeError, type ErrorDocument } from "../domain/errors";
import type { ToolContract } from "../domain/workflow";
import type { RegisteredTool, ToolRegistry } from "./registry";
import { sleep } from "../services/leased-operation";

/**
 * The workflow runtime: replays a verified workflow (integrity.ts) in one of three modes.
 *
 * - every mode: each call first passes the per-call integrity check (`integrity`, when given: the
 *   workflow still is the content verified at the start).
 * - `live`: every call then passes, in this order and never skipped: the exact handler (a tool
 *   registered by code under exactly this name) and a reviewed contract bound to that handler's
 *   digest → policy (a side effect — a contract saying `write` — runs only when a person approved
 *   that tool for this workflow) and the input schema, over the arguments with their references
 *   filled in → the handler, with its contract's timeout and the run's cancellation → the output
 *   schema. The handler, contract and policy checks are also made for every node before the first
 *   call starts (a workflow that would be refused half-way starts nothing).
 * - `frozen`: no handler runs; each node's result is its recorded one, and the run checks that
 *   the recording reproduces: every reference resolves in the recorded results (REPLAY_DIVERGED).
 * - `controlled`: no handler runs; each node waits its recorded own time, then yields its
 *   recorded result — what the schedule alone achieves (the benchmark's mode).
 *
 * Scheduling is by events (analysis/workflow/schedule.ts) within the run's concurrency and each
 * tool's limit (its contract's; in frozen and controlled modes, the registered tool's, else none).
 */

export type ReplayMode = "frozen" | "controlled" | "live";

export interface RuntimeRequest {
  workflowId: string;
  doc: Workflow;
  /** Each node's dependencies by index, from verifyWorkflow. */
  deps: number[][];
  mode: ReplayMode;
  /** Runtime inputs replacing the recorded ones, by name (only names the workflow has). */
  inputs: Record<string, Json>;
  registry: ToolRegistry | null;
  contract: (tool: string) => ToolContract | null;
  /**
   * The per-call integrity check (integrity.ts `integrityGuard`): made before each call, first of
   * the checks, so a workflow changed mid-run is refused at its next call.
   */
  integrity?: () => Promise<void>;
  /** Tools a person approved for this workflow (side effects allowed). */
  approved: ReadonlySet<string>;
  concurrency: number;
  onFailure: "continue" | "cancel";
  signal?: AbortSignal;
  onNodeSettled?: (settled: number, total: number) => void;
  /** Controlled mode: how long a node waits for each recorded nanosecond (1e-6: real time). */
  msPerNs?: number;
}

export interface NodeReport {
  node: string;
  tool: string;
  state: NodeOutcome["state"];
  error: ErrorDocument | null;
  blocked_by: string | null;
  start_ms: number | null;
  end_ms: number | null;
  recorded_ms: number;
  /** Live: whether the result equals the recorded one (null when the recording was cut or failed). */
  matches_recorded: boolean | null;
}

export interface RuntimeResult {
  state: "succeeded" | "failed" | "cancelled";
  wall_ms: number;
  nodes: NodeReport[];
  counts: Record<NodeOutcome["state"], number>;
  /** The results of the nodes nothing depends on, by node id. */
  outputs: Record<string, Json>;
  /** Frozen: every reference resolved in the recorded results and no result was cut at import. */
  reproduced: boolean | null;
  /** Each node's arguments as called and its result (undefined where it has none): what the replay's spans carry. */
  calls: { args: Json | undefined; result: Json | undefined }[];
  /**
   * Handler calls that were aborted (timeout, cancel) and had still not returned ABANDON_GRACE_MS
   * after the run ended: code that ignores its signal and may still be running in this process.
   */
  abandoned: number;
}

/** How long a run waits, at its end, for aborted handlers to return before it counts them abandoned. */
export const ABANDON_GRACE_MS = 200;

function schemaIssues(error: { issues: { path: PropertyKey[]; message: string }[] }) {
  return error.issues.slice(0, 20).map((i) => ({ path: i.path.map(String).join("."), message: i.message.slice(0, 200) }));
}

/** The handler and contract a live call needs, or the typed refusal (never a lookup by anything but the exact name). */
export function handlerFor(req: Pick<RuntimeRequest, "registry" | "contract" | "approved" | "workflowId">, node: WorkflowNode): { tool: RegisteredTool; contract: ToolContract } {
  const tool = req.registry?.get(node.tool) ?? null;
  if (!tool) {
    throw new EmberscopeError("TOOL_NOT_REGISTERED", `No tool is registered as ${JSON.stringify(node.tool.slice(0, 128))}: node ${node.id} cannot run live. Register it in the project's tools folder, or replay frozen or controlled.`, {
      details: { node: node.id, tool: node.tool.slice(0, 512) },
      recovery: { operation: "tools.list", arguments: {}, safe_to_repeat: true },
    });
  }
  const contract = req.contract(node.tool);
  if (!contract || contract.handler_digest !== tool.handler_digest) {
    const why = !contract ? "it was never reviewed" : contract.handler_digest === null ? "it was reviewed before it was registered" : "its code changed since it was reviewed";
    throw new EmberscopeError("TOOL_NOT_REVIEWED", `The tool ${node.tool} has no reviewed contract for the code registered now (${why}).`, {
      details: { node: node.id, tool: node.tool, handler: tool.handler, handler_digest: tool.handler_digest, reviewed_digest: contract?.handler_digest ?? null },
    });
  }
  if (contract.side_effect !== "read" && !req.approved.has(node.tool)) {
    throw new EmberscopeError("APPROVAL_REQUIRED", `The tool ${node.tool} writes, and the workflow's policy does not allow it: a person approves it for this workflow first.`, {
      details: { node: node.id, tool: node.tool, workflow_id: req.workflowId },
    });
  }
  return { tool, contract };
}

export async function runWorkflowNodes(req: RuntimeRequest): Promise<RuntimeResult> {
  const { doc, mode } = req;
  const inputs: Record<string, Json> = { ...doc.inputs };
  for (const [name, value] of Object.entries(req.inputs)) {
    if (!Object.prototype.hasOwnProperty.call(doc.inputs, name)) throw new EmberscopeError("INVALID_ARGUMENTS", `The workflow has no runtime input named ${name.slice(0, 64)}.`, { details: { argument: "inputs", known: Object.keys(doc.inputs).slice(0, 50) } });
    inputs[name] = value;
  }
  const bound = mode === "live" ? doc.nodes.map((node) => handlerFor(req, node)) : null;
  const recorded = doc.nodes.map((n) => recordedValue(n.recorded.result));
  const outputs = new Map<string, Json>();
  const failures = new Map<number, EmberscopeError>();
  const matches: (boolean | null)[] = doc.nodes.map(() => null);
  const called: (Json | undefined)[] = doc.nodes.map(() => undefined);
  const msPerNs = req.msPerNs ?? 1e-6;
  // Handler calls not yet returned: those still out once the run ends were abandoned.
  const pending = new Set<Promise<unknown>>();

  const runNode = async (i: number, signal: AbortSignal): Promise<void> => {
    const node = doc.nodes[i];
    try {
      await req.integrity?.();
      let args: Json;
      try {
        args = resolveArguments(node.arguments, inputs, (id) => outputs.get(id));
      } catch (error) {
        if (!(error instanceof UnresolvedReference)) throw error;
        throw new EmberscopeError(mode === "live" ? "TOOL_INPUT_INVALID" : "REPLAY_DIVERGED", `Node ${node.id}'s arguments do not resolve: ${error.message}.`, { details: { node: node.id, nodes: [node.id], reason: error.reason } });
      }
      called[i] = args;
      if (mode === "frozen" || mode === "controlled") {
        if (node.recorded.result_truncated) throw new EmberscopeError("REPLAY_DIVERGED", `Node ${node.id}'s recorded result was cut at import, so it cannot be replayed.`, { details: { node: node.id, nodes: [node.id], reason: "result cut at import" } });
        if (mode === "controlled") await sleep(node.recorded.own_ns * msPerNs, signal);
        outputs.set(node.id, recorded[i]);
        return;
      }
      const { tool, contract } = bound![i];
      // Checked again per call: what the run started with must still be what it runs.
      handlerFor(req, node);
      const input = tool.definition.input.safeParse(args);
      if (!input.success) throw new EmberscopeError("TOOL_INPUT_INVALID", `Node ${node.id}'s arguments fail ${node.tool}'s input schema; the handler did not run.`, { details: { node: node.id, tool: node.tool, issues: schemaIssues(input.error) } });
      const timeoutMs = contract.binding?.timeout_ms ?? tool.definition.timeout_ms;
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new EmberscopeError("TOOL_TIMEOUT", `${node.tool} exceeded its ${timeoutMs} ms timeout at node ${node.id}.`, { details: { node: node.id, tool: node.tool, timeout_ms: timeoutMs } })), timeoutMs);
      const callSignal = AbortSignal.any([signal, timeout.signal]);
      let result: unknown;
      try {
        // The call is raced against its signal: a handler that ignores it is no longer waited for.
        result = await new Promise((resolve, reject) => {
          if (callSignal.aborted) return reject(callSignal.reason);
          callSignal.addEventListener("abort", () => reject(callSignal.reason), { once: true });
          const call = Promise.resolve().then(() => tool.definition.handler(input.data, { signal: callSignal, node: node.id }));
          const tracked: Promise<unknown> = call.then(
            () => pending.delete(tracked),
            () => pending.delete(tracked),
          );
          pending.add(tracked);
          call.then(resolve, reject);
        });
      } catch (error) {
        if (timeout.signal.aborted && !signal.aborted) throw timeout.signal.reason;
        if (signal.aborted || error instanceof EmberscopeError) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        throw new EmberscopeError("TOOL_FAILED", `${node.tool} failed at node ${node.id}.`, { details: { node: node.id, tool: node.tool, reason: reason.slice(0, 300) } });
      } finally {
        clearTimeout(timer);
      }
      const output = tool.definition.output.safeParse(result);
      if (!output.success) throw new EmberscopeError("TOOL_OUTPUT_INVALID", `${node.tool}'s result at node ${node.id} fails its output schema; it is not passed on.`, { details: { node: node.id, tool: node.tool, issues: schemaIssues(output.error) } });
      const value = (output.data ?? null) as Json;
      outputs.set(node.id, value);
      if (!node.recorded.result_truncated && node.recorded.result !== null) matches[i] = canonicalJson(value) === canonicalJson(recorded[i]);
    } catch (error) {
      if (!signal.aborted) failures.set(i, toEmberscopeError(error));
      throw error;
    }
  };

  const started = performance.now();
  let settledCount = 0;
  // Each tool's limit: its contract's (live), else the registered tool's; none for a tool without code.
  const limits = new Map<string, number>();
  doc.nodes.forEach((node, i) => {
    const limit = bound ? (bound[i].contract.binding?.concurrency ?? bound[i].tool.definition.concurrency) : (req.registry?.get(node.tool)?.definition.concurrency ?? Infinity);
    limits.set(node.tool, Math.min(limits.get(node.tool) ?? Infinity, limit));
  });
  const outcomes = await scheduleByEvents(
    doc.nodes.map((node, i) => ({ deps: req.deps[i], group: node.tool, weight: node.recorded.own_ns })),
    {
      concurrency: req.concurrency,
      groupLimit: (group) => limits.get(group) ?? Infinity,
      onFailure: req.onFailure,
      signal: req.signal,
      run: runNode,
      now: () => performance.now() - started,
      onSettled: () => req.onNodeSettled?.(++settledCount, doc.nodes.length),
    },
  );
  const wall = performance.now() - started;
  if (pending.size > 0) await Promise.race([Promise.allSettled([...pending]), new Promise((r) => setTimeout(r, ABANDON_GRACE_MS).unref())]);
  const hasDependants = new Set(req.deps.flat());
  const nodes: NodeReport[] = outcomes.map((o, i) => {
    const node = doc.nodes[i];
    const error = o.state === "failed" ? (failures.get(i) ?? toEmberscopeError(o.error)).toDocument() : o.state === "cancelled" ? cancelledDoc(o.error) : null;
    return {
      node: node.id,
      tool: node.tool,
      state: o.state,
      error,
      blocked_by: o.blockedBy === undefined || o.blockedBy === null ? null : doc.nodes[o.blockedBy].id,
      start_ms: o.startMs ?? null,
      end_ms: o.endMs ?? null,
      recorded_ms: node.recorded.own_ns / 1e6,
      matches_recorded: matches[i],
    };
  });
  const counts = { succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
  for (const n of nodes) counts[n.state]++;
  const state = req.signal?.aborted ? "cancelled" : counts.failed > 0 || counts.skipped > 0 || counts.cancelled > 0 ? "failed" : "succeeded";
  const sinks: Record<string, Json> = {};
  doc.nodes.forEach((node, i) => {
    if (!hasDependants.has(i) && outputs.has(node.id)) sinks[node.id] = outputs.get(node.id)!;
  });
  const calls = doc.nodes.map((node, i) => ({ args: called[i], result: outputs.get(node.id) }));
  return { state, wall_ms: wall, nodes, counts, outputs: sinks, reproduced: mode === "frozen" ? state === "succeeded" : null, calls, abandoned: pending.size };
}

function cancelledDoc(reason: unknown): ErrorDocument {
  if (reason instanceof EmberscopeError) return reason.toDocument();
  return new EmberscopeError("CANCELLED", "The call was cancelled.").toDocument();
}
