/**
 * Valgrind callgrind (and cachegrind) profiles: per function (fn= in object ob=, file fl=) its
 * self cost lines, and per call (cfn= … calls=) the call's inclusive cost. One frame per function
 * (module = object); one `counted` metric per event, named as in `events:` (Ir in instructions,
 * others in events). Callgrind keeps a call graph, not stacks, so stacks are rebuilt by splitting
 * each function's self cost over its call paths in proportion to the inclusive cost of the calls
 * on the path (the assumption speedscope and gprof make); self totals per function stay exact.
 */
import type { EvidenceBuilder } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { int64 } from "../evidence/int64";
import { ownCopy, readLines } from "../io/text";
import { demangledFrame } from "../symbols/demangle";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "callgrind";
/** Call paths carrying less than this share of every event's total are not expanded (their cost folds into wider paths). */
const MIN_PATH_SHARE = 1e-6;
/** Bound on rebuilt call-path nodes, so a huge call graph cannot explode into an unbounded stack table. */
const MAX_PATH_NODES = 250_000;
const SAMPLES_PER_CHECKPOINT = 8192;

const POSITION = /^(?:[+-]?(?:0x[0-9a-fA-F]+|\d+)|\*)$/;
const COST = /^(?:\d+|0x[0-9a-fA-F]+)$/;
const NAMED = /^\((\d+)\)(?:\s+(.*))?$/;

type NameSpace = "ob" | "fl" | "fn";
const NAME_SPACE: Record<string, NameSpace> = { ob: "ob", cob: "ob", fl: "fl", fi: "fl", fe: "fl", cfi: "fl", cfl: "fl", jfi: "fl", fn: "fn", cfn: "fn", jfn: "fn" };

interface CallgrindFunction {
  name: string;
  file: string | null;
  object: string | null;
}

interface Call {
  cost: number[];
  calls: number;
}

/** The parsed call graph: functions with self costs, and caller → callee edges with inclusive costs. */
class CallGraph {
  readonly functions: CallgrindFunction[] = [];
  private readonly index = new Map<string, number>();
  /** self[fn][event] */
  readonly self: number[][] = [];
  readonly calls: Map<number, Call>[] = [];

  constructor(readonly events: number) {}

  fn(name: string, file: string | null, object: string | null): number {
    const key = `${object ?? ""}\u0000${file ?? ""}\u0000${name}`;
    let id = this.index.get(key);
    if (id === undefined) {
      id = this.functions.length;
      // Kept as copies: the texts are slices of a line, and so of its batch's megabyte of text,
      // which a kept slice keeps alive (every batch that names a new function, so the whole file).
      this.index.set(ownCopy(key), id);
      this.functions.push({ name: ownCopy(name), file: file === null ? null : ownCopy(file), object: object === null ? null : ownCopy(object) });
      this.self.push(new Array(this.events).fill(0));
      this.calls.push(new Map());
    }
    return id;
  }

  addCall(caller: number, callee: number, count: number, cost: number[]): void {
    const edges = this.calls[caller];
    const known = edges.get(callee);
    if (known) {
      known.calls += count;
      for (let e = 0; e < this.events; e++) known.cost[e] += cost[e];
    } else edges.set(callee, { cost: cost.slice(), calls: count });
  }
}

/** cob=/cfi=/cfn= seen, then calls= (count ≥ 0): the next cost line is this call's inclusive cost. */
interface PendingCall {
  object: string | null;
  file: string | null;
  name: string | null;
  count: number;
  line: number;
}

interface Header {
  events: string[];
  positions: number;
  summary: number[] | null;
  totals: number[] | null;
  meta: Record<string, string>;
}

/** Reads the file into a call graph, following the format's name and position compression. */
async function readCallGraph({ source, builder, limits }: ImportContext): Promise<{ graph: CallGraph; header: Header }> {
  const header: Header = { events: [], positions: 1, summary: null, totals: null, meta: {} };
  const names: Record<NameSpace, Map<string, string>> = { ob: new Map(), fl: new Map(), fn: new Map() };
  let graph: CallGraph | null = null;
  let object: string | null = null;
  let file: string | null = null;
  let fn = -1;
  // The next call's callee, valid until its cost line.
  let callee: PendingCall | null = null;
  let sawAny = false;
  let lastLine = 0;
  let unknownLines = 0;

  const fail = (reason: string, line: number): never => {
    throw new EvidenceParseError(FORMAT, reason, { line });
  };
  const resolve = (space: NameSpace, value: string, line: number): string => {
    const named = NAMED.exec(value);
    if (!named) return value;
    if (named[2] !== undefined) {
      names[space].set(ownCopy(named[1]), ownCopy(named[2]));
      return named[2];
    }
    const known = names[space].get(named[1]);
    if (known === undefined) fail(`a compressed ${space}= name is used before it is defined`, line);
    return known as string;
  };
  const unknownName = (name: string) => (name === "???" || name === "" ? null : name);
  const numbers = (text: string, line: number): number[] => {
    const out = text.trim().split(/\s+/).filter(Boolean);
    return out.map((t) => (COST.test(t) ? Number(t) : fail("a cost is not a whole number", line)));
  };

  // Nothing is emitted while reading (stacks need the whole call graph), so there is nothing to checkpoint here.
  for await (const { text: raw, line } of readLines(source.chunks(), limits.maxLineLength)) {
    lastLine = line;
    const text = raw.trimEnd();
    if (text.includes("\u0000")) fail("the text holds NUL bytes: not a callgrind profile, or corrupted", line);
    if (text === "" || text.startsWith("#")) continue;
    sawAny = true;
    const first = text.charCodeAt(0);
    const isCostLine = (first >= 0x30 && first <= 0x39) || text[0] === "+" || text[0] === "-" || text[0] === "*";

    if (isCostLine) {
      if (!graph) fail("a cost line comes before the `events:` header", line);
      const g = graph as CallGraph;
      if (fn < 0) fail("a cost line comes before any fn=", line);
      const tokens = text.split(/\s+/);
      for (let p = 0; p < header.positions; p++) {
        if (p >= tokens.length || !POSITION.test(tokens[p])) fail("a cost line does not start with its positions", line);
      }
      if (tokens.length - header.positions > g.events) fail("a cost line has more costs than `events:` names", line);
      const cost = new Array(g.events).fill(0);
      for (let i = header.positions; i < tokens.length; i++) {
        const token = tokens[i];
        if (!COST.test(token)) fail("a cost is not a whole number", line);
        cost[i - header.positions] = int64(Number(token), FORMAT, "costs", { line });
      }
      if (callee !== null && callee.count >= 0) {
        const target = g.fn(callee.name as string, callee.file, callee.object);
        g.addCall(fn, target, callee.count, cost);
        callee = null;
      } else {
        if (callee !== null) {
          builder.limit("CALLGRIND_CALL_WITHOUT_CALLS", "Some cob=/cfi=/cfn= lines were not followed by calls=; the cost line after them was counted as self cost.");
          callee = null;
        }
        const self = g.self[fn];
        for (let e = 0; e < g.events; e++) self[e] += cost[e];
      }
      continue;
    }

    const eq = /^([a-z]+)=(.*)$/.exec(text);
    if (eq) {
      const [, key, value] = eq;
      if (callee && key !== "calls" && callee.count >= 0) fail(`calls= at line ${callee.line} is not followed by its cost line`, line);
      switch (key) {
        case "ob":
          object = unknownName(resolve("ob", value, line));
          break;
        case "fl":
        case "fi":
        case "fe":
          // Like callgrind_annotate: one current file, changed by fl= and by the inline switches fi=/fe=.
          file = unknownName(resolve("fl", value, line));
          break;
        case "fn":
          if (!graph) fail("fn= comes before the `events:` header", line);
          fn = (graph as CallGraph).fn(resolve("fn", value, line), file, object);
          callee = null;
          break;
        case "cob":
        case "cfi":
        case "cfl":
        case "cfn": {
          const name = resolve(NAME_SPACE[key], value, line);
          callee ??= { object, file, name: null, count: -1, line };
          if (key === "cob") callee.object = unknownName(name);
          else if (key === "cfn") callee.name = name;
          else callee.file = unknownName(name);
          break;
        }
        case "calls": {
          const [count] = value.trim().split(/\s+/);
          const call: PendingCall | null = callee;
          if (call === null || call.name === null) return fail("calls= without a cfn= naming the called function", line);
          if (!/^\d+$/.test(count ?? "")) fail("calls= does not start with a call count", line);
          if (fn < 0) fail("calls= comes before any fn=", line);
          call.count = Number(count);
          call.line = line;
          break;
        }
        case "jfi":
        case "jfn":
          resolve(NAME_SPACE[key], value, line);
          break;
        case "jump":
        case "jcnd":
          // Jump statistics: not part of the cost model. The position line after them carries no cost.
          break;
        default:
          unknownLines++;
      }
      continue;
    }

    const colon = /^([A-Za-z][\w ]*?):\s*(.*)$/.exec(text);
    if (colon) {
      const [, key, value] = colon;
      switch (key) {
        case "events": {
          const events = value.trim().split(/\s+/).filter(Boolean);
          if (events.length === 0) fail("`events:` names no event", line);
          if (graph && events.join(" ") !== header.events.join(" ")) fail("a second `events:` line names other events", line);
          header.events = events;
          graph ??= new CallGraph(events.length);
          break;
        }
        case "positions": {
          const kinds = value.trim().split(/\s+/).filter(Boolean);
          if (kinds.length === 0 || kinds.some((k) => k !== "line" && k !== "instr")) fail("`positions:` names a kind other than line and instr", line);
          header.positions = kinds.length;
          header.meta.positions = kinds.join(" ");
          break;
        }
        case "summary":
          header.summary = numbers(value, line);
          break;
        case "totals":
          header.totals = numbers(value, line);
          break;
        case "desc":
          header.meta.desc = header.meta.desc ? `${header.meta.desc}\n${value}` : value;
          break;
        case "version":
        case "creator":
        case "pid":
        case "cmd":
        case "part":
        case "thread":
          header.meta[key] = value.trim();
          break;
        default:
          // event: definitions and future header keys carry nothing the cost model needs.
          break;
      }
      continue;
    }
    fail("not a callgrind line (expected a header, a name=value specification or a cost line)", line);
  }

  if (!sawAny) throw new EvidenceParseError(FORMAT, "empty input", { line: 1, offset: 0 });
  if (callee !== null && (callee as PendingCall).count >= 0) fail("the file ends after calls= without its cost line: truncated", lastLine);
  if (!graph) throw new EvidenceParseError(FORMAT, "no `events:` header: not a callgrind profile", { line: 1 });
  if (unknownLines > 0) builder.limit("CALLGRIND_UNKNOWN_LINES", `${unknownLines} specification line(s) of an unknown kind were ignored.`);
  return { graph, header };
}

/**
 * Rebuilt call paths: a prefix tree of (function, parent) nodes, each with the share of its
 * function's activity that the path carries, per event.
 */
class CallPaths {
  readonly parent: number[] = [];
  readonly fn: number[] = [];
  readonly share: number[][] = [];
  /** Per node, its depth (0: a root); at most maxDepth − 1. */
  readonly depth: number[] = [];
  readonly byFunction: number[][];
  /** Per function, the caller whose calls into it cost the most (-1: never called by another function). */
  readonly heaviestCaller: number[];
  capped = false;
  deep = 0;

  constructor(
    private readonly graph: CallGraph,
    private readonly maxDepth: number,
  ) {
    this.byFunction = graph.functions.map(() => []);
    this.heaviestCaller = graph.functions.map(() => -1);
  }

  build(): void {
    const g = this.graph;
    const events = g.events;
    const incomingCost = g.functions.map(() => new Array(events).fill(0));
    const incomingCalls = new Array(g.functions.length).fill(0);
    const totals = new Array(events).fill(0);
    const heaviest = new Array(g.functions.length).fill(-1);
    g.calls.forEach((edges, caller) => {
      for (const [callee, call] of edges) {
        if (callee === caller) continue;
        incomingCalls[callee] += call.calls;
        for (let e = 0; e < events; e++) incomingCost[callee][e] += call.cost[e];
        const weight = call.cost.reduce((a, b) => a + b, 0);
        if (weight > heaviest[callee]) {
          heaviest[callee] = weight;
          this.heaviestCaller[callee] = caller;
        }
      }
    });
    g.self.forEach((self) => self.forEach((v, e) => (totals[e] += v)));
    const onPath = new Uint8Array(g.functions.length);

    const visit = (fn: number, parent: number, share: number[], depth: number) => {
      const node = this.fn.length;
      this.fn.push(fn);
      this.parent.push(parent);
      this.share.push(share);
      this.depth.push(depth);
      this.byFunction[fn].push(node);
      if (depth + 1 >= this.maxDepth) {
        this.deep++;
        return;
      }
      onPath[fn] = 1;
      for (const [callee, call] of g.calls[fn]) {
        // Recursion is folded into the outermost call on the path.
        if (onPath[callee]) continue;
        const childShare = new Array(events);
        let carries = false;
        for (let e = 0; e < events; e++) {
          const weight = incomingCost[callee][e] > 0 ? call.cost[e] / incomingCost[callee][e] : incomingCalls[callee] > 0 ? call.calls / incomingCalls[callee] : 0;
          childShare[e] = share[e] * weight;
          if (totals[e] > 0 && (share[e] * call.cost[e]) / totals[e] >= MIN_PATH_SHARE) carries = true;
        }
        if (!carries) continue;
        if (this.fn.length >= MAX_PATH_NODES) {
          this.capped = true;
          continue;
        }
        visit(callee, node, childShare, depth + 1);
      }
      onPath[fn] = 0;
    };

    for (let fn = 0; fn < g.functions.length; fn++) {
      if (incomingCalls[fn] === 0 && incomingCost[fn].every((v) => v === 0)) visit(fn, -1, new Array(events).fill(1), 0);
    }
  }
}

/** Splits `total` into integers proportional to `weights`, summing exactly to `total` (cumulative rounding). */
export function apportion(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const out = new Array(weights.length).fill(0);
  if (weights.length === 0 || sum <= 0) return out;
  let cumulative = 0;
  let given = 0;
  for (let i = 0; i < weights.length; i++) {
    cumulative += weights[i];
    const upTo = i === weights.length - 1 ? total : Math.min(total, Math.round((total * cumulative) / sum));
    out[i] = upTo - given;
    given = upTo;
  }
  return out;
}

function frameKind(name: string): FrameKind {
  return name === "(below main)" ? "program" : "native";
}

async function emitSamples(
  graph: CallGraph,
  paths: CallPaths,
  metricIds: number[],
  track: number | null,
  builder: EvidenceBuilder,
  maxDepth: number,
): Promise<{ unexpanded: number; rootsWithoutPath: number; cutAtDepth: number }> {
  const frameIds = graph.functions.map(() => -1);
  const stackIds = new Array<number>(paths.fn.length).fill(-1);
  const frameOf = (fn: number) => {
    if (frameIds[fn] < 0) {
      const f = graph.functions[fn];
      frameIds[fn] = builder.frame(demangledFrame({ name: f.name, file: f.file, module: f.object, kind: frameKind(f.name) }));
    }
    return frameIds[fn];
  };
  const stackOf = (node: number): number => {
    if (stackIds[node] >= 0) return stackIds[node];
    const chain: number[] = [];
    let at = node;
    while (at >= 0 && stackIds[at] < 0) {
      chain.push(at);
      at = paths.parent[at];
    }
    let stack: number | null = at >= 0 ? stackIds[at] : null;
    for (let i = chain.length - 1; i >= 0; i--) {
      stack = builder.stack(stack, frameOf(paths.fn[chain[i]]));
      stackIds[chain[i]] = stack;
    }
    return stack as number;
  };

  /**
   * Where a function with no expanded path goes: under its heaviest caller's heaviest path (its
   * paths were too rare to expand), or as a root when no caller leads to an expanded path. Under a
   * caller already at the depth bound it goes beside that caller instead, at the bound (`cut`): a
   * call chain deeper than the bound (200 k calls) stays maxDepth frames deep, each function's
   * self cost still its own.
   */
  interface Placed {
    stack: number;
    parent: number | null;
    depth: number;
    cut: boolean;
  }
  const fallbackStacks = new Map<number, Placed>();
  const visiting = new Set<number>();
  let rootsWithoutPath = 0;
  const fallbackOf = (fn: number, hops: number): Placed => {
    const known = fallbackStacks.get(fn);
    if (known !== undefined) return known;
    let placed: Placed;
    const nodes = paths.byFunction[fn];
    if (nodes.length > 0) {
      let best = nodes[0];
      for (const n of nodes) if (paths.share[n].reduce((a, b) => a + b, 0) > paths.share[best].reduce((a, b) => a + b, 0)) best = n;
      const parent = paths.parent[best];
      placed = { stack: stackOf(best), parent: parent >= 0 ? stackOf(parent) : null, depth: paths.depth[best], cut: false };
    } else {
      const caller = paths.heaviestCaller[fn];
      visiting.add(fn);
      if (caller >= 0 && !visiting.has(caller) && hops < maxDepth) {
        const above = fallbackOf(caller, hops + 1);
        placed =
          above.depth + 1 < maxDepth
            ? { stack: builder.stack(above.stack, frameOf(fn)), parent: above.stack, depth: above.depth + 1, cut: above.cut }
            : { stack: builder.stack(above.parent, frameOf(fn)), parent: above.parent, depth: above.depth, cut: true };
      } else {
        placed = { stack: builder.stack(null, frameOf(fn)), parent: null, depth: 0, cut: false };
        rootsWithoutPath++;
      }
      visiting.delete(fn);
    }
    fallbackStacks.set(fn, placed);
    return placed;
  };

  let unexpanded = 0;
  let cutAtDepth = 0;
  let emitted = 0;
  for (let fn = 0; fn < graph.functions.length; fn++) {
    const self = graph.self[fn];
    if (self.every((v) => v === 0)) continue;
    const nodes = paths.byFunction[fn];
    for (let e = 0; e < graph.events; e++) {
      if (self[e] === 0) continue;
      let weights = nodes.map((n) => paths.share[n][e]);
      // No path carries this event (e.g. the calls into it cost nothing of it): use the paths' other events.
      if (weights.every((w) => w <= 0)) weights = nodes.map((n) => paths.share[n].reduce((a, b) => a + b, 0));
      if (weights.every((w) => w <= 0)) {
        const placed = fallbackOf(fn, 0);
        if (placed.cut) cutAtDepth++;
        else unexpanded++;
        builder.sample(placed.stack, track, null, metricIds[e], int64(self[e], FORMAT, "costs"));
        emitted++;
        continue;
      }
      const values = apportion(self[e], weights);
      for (let i = 0; i < nodes.length; i++) {
        if (values[i] === 0) continue;
        builder.sample(stackOf(nodes[i]), track, null, metricIds[e], int64(values[i], FORMAT, "costs"));
        if (++emitted % SAMPLES_PER_CHECKPOINT === 0) await builder.checkpoint();
      }
    }
  }
  return { unexpanded, rootsWithoutPath, cutAtDepth };
}

export const callgrindImporter: FormatImporter = {
  id: "callgrind",
  title: "Valgrind callgrind / cachegrind profile",
  extensions: ["callgrind", "cachegrind"],
  version: "2",

  sniff(_head, headText, fileName) {
    try {
      const named = /(^|[/\\])(callgrind|cachegrind)\.out(\.[\w.-]+)?$/i.test(fileName ?? "") || /\.(callgrind|cachegrind)$/i.test(fileName ?? "");
      const text = headText.slice(0, 16 * 1024);
      if (/^# callgrind format/.test(text)) return 0.98;
      const events = /^events:\s*\S/m.test(text);
      const creator = /^creator:\s*(callgrind|cachegrind)/m.test(text);
      const specs = /^(fn|fl)=/m.test(text);
      if (events && (creator || specs)) return named ? 0.98 : 0.9;
      if (named && (events || specs)) return 0.7;
      return 0;
    } catch {
      return 0;
    }
  },

  async parse(ctx: ImportContext) {
    const { builder, limits } = ctx;
    const { graph, header } = await readCallGraph(ctx);

    const totals = new Array(graph.events).fill(0);
    graph.self.forEach((self) => self.forEach((v, e) => (totals[e] += v)));
    const lastLine = header.totals ?? header.summary;
    // callgrind writes summary: first and totals: last; a file cut before its end sums short of its summary.
    if (header.totals === null && header.summary !== null && header.summary.some((v, e) => totals[e] < v)) {
      throw new EvidenceParseError(FORMAT, "the costs sum to less than `summary:` says: truncated", { line: 1 });
    }
    if (lastLine !== null && lastLine.some((v, e) => v !== totals[e])) {
      builder.limit("CALLGRIND_TOTALS_MISMATCH", "The self costs do not sum to what the file's `totals:` (or `summary:`) line says; the run's totals are the sums of the self costs.");
    }

    const metricIds = header.events.map((event) => builder.metric({ name: event, unit: event === "Ir" ? "instructions" : "events", kind: "counted" }));
    const pid = header.meta.pid ?? null;
    const track =
      pid !== null || header.meta.cmd
        ? builder.track({ processId: pid, processName: header.meta.cmd ?? null, threadId: header.meta.thread ?? null, kind: header.meta.thread ? "thread" : "process" })
        : null;

    const paths = new CallPaths(graph, limits.maxDepth);
    paths.build();
    const { unexpanded, rootsWithoutPath, cutAtDepth } = await emitSamples(graph, paths, metricIds, track, builder, limits.maxDepth);

    builder.limit(
      "CALLGRIND_STACKS_FROM_CALL_GRAPH",
      "callgrind records a call graph, not stacks: each function's self cost is split over its call paths in proportion to the inclusive cost of the calls on each path, and recursion is folded into its outermost call. Self costs per function and totals are exact; how a shared function's cost divides between its callers' paths is an estimate.",
    );
    if (paths.capped) builder.limit("CALLGRIND_PATHS_CAPPED", `The call graph has more than ${MAX_PATH_NODES} call paths; the rarest were folded into the others.`);
    if (paths.deep > 0 || cutAtDepth > 0) {
      builder.limit(
        "STACK_TRUNCATED",
        `${paths.deep} call path(s) go deeper than ${limits.maxDepth} frames; a function called only below that depth is drawn at it, under the frame above, with its own self cost (${cutAtDepth} function cost(s)), and the calls in between are cut.`,
      );
    }
    if (unexpanded > 0) {
      builder.limit(
        "CALLGRIND_RARE_PATHS",
        `${unexpanded} function cost(s) are reached only through call paths carrying under ${MIN_PATH_SHARE * 1e6} ppm of the total, or through cycles; they are drawn under their heaviest caller${rootsWithoutPath > 0 ? ` (${rootsWithoutPath} with no caller on an expanded path, as roots)` : ""}.`,
      );
    }

    const meta = builder.metadata;
    meta.source_format = FORMAT;
    meta["callgrind.events"] = header.events.join(" ");
    meta["callgrind.totals"] = totals.join(" ");
    for (const [key, value] of Object.entries(header.meta)) meta[`callgrind.${key}`] = builder.bound(value, "args");
  },
};
