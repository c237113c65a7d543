/**
 * The workflow compiler: a tool-call trace (trace v1 events, or the spans an agent-session import
 * wrote) becomes a workflow, a DAG of tool calls whose arguments say where each value comes from.
 * Pure and deterministic: the same events, inputs and contracts give the same workflow, byte for
 * byte (its content hash names it). Compilation is structural (see STRUCTURAL_NOTICE).
 *
 * Steps, each reported:
 * 1. **Failed events filtered**: calls with status error or unfinished, and results whose call is
 *    not in the trace, are left out (listed in the report); calls that followed them follow what
 *    they followed.
 * 2. **Side effects**: a reviewed tool contract (a person's act) decides a tool's side effect;
 *    otherwise the trace's. A workflow with any `unknown` tool is `blocked` until a person marks
 *    it read-only (or write) in a contract — never automatically.
 * 3. **Safe reads deduplicated**: a `read` call with the same tool, the same arguments (as
 *    canonical JSON) and the same recorded result as an earlier one is merged into it (its call id
 *    joins the node's). Equal arguments with a different result are not merged (the world changed
 *    in between) and are listed.
 * 4. **References inferred**: walking each call's arguments from the whole value down, a value
 *    equal (as canonical JSON) to a runtime input becomes `{"$input": name, "path": pointer}`;
 *    otherwise one equal to an earlier successful result's value becomes
 *    `{"$ref": node, "path": pointer}` (RFC 6901 JSON pointer into the result; "" is the whole
 *    result) or, for a text result, `{"$ref": node, "line": k}` (its k-th line, 0-based, trimmed).
 *    "Earlier" means the result was recorded by the time the call was issued (end ≤ start).
 *    Only values that can identify something take part: strings of at least 4 characters (trimmed),
 *    numbers written with at least 4 digits, and arrays and objects holding such a value; never
 *    booleans or null. Ties: inputs first, then the producer that finished last, then the lower
 *    node, the shorter path, the lower path; every tie is listed with the others. Arguments or
 *    results cut at import (their `_truncated` flag) take no part and are listed. Literal objects
 *    that look like a reference are wrapped as `{"$literal": value}`.
 * 5. **The DAG**: `data_ref` edges from each referenced node to the referring one; the trace's
 *    causal links (`follows_from`) kept unless both ends are reads (only reads may be reordered),
 *    a read following a read inheriting the other's non-read dependencies; a call made inside
 *    another (`child`: a subagent's calls inside the call that started it) depends on what its
 *    parent depends on, and the parent on its children (`child` edges child → parent), the parent
 *    keeping as its own time its recorded duration less the time its children cover.
 * 6. **Cycles** stop compilation with CYCLE_DETECTED naming the cycle's calls.
 */
import { unionLength } from "../critical-path/intervals";
import { canonicalJson, sha256Digest } from "../notebook/digest";
import type { SideEffect, ToolCallStatus } from "./trace-v1";
import { WorkflowCompileError } from "./errors";

export const WORKFLOW_FORMAT = "emberscope.workflow";

export const STRUCTURAL_NOTICE =
  "Compilation is structural: references are inferred from equal values and dependencies from the trace's order and links, so the workflow reproduces the recorded calls' data flow as far as it was visible. It is not a proof that replaying it is equivalent to what the agent did.";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One tool call as the compiler reads it (from trace v1, or from a span an importer wrote). */
export interface CompileEvent {
  /** Unique within the input: how `parent` and `after` name events (a span id, a trace v1 id). */
  key: string;
  /** The source's call id (shown, and kept in the node). */
  callId: string;
  tool: string;
  /** False for a result whose call is not in the trace (it is filtered). */
  isCall: boolean;
  argumentsText: string | null;
  argumentsTruncated: boolean;
  resultText: string | null;
  resultTruncated: boolean;
  status: ToolCallStatus;
  error: string | null;
  sideEffect: SideEffect;
  startNs: number;
  durNs: number;
  agent: string;
  parent: string | null;
  /** Keys of the events whose results were known when this one was issued. */
  after: readonly string[];
}

/** A person's reviewed side effect per tool name. */
export type ToolContracts = ReadonlyMap<string, Exclude<SideEffect, "unknown">>;

export interface CompileInput {
  source: WorkflowSource;
  inputs: Readonly<Record<string, Json>>;
  events: readonly CompileEvent[];
  contracts: ToolContracts;
}

export interface WorkflowSource {
  run_id: string | null;
  commit_id: string | null;
  trace_id: string | null;
}

export interface WorkflowNode {
  id: string;
  tool: string;
  side_effect: SideEffect;
  /** The side effect comes from a reviewed tool contract, not from the trace. */
  side_effect_reviewed: boolean;
  agent: string;
  /** The arguments with inferred references (a template); text that is no JSON stays text. */
  arguments: Json;
  recorded: {
    /** The call ids this node stands for: the first, then calls deduplicated into it. */
    call_ids: string[];
    start_ns: number;
    duration_ns: number;
    /** The time that is the node's own: its duration less what its children cover (the DAG's weight). */
    own_ns: number;
    result: string | null;
    result_truncated: boolean;
  };
}

export type WorkflowEdgeKind = "data_ref" | "follows_from" | "child";

export interface WorkflowEdge {
  from: string;
  to: string;
  kind: WorkflowEdgeKind;
}

export interface Workflow {
  format: typeof WORKFLOW_FORMAT;
  version: 1;
  source: WorkflowSource;
  /** `blocked` while any node's side effect is unknown: a person must review those tools. */
  status: "ready" | "blocked";
  blocked_tools: string[];
  inputs: Record<string, Json>;
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}

/** The workflow's sinks: the calls nothing depends on, whose results are a replay's outputs. */
export function sinkNodes(doc: Pick<Workflow, "nodes" | "edges">): WorkflowNode[] {
  const hasDependants = new Set(doc.edges.map((e) => e.from));
  return doc.nodes.filter((n) => !hasDependants.has(n.id));
}

export interface ReferenceTie {
  node: string;
  /** JSON pointer of the argument value. */
  argument: string;
  chosen: Json;
  others: Json[];
}

export interface CompileReport {
  notice: string;
  events: number;
  filtered: { call_id: string; tool: string; status: ToolCallStatus | "result_without_call"; error: string | null }[];
  deduplicated: { node: string; call_id: string }[];
  /** Reads with a node's tool and arguments whose result differed: kept as nodes of their own. */
  not_deduplicated: { node: string; call_id: string; same_as: string }[];
  references: { data_ref: number; input: number };
  ties: ReferenceTie[];
  /** Arguments or results cut at import: no reference is inferred in or from them. */
  unreadable: { call_id: string; part: "arguments" | "result" }[];
  /** Causal links between two reads that were dropped (reads may run in any order). */
  read_links_dropped: number;
  edges: Record<WorkflowEdgeKind, number>;
}

export interface CompileResult {
  workflow: Workflow;
  report: CompileReport;
}

const MIN_STRING = 4;
const MIN_DIGITS = 4;
/** Deeper argument or result values are taken whole (no reference inside). */
const MAX_WALK_DEPTH = 256;
const MAX_TIE_OTHERS = 8;
const REFERENCE_KEYS = new Set(["$ref", "$input", "$literal"]);

export function compileWorkflow(input: CompileInput): CompileResult {
  const events = input.events;
  if (events.length === 0) throw new WorkflowCompileError("NO_TOOL_CALLS", "the trace holds no tool calls");
  const index = new Map<string, number>();
  events.forEach((event, i) => {
    if (index.has(event.key)) throw new WorkflowCompileError("INVALID_ARGUMENTS", `two events share the key ${event.key}`, { key: event.key });
    index.set(event.key, i);
  });
  const lookup = (key: string, from: number) => {
    const i = index.get(key);
    if (i === undefined) throw new WorkflowCompileError("INVALID_ARGUMENTS", `event ${events[from].callId} names an event that is not in the trace`, { call_id: events[from].callId });
    return i;
  };
  const parentOf = events.map((e, i) => (e.parent === null ? -1 : lookup(e.parent, i)));
  const causes = events.map((e, i) => [...new Set(e.after.map((k) => lookup(k, i)))].filter((c) => c !== i));
  const order = eventOrder(events, parentOf, causes);

  const report: CompileReport = {
    notice: STRUCTURAL_NOTICE,
    events: events.length,
    filtered: [],
    deduplicated: [],
    not_deduplicated: [],
    references: { data_ref: 0, input: 0 },
    ties: [],
    unreadable: [],
    read_links_dropped: 0,
    edges: { data_ref: 0, follows_from: 0, child: 0 },
  };

  // 1–3: filter, decide side effects, merge equal reads; nodeOf[event] = its node or -1.
  const nodeOf = new Int32Array(events.length).fill(-1);
  const nodes: NodeDraft[] = [];
  const reads = new Map<string, { node: number; result: string | null }>();
  for (const i of order) {
    const e = events[i];
    if (!e.isCall || e.status !== "ok") {
      report.filtered.push({ call_id: e.callId, tool: e.tool, status: e.isCall ? e.status : "result_without_call", error: e.error });
      continue;
    }
    const reviewed = input.contracts.get(e.tool);
    const sideEffect: SideEffect = reviewed ?? e.sideEffect;
    const args = readArguments(e);
    if (e.argumentsTruncated) report.unreadable.push({ call_id: e.callId, part: "arguments" });
    if (e.resultTruncated) report.unreadable.push({ call_id: e.callId, part: "result" });
    if (sideEffect === "read" && !e.argumentsTruncated && !e.resultTruncated) {
      const key = `${e.tool}\u0000${canonicalJson(args.value)}`;
      const earlier = reads.get(key);
      if (earlier && earlier.result === e.resultText) {
        nodeOf[i] = earlier.node;
        nodes[earlier.node].callIds.push(e.callId);
        report.deduplicated.push({ node: nodeId(earlier.node), call_id: e.callId });
        continue;
      }
      if (earlier) report.not_deduplicated.push({ node: nodeId(nodes.length), call_id: e.callId, same_as: nodeId(earlier.node) });
      else reads.set(key, { node: nodes.length, result: e.resultText });
    }
    nodeOf[i] = nodes.length;
    nodes.push({ event: i, sideEffect, reviewed: reviewed !== undefined, args, callIds: [e.callId] });
  }

  // 5: dependencies, in event order (every cause and parent comes first).
  const edges = new EdgeSet();
  /** Per node: the non-read nodes a read that follows it must still follow. */
  const barriers: Set<number>[] = nodes.map(() => new Set());
  /** Per filtered event: the nodes its followers follow instead. */
  const passedOn = new Map<number, Set<number>>();
  const followedNodes = (i: number): Set<number> => {
    const out = new Set<number>();
    for (const c of causes[i]) {
      if (nodeOf[c] >= 0) out.add(nodeOf[c]);
      else for (const n of passedOn.get(c) ?? []) out.add(n);
    }
    return out;
  };
  const keptParent = (i: number): number => {
    let p = parentOf[i];
    while (p >= 0 && nodeOf[p] < 0) p = parentOf[p];
    return p >= 0 ? nodeOf[p] : -1;
  };
  const refs = new ReferenceIndex(input.inputs);
  const byEnd = nodes.map((_, n) => n).sort((a, b) => endNs(events[nodes[a].event]) - endNs(events[nodes[b].event]) || a - b);
  let produced = 0;
  for (const i of order) {
    const n = nodeOf[i];
    if (n < 0) {
      passedOn.set(i, followedNodes(i));
      continue;
    }
    const draft = nodes[n];
    if (draft.event !== i) {
      // A deduplicated read: whatever it followed, its node already stands for an earlier call.
      continue;
    }
    const e = events[i];
    while (produced < byEnd.length && endNs(events[nodes[byEnd[produced]].event]) <= e.startNs) {
      const p = byEnd[produced++];
      if (p !== n) refs.addResult(p, events[nodes[p].event]);
    }
    draft.template = refs.resolve(draft.args, n, report);
    for (const from of refs.producersOf(draft.template)) edges.add(from, n, "data_ref");

    const isRead = draft.sideEffect === "read";
    if (!isRead) barriers[n].add(n);
    /** n comes after c, unless both only read: then after what c came after that does not. */
    const follow = (c: number): boolean => {
      if (!isRead || nodes[c].sideEffect !== "read") {
        edges.add(c, n, "follows_from");
        if (isRead) barriers[n].add(c);
        return true;
      }
      for (const b of barriers[c]) {
        edges.add(b, n, "follows_from");
        barriers[n].add(b);
      }
      return false;
    };
    for (const c of followedNodes(i)) if (c !== n && !follow(c)) report.read_links_dropped++;
    const parent = keptParent(i);
    if (parent >= 0 && parent !== n) {
      for (const [from, kind] of [...edges.into(parent)]) if (kind !== "child" && from !== n) follow(from);
      edges.add(n, parent, "child");
    }
  }

  const own = ownTimes(events, nodes, nodeOf, parentOf);
  const workflowNodes: WorkflowNode[] = nodes.map((draft, n) => {
    const e = events[draft.event];
    return {
      id: nodeId(n),
      tool: e.tool,
      side_effect: draft.sideEffect,
      side_effect_reviewed: draft.reviewed,
      agent: e.agent,
      arguments: draft.template ?? draft.args.value,
      recorded: { call_ids: draft.callIds, start_ns: e.startNs, duration_ns: e.durNs, own_ns: own[n], result: e.resultText, result_truncated: e.resultTruncated },
    };
  });
  const workflowEdges = edges.list().map(({ from, to, kind }) => ({ from: nodeId(from), to: nodeId(to), kind }));
  for (const edge of workflowEdges) report.edges[edge.kind]++;
  checkAcyclic(nodes.length, edges.list(), (n) => ({ node: nodeId(n), call_id: nodes[n].callIds[0], tool: events[nodes[n].event].tool }));
  const blocked = [...new Set(workflowNodes.filter((w) => w.side_effect === "unknown").map((w) => w.tool))].sort();
  return {
    workflow: {
      format: WORKFLOW_FORMAT,
      version: 1,
      source: input.source,
      status: blocked.length > 0 ? "blocked" : "ready",
      blocked_tools: blocked,
      inputs: { ...input.inputs },
      nodes: workflowNodes,
      edges: workflowEdges,
    },
    report,
  };
}

/** `sha256:` + hex of the workflow's canonical JSON: its content address. */
export function workflowDigest(workflow: Workflow): Promise<string> {
  return sha256Digest(canonicalJson(workflow));
}

export const nodeId = (n: number) => `n${n + 1}`;

interface NodeDraft {
  event: number;
  sideEffect: SideEffect;
  reviewed: boolean;
  args: ParsedArguments;
  callIds: string[];
  template?: Json;
}

interface ParsedArguments {
  value: Json;
  /** False when the arguments were cut or are no JSON object/value (text): no references inside. */
  walkable: boolean;
}

function readArguments(e: CompileEvent): ParsedArguments {
  if (e.argumentsText === null) return { value: null, walkable: false };
  if (e.argumentsTruncated) return { value: e.argumentsText, walkable: false };
  try {
    return { value: JSON.parse(e.argumentsText) as Json, walkable: true };
  } catch {
    return { value: e.argumentsText, walkable: true };
  }
}

const endNs = (e: CompileEvent) => e.startNs + e.durNs;

/**
 * Events in the order issued (start, then input order), moved only where a cause or parent comes
 * later in the input; a cycle among causes and parents is CYCLE_DETECTED.
 */
function eventOrder(events: readonly CompileEvent[], parentOf: readonly number[], causes: readonly number[][]): number[] {
  const byStart = events.map((_, i) => i).sort((a, b) => events[a].startNs - events[b].startNs || a - b);
  const rank = new Int32Array(events.length);
  byStart.forEach((i, r) => (rank[i] = r));
  const before = events.map((_, i) => (parentOf[i] >= 0 ? [parentOf[i], ...causes[i]] : causes[i]));
  const waiting = new Int32Array(events.length);
  const dependents: number[][] = events.map(() => []);
  before.forEach((list, i) => {
    for (const b of list) {
      waiting[i]++;
      dependents[b].push(i);
    }
  });
  // Kahn's order with a min-heap on rank: issue order wherever the links allow it.
  const heap = new MinHeap((a, b) => rank[a] - rank[b]);
  for (let i = 0; i < events.length; i++) if (waiting[i] === 0) heap.push(i);
  const order: number[] = [];
  while (heap.size > 0) {
    const i = heap.pop();
    order.push(i);
    for (const d of dependents[i]) if (--waiting[d] === 0) heap.push(d);
  }
  if (order.length < events.length) {
    const stuck = events.map((_, i) => i).filter((i) => waiting[i] > 0);
    const cycle = findCycle(stuck, (i) => before[i].filter((b) => waiting[b] > 0));
    throw cycleError(cycle.map((i) => ({ call_id: events[i].callId, tool: events[i].tool })));
  }
  return order;
}

/** One cycle among nodes that each have a predecessor in the set (walk back until a node repeats), in dependency order from its lowest. */
function findCycle(stuck: number[], predecessors: (i: number) => number[]): number[] {
  const seenAt = new Map<number, number>();
  const walk: number[] = [];
  let v = stuck[0];
  while (!seenAt.has(v)) {
    seenAt.set(v, walk.length);
    walk.push(v);
    v = Math.min(...predecessors(v));
  }
  const cycle = walk.slice(seenAt.get(v)).reverse();
  const lowest = cycle.indexOf(Math.min(...cycle));
  return [...cycle.slice(lowest), ...cycle.slice(0, lowest)];
}

function cycleError(cycle: Record<string, string>[]): WorkflowCompileError {
  const names = cycle.map((c) => `${c.tool} (${c.call_id})`);
  return new WorkflowCompileError("CYCLE_DETECTED", `the calls' dependencies form a cycle: ${[...names, names[0]].join(" → ")}`, { cycle });
}

function checkAcyclic(count: number, edges: readonly { from: number; to: number }[], describe: (n: number) => Record<string, string>): void {
  const waiting = new Int32Array(count);
  const out: number[][] = Array.from({ length: count }, () => []);
  for (const { from, to } of edges) {
    waiting[to]++;
    out[from].push(to);
  }
  const queue: number[] = [];
  for (let n = 0; n < count; n++) if (waiting[n] === 0) queue.push(n);
  for (let head = 0; head < queue.length; head++) for (const d of out[queue[head]]) if (--waiting[d] === 0) queue.push(d);
  if (queue.length === count) return;
  const into: number[][] = Array.from({ length: count }, () => []);
  for (const { from, to } of edges) if (waiting[from] > 0 && waiting[to] > 0) into[to].push(from);
  const stuck = Array.from({ length: count }, (_, n) => n).filter((n) => waiting[n] > 0);
  throw cycleError(findCycle(stuck, (n) => into[n]).map(describe));
}

/** Own time per node: its recorded duration less the union of its kept children's intervals (clipped to it). */
function ownTimes(events: readonly CompileEvent[], nodes: readonly NodeDraft[], nodeOf: Int32Array, parentOf: readonly number[]): Float64Array {
  const own = new Float64Array(nodes.length);
  const children: [number, number][][] = nodes.map(() => []);
  nodes.forEach((draft, n) => {
    const e = events[draft.event];
    own[n] = e.durNs;
    let p = parentOf[draft.event];
    while (p >= 0 && nodeOf[p] < 0) p = parentOf[p];
    if (p >= 0 && nodeOf[p] !== n) children[nodeOf[p]].push([e.startNs, endNs(e)]);
  });
  nodes.forEach((draft, n) => {
    if (children[n].length === 0) return;
    const e = events[draft.event];
    const clipped = children[n].map(([s, t]): [number, number] => [Math.max(s, e.startNs), Math.min(t, endNs(e))]).filter(([s, t]) => t > s);
    own[n] = Math.max(0, e.durNs - unionLength(clipped));
  });
  return own;
}

class EdgeSet {
  private readonly seen = new Map<string, number>();
  private readonly edges: { from: number; to: number; kind: WorkflowEdgeKind }[] = [];
  private readonly incoming = new Map<number, [number, WorkflowEdgeKind][]>();

  /** One edge per pair: data_ref over follows_from over child. */
  add(from: number, to: number, kind: WorkflowEdgeKind): void {
    const key = `${from}>${to}`;
    const at = this.seen.get(key);
    if (at !== undefined) {
      if (rankOf(kind) < rankOf(this.edges[at].kind)) this.edges[at].kind = kind;
      return;
    }
    this.seen.set(key, this.edges.length);
    this.edges.push({ from, to, kind });
    const list = this.incoming.get(to) ?? [];
    list.push([from, kind]);
    this.incoming.set(to, list);
  }

  into(to: number): [number, WorkflowEdgeKind][] {
    return this.incoming.get(to) ?? [];
  }

  /** By target, then source: the order never depends on the order they were found in. */
  list(): { from: number; to: number; kind: WorkflowEdgeKind }[] {
    return [...this.edges].sort((a, b) => a.to - b.to || a.from - b.from);
  }
}

const rankOf = (kind: WorkflowEdgeKind) => (kind === "data_ref" ? 0 : kind === "follows_from" ? 1 : 2);

type Source = { input: string; path: string } | { node: number; end: number; path: string; line?: number };

/** Values of the runtime inputs and of the results recorded so far, by canonical JSON. */
class ReferenceIndex {
  private readonly inputs = new Map<string, { input: string; path: string }>();
  private readonly results = new Map<string, { node: number; end: number; path: string; line?: number }[]>();

  constructor(inputs: Readonly<Record<string, Json>>) {
    for (const name of Object.keys(inputs).sort()) {
      walkValues(inputs[name], "", 0, (text, path) => {
        if (!this.inputs.has(text)) this.inputs.set(text, { input: name, path });
      });
    }
  }

  addResult(node: number, event: CompileEvent): void {
    if (event.resultText === null || event.resultTruncated) return;
    const end = endNs(event);
    const add = (text: string, path: string, line?: number) => {
      const list = this.results.get(text) ?? [];
      if (list.length > 0 && list[list.length - 1].node === node) {
        // The same value twice in one result: keep the shorter, then lower path.
        const last = list[list.length - 1];
        if (last.line === undefined && line === undefined && (path.length < last.path.length || (path.length === last.path.length && path < last.path))) last.path = path;
        return;
      }
      list.push(line === undefined ? { node, end, path } : { node, end, path: "", line });
      this.results.set(text, list);
    };
    let parsed: { ok: true; value: Json } | { ok: false };
    try {
      parsed = { ok: true, value: JSON.parse(event.resultText) as Json };
    } catch {
      parsed = { ok: false };
    }
    if (parsed.ok) {
      walkValues(parsed.value, "", 0, (text, path) => add(text, path));
      return;
    }
    const whole = event.resultText;
    if (eligibleString(whole)) add(JSON.stringify(whole), "");
    if (whole.includes("\n")) {
      whole.split("\n").forEach((line, k) => {
        const trimmed = line.trim();
        if (eligibleString(trimmed)) add(JSON.stringify(trimmed), "", k);
      });
    }
  }

  /** The arguments with references in place of the values found (see the file comment). */
  resolve(args: ParsedArguments, node: number, report: CompileReport): Json {
    if (!args.walkable) return escapeLiterals(args.value, 0);
    const rewrite = (value: Json, path: string, depth: number): Json => {
      if (value === null || typeof value === "boolean") return value;
      const text = depth <= MAX_WALK_DEPTH ? eligibleText(value) : null;
      if (text !== null) {
        const found = this.lookup(text);
        if (found) {
          if (found.others.length > 0) report.ties.push({ node: nodeId(node), argument: path, chosen: sourceJson(found.chosen), others: found.others.slice(0, MAX_TIE_OTHERS).map(sourceJson) });
          if ("input" in found.chosen) report.references.input++;
          else report.references.data_ref++;
          return sourceJson(found.chosen);
        }
      }
      if (depth >= MAX_WALK_DEPTH) return escapeLiterals(value, depth);
      if (Array.isArray(value)) return value.map((v, k) => rewrite(v, `${path}/${k}`, depth + 1));
      if (typeof value === "object") {
        const out: Record<string, Json> = {};
        for (const key of Object.keys(value)) out[key] = rewrite(value[key], `${path}/${escapePointer(key)}`, depth + 1);
        return looksLikeReference(out) ? { $literal: out } : out;
      }
      return value;
    };
    return rewrite(args.value, "", 0);
  }

  private lookup(text: string): { chosen: Source; others: Source[] } | null {
    const input = this.inputs.get(text);
    const produced = this.results.get(text) ?? [];
    if (!input && produced.length === 0) return null;
    const ranked = [...produced].sort((a, b) => b.end - a.end || a.node - b.node);
    const candidates: Source[] = input ? [input, ...ranked] : ranked;
    return { chosen: candidates[0], others: candidates.slice(1) };
  }

  /** The nodes a template refers to. */
  producersOf(template: Json): number[] {
    const out = new Set<number>();
    const visit = (value: Json, depth: number) => {
      if (value === null || typeof value !== "object" || depth > MAX_WALK_DEPTH + 1) return;
      if (Array.isArray(value)) return value.forEach((v) => visit(v, depth + 1));
      if (typeof value.$ref === "string" && Object.keys(value).every((k) => k === "$ref" || k === "path" || k === "line")) {
        out.add(Number(value.$ref.slice(1)) - 1);
        return;
      }
      if ("$literal" in value && Object.keys(value).length === 1) return;
      for (const v of Object.values(value)) visit(v, depth + 1);
    };
    visit(template, 0);
    return [...out].sort((a, b) => a - b);
  }
}

function sourceJson(source: Source): Json {
  if ("input" in source) return { $input: source.input, path: source.path };
  return source.line === undefined ? { $ref: nodeId(source.node), path: source.path } : { $ref: nodeId(source.node), line: source.line };
}

function looksLikeReference(value: Record<string, Json>): boolean {
  return Object.keys(value).some((k) => REFERENCE_KEYS.has(k));
}

function escapeLiterals(value: Json, depth: number): Json {
  if (value === null || typeof value !== "object" || depth > MAX_WALK_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => escapeLiterals(v, depth + 1));
  const out: Record<string, Json> = {};
  for (const key of Object.keys(value)) out[key] = escapeLiterals(value[key], depth + 1);
  return looksLikeReference(out) ? { $literal: out } : out;
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

function eligibleString(text: string): boolean {
  return text.trim().length >= MIN_STRING;
}

function digits(value: number): number {
  return (String(value).replace(/e.*$/i, "").match(/\d/g) ?? []).length;
}

/** The canonical JSON of a value that can identify something, or null (see the file comment). */
function eligibleText(value: Json): string | null {
  if (typeof value === "string") return eligibleString(value) ? JSON.stringify(value) : null;
  if (typeof value === "number") return Number.isFinite(value) && digits(value) >= MIN_DIGITS ? canonicalJson(value) : null;
  if (value === null || typeof value === "boolean") return null;
  return holdsEligible(value, 0) ? canonicalJson(value) : null;
}

function holdsEligible(value: Json, depth: number): boolean {
  if (depth > MAX_WALK_DEPTH) return false;
  if (typeof value === "string") return eligibleString(value);
  if (typeof value === "number") return Number.isFinite(value) && digits(value) >= MIN_DIGITS;
  if (value === null || typeof value === "boolean") return false;
  return (Array.isArray(value) ? value : Object.values(value)).some((v) => holdsEligible(v, depth + 1));
}

/** Calls `visit(canonicalText, pointer)` for every eligible value, the whole first, then inside. */
function walkValues(value: Json, path: string, depth: number, visit: (text: string, path: string) => void): void {
  if (depth > MAX_WALK_DEPTH) return;
  const text = eligibleText(value);
  if (text !== null) visit(text, path);
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) value.forEach((v, k) => walkValues(v, `${path}/${k}`, depth + 1, visit));
  else for (const key of Object.keys(value).sort()) walkValues(value[key], `${path}/${escapePointer(key)}`, depth + 1, visit);
}

class MinHeap {
  private readonly items: number[] = [];
  constructor(private readonly less: (a: number, b: number) => number) {}

  get size(): number {
    return this.items.length;
  }

  push(x: number): void {
    const a = this.items;
    a.push(x);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (this.less(a[i], a[p]) >= 0) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }

  pop(): number {
    const a = this.items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l], a[m]) < 0) m = l;
        if (r < a.length && this.less(a[r], a[m]) < 0) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}
