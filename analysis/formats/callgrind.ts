/**
 * Valgrind callgrind (and cachegrind) profiles: per function (fn= in object ob=, file fl=) its
 * self cost lines, and per call (cfn= … calls=) the call's inclusive cost. One frame per function
 * (module = object); one `counted` metric per event, named as in `events:` (Ir in instructions,
 * others in events). Callgrind keeps a call graph, not stacks, so stacks are rebuilt by splitting
 * each function's self cost over its call paths in proportion to the inclusive cost of the calls
 * on the path (the assumption speedscope and gprof make); self totals per function stay exact.
 */
import { IntList, NumberColumn, type EvidenceBuilder } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { int64 } from "../evidence/int64";
import { writtenZeros } from "../io/bytes";
import { lineBatches, ownCopy } from "../io/text";
import { TextTable } from "../io/text-table";
import { demangledFrame } from "../symbols/demangle";
import { EvidenceParseError, InputBoundError } from "./errors";
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

/** Functions beyond this are refused: an edge's key is caller × 2^26 + callee, exact in a double. */
const MAX_FUNCTIONS = 2 ** 26;

/**
 * A compression space's ids, `(id) text` once then `(id)`: id → text id. Ids as callgrind writes
 * them (decimal, no leading zero, below MAX_INDEXED_ID) index a column; any other spelling goes
 * through a map by its text, so that `(01)` stays apart from `(1)`. A later definition of an id
 * replaces the earlier one.
 */
class CompressedIds {
  /** Per id, its text id + 1 (0: not defined). */
  private readonly byNumber = new IntList();
  private readonly byText = new Map<string, number>();

  define(id: string, textId: number): void {
    const n = indexedId(id);
    if (n < 0) {
      // Its own copy: a slice of the line would keep the line's whole text batch alive.
      this.byText.set(ownCopy(id), textId);
      return;
    }
    while (this.byNumber.length <= n) this.byNumber.push(0);
    this.byNumber.data[n] = textId + 1;
  }

  /** The text id of `id`, or -1 when it is not defined. */
  get(id: string): number {
    const n = indexedId(id);
    if (n < 0) return this.byText.get(id) ?? -1;
    return n < this.byNumber.length ? this.byNumber.data[n] - 1 : -1;
  }
}

/** Compressed ids below this are kept in a column (4 bytes each up to the largest used: 16 MB at most); larger ones in a map. */
const MAX_INDEXED_ID = 1 << 22;

function indexedId(id: string): number {
  if (id.length > 8 || (id.length > 1 && id.charCodeAt(0) === 0x30)) return -1;
  const n = Number(id);
  return n < MAX_INDEXED_ID ? n : -1;
}

/**
 * The parsed call graph, compact (a profile of a large program names millions of functions): per
 * function its name, file and object (ids in the reader's TextTable) and its self cost per event in columns; per
 * caller → callee edge its call count and inclusive cost per event, found by an open-addressing
 * hash of (caller, callee), and after `finish` listed per caller in the order the file gave them.
 */
class CallGraph {
  /** Per function, its name, file and object: ids in `texts` (-1: none). */
  private readonly nameOf = new IntList();
  private readonly fileOf = new IntList();
  private readonly objectOf = new IntList();
  /** Per name (its text id), its first function + 1 (0: none); other functions of that name (other file or object) follow by `sameName`. */
  private byName = new IntList();
  private sameName = new IntList();
  /** self[fn × events + event]. */
  readonly self = new NumberColumn();
  edgeCaller = new IntList();
  edgeCallee = new IntList();
  edgeCalls = new NumberColumn();
  /** edgeCost[edge × events + event]: the calls' inclusive cost. */
  edgeCost = new NumberColumn();
  /**
   * Open addressing by hash of (caller, callee), at most half full: slot k is [3k] the caller, [3k + 1]
   * the callee, [3k + 2] the edge id + 1 (0: empty). The pair beside the id lets a probe read one
   * place in memory, not also the edge's columns: the table outgrows the CPU's caches.
   */
  private slots = new Int32Array(3 * 1024);
  /** After finish(): edges of caller c are edgeOrder[edgeStart[c], edgeStart[c + 1]), in file order. */
  edgeStart = new Int32Array(0);
  edgeOrder = new Int32Array(0);

  constructor(
    readonly events: number,
    private readonly texts: TextTable,
  ) {}

  get count(): number {
    return this.nameOf.length;
  }

  get edges(): number {
    return this.edgeCaller.length;
  }

  name(fn: number): string {
    return this.texts.text(this.nameOf.data[fn]);
  }

  file(fn: number): string | null {
    const id = this.fileOf.data[fn];
    return id < 0 ? null : this.texts.text(id);
  }

  object(fn: number): string | null {
    const id = this.objectOf.data[fn];
    return id < 0 ? null : this.texts.text(id);
  }

  /** The function of this name, file and object (text ids; -1: none), added if new. */
  fn(name: number, file: number, object: number): number {
    const first = name < this.byName.length ? this.byName.data[name] - 1 : -1;
    for (let id = first; id >= 0; id = this.sameName.data[id]) {
      if (this.fileOf.data[id] === file && this.objectOf.data[id] === object) return id;
    }
    const id = this.nameOf.length;
    if (id >= MAX_FUNCTIONS) throw new InputBoundError("size", MAX_FUNCTIONS, `The profile names more than ${MAX_FUNCTIONS} functions.`);
    if (first < 0) {
      while (this.byName.length <= name) this.byName.push(0);
      this.byName.data[name] = id + 1;
    } else {
      // Chained after the first: later lookups of the name walk its functions in the order they came.
      let last = first;
      while (this.sameName.data[last] >= 0) last = this.sameName.data[last];
      this.sameName.data[last] = id;
    }
    this.sameName.push(-1);
    this.nameOf.push(name);
    this.fileOf.push(file);
    this.objectOf.push(object);
    for (let e = 0; e < this.events; e++) this.self.push(0);
    return id;
  }

  addSelf(fn: number, cost: number[]): void {
    const at = fn * this.events;
    for (let e = 0; e < this.events; e++) if (cost[e] !== 0) this.self.set(at + e, this.self.get(at + e) + cost[e]);
  }

  addCall(caller: number, callee: number, count: number, cost: number[]): void {
    const slots = this.slots;
    const mask = slots.length / 3 - 1;
    let slot = hashPair(caller, callee) & mask;
    for (;;) {
      const entry = slots[3 * slot + 2];
      if (entry === 0) break;
      if (slots[3 * slot] === caller && slots[3 * slot + 1] === callee) {
        const edge = entry - 1;
        this.edgeCalls.set(edge, this.edgeCalls.get(edge) + count);
        const at = edge * this.events;
        for (let e = 0; e < this.events; e++) if (cost[e] !== 0) this.edgeCost.set(at + e, this.edgeCost.get(at + e) + cost[e]);
        return;
      }
      slot = (slot + 1) & mask;
    }
    const edge = this.edgeCaller.length;
    this.edgeCaller.push(caller);
    this.edgeCallee.push(callee);
    this.edgeCalls.push(count);
    for (let e = 0; e < this.events; e++) this.edgeCost.push(cost[e]);
    slots[3 * slot] = caller;
    slots[3 * slot + 1] = callee;
    slots[3 * slot + 2] = edge + 1;
    if (this.edgeCaller.length * 6 > slots.length) this.rehash();
  }

  private rehash(): void {
    const slots = writtenZeros(new Int32Array(this.slots.length * 2));
    const mask = slots.length / 3 - 1;
    for (let edge = 0; edge < this.edgeCaller.length; edge++) {
      const caller = this.edgeCaller.data[edge];
      const callee = this.edgeCallee.data[edge];
      let slot = hashPair(caller, callee) & mask;
      while (slots[3 * slot + 2] !== 0) slot = (slot + 1) & mask;
      slots[3 * slot] = caller;
      slots[3 * slot + 1] = callee;
      slots[3 * slot + 2] = edge + 1;
    }
    this.slots = slots;
  }

  /** Lists the edges per caller. No function or call is added after this: the lookups' memory goes. */
  finish(): void {
    this.slots = new Int32Array(0);
    this.byName = new IntList();
    this.sameName = new IntList();
    this.texts.seal();
    const functions = this.count;
    const edges = this.edges;
    const start = new Int32Array(functions + 1);
    for (let edge = 0; edge < edges; edge++) start[this.edgeCaller.data[edge] + 1]++;
    for (let fn = 0; fn < functions; fn++) start[fn + 1] += start[fn];
    const fill = start.slice(0, functions);
    const order = new Int32Array(edges);
    for (let edge = 0; edge < edges; edge++) order[fill[this.edgeCaller.data[edge]]++] = edge;
    this.edgeStart = start;
    this.edgeOrder = order;
  }

  /** Drops the calls, once the call paths are rebuilt from them (a large profile's calls take hundreds of megabytes). */
  dropCalls(): void {
    this.edgeCaller = new IntList();
    this.edgeCallee = new IntList();
    this.edgeCalls = new NumberColumn();
    this.edgeCost = new NumberColumn();
    this.edgeStart = new Int32Array(0);
    this.edgeOrder = new Int32Array(0);
  }
}

function hashPair(a: number, b: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)) >>> 0;
}

/** cob=/cfi=/cfn= seen, then calls= (count ≥ 0): the next cost line is this call's inclusive cost. */
interface PendingCall {
  /** Text ids (-1: none; name -1: no cfn= yet). */
  object: number;
  file: number;
  name: number;
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
  // Every name, file and object text, once (a large program's profile names millions of functions).
  const texts = new TextTable();
  const compressed: Record<NameSpace, CompressedIds> = { ob: new CompressedIds(), fl: new CompressedIds(), fn: new CompressedIds() };
  // Texts that stand for no name, as callgrind_annotate reads them.
  const unknownIds = [texts.id("???"), texts.id("")];
  let graph: CallGraph | null = null;
  let object = -1;
  let file = -1;
  let fn = -1;
  // The next call's callee, valid until its cost line.
  let callee: PendingCall | null = null;
  let sawAny = false;
  let lastLine = 0;
  let unknownLines = 0;

  const fail = (reason: string, line: number): never => {
    throw new EvidenceParseError(FORMAT, reason, { line });
  };
  /** The text id a name specification's value stands for. */
  const resolve = (space: NameSpace, value: string, line: number): number => {
    const named = NAMED.exec(value);
    if (!named) return texts.id(value);
    if (named[2] !== undefined) {
      const id = texts.id(named[2]);
      compressed[space].define(named[1], id);
      return id;
    }
    const known = compressed[space].get(named[1]);
    if (known < 0) fail(`a compressed ${space}= name is used before it is defined`, line);
    return known;
  };
  const unknownName = (id: number) => (unknownIds.includes(id) ? -1 : id);
  const numbers = (text: string, line: number): number[] => {
    const out = text.trim().split(/\s+/).filter(Boolean);
    return out.map((t) => (COST.test(t) ? Number(t) : fail("a cost is not a whole number", line)));
  };

  // Nothing is emitted while reading (stacks need the whole call graph), so there is nothing to checkpoint here.
  // A batch of lines at a time, each walked in a plain loop: an async step per line cost more than the rest of the parse.
  for await (const batch of lineBatches(source.chunks(), limits.maxLineLength)) {
    const lines = batch.texts();
    for (let i = 0; i < lines.length; i++) {
      const line = batch.firstLine + i;
      const raw = lines[i];
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
          const target = g.fn(callee.name, callee.file, callee.object);
          g.addCall(fn, target, callee.count, cost);
          callee = null;
        } else {
          if (callee !== null) {
            builder.limit("CALLGRIND_CALL_WITHOUT_CALLS", "Some cob=/cfi=/cfn= lines were not followed by calls=; the cost line after them was counted as self cost.");
            callee = null;
          }
          g.addSelf(fn, cost);
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
            callee ??= { object, file, name: -1, count: -1, line };
            if (key === "cob") callee.object = unknownName(name);
            else if (key === "cfn") callee.name = name;
            else callee.file = unknownName(name);
            break;
          }
          case "calls": {
            const [count] = value.trim().split(/\s+/);
            const call: PendingCall | null = callee;
            if (call === null || call.name < 0) return fail("calls= without a cfn= naming the called function", line);
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
            graph ??= new CallGraph(events.length, texts);
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
  }

  if (!sawAny) throw new EvidenceParseError(FORMAT, "empty input", { line: 1, offset: 0 });
  if (callee !== null && (callee as PendingCall).count >= 0) fail("the file ends after calls= without its cost line: truncated", lastLine);
  if (!graph) throw new EvidenceParseError(FORMAT, "no `events:` header: not a callgrind profile", { line: 1 });
  if (unknownLines > 0) builder.limit("CALLGRIND_UNKNOWN_LINES", `${unknownLines} specification line(s) of an unknown kind were ignored.`);
  graph.finish();
  return { graph, header };
}

/**
 * Rebuilt call paths: a prefix tree of (function, parent) nodes, each with the share of its
 * function's activity that the path carries, per event. At most MAX_PATH_NODES nodes; per
 * function only typed arrays.
 */
class CallPaths {
  readonly parent = new IntList();
  readonly fn = new IntList();
  /** share[node × events + event]. */
  readonly share = new NumberColumn();
  /** Per node, its depth (0: a root); at most maxDepth − 1. */
  readonly depth = new IntList();
  /** After build(): the nodes of function f are byFunction[functionStart[f], functionStart[f + 1]), in node order. */
  private functionStart = new Int32Array(0);
  private byFunction = new Int32Array(0);
  /** Per function, the caller whose calls into it cost the most (-1: never called by another function). */
  readonly heaviestCaller: Int32Array;
  capped = false;
  deep = 0;

  constructor(
    private readonly graph: CallGraph,
    private readonly maxDepth: number,
  ) {
    this.heaviestCaller = new Int32Array(graph.count).fill(-1);
  }

  get count(): number {
    return this.fn.length;
  }

  /** The node's share of its function's activity summed over the events. */
  shareSum(node: number): number {
    let sum = 0;
    for (let e = 0; e < this.graph.events; e++) sum += this.share.get(node * this.graph.events + e);
    return sum;
  }

  nodesOf(fn: number): Int32Array {
    return this.byFunction.subarray(this.functionStart[fn], this.functionStart[fn + 1]);
  }

  build(): void {
    const g = this.graph;
    const events = g.events;
    const functions = g.count;
    // Written first: these are read before written, at random (see writtenZeros).
    const incomingCost = writtenZeros(new Float64Array(functions * events));
    const incomingCalls = writtenZeros(new Float64Array(functions));
    const totals = new Array(events).fill(0);
    const heaviest = new Float64Array(functions).fill(-1);
    for (let caller = 0; caller < functions; caller++) {
      for (let k = g.edgeStart[caller]; k < g.edgeStart[caller + 1]; k++) {
        const edge = g.edgeOrder[k];
        const callee = g.edgeCallee.data[edge];
        if (callee === caller) continue;
        incomingCalls[callee] += g.edgeCalls.get(edge);
        let weight = 0;
        for (let e = 0; e < events; e++) {
          const cost = g.edgeCost.get(edge * events + e);
          incomingCost[callee * events + e] += cost;
          weight += cost;
        }
        if (weight > heaviest[callee]) {
          heaviest[callee] = weight;
          this.heaviestCaller[callee] = caller;
        }
      }
    }
    for (let fn = 0; fn < functions; fn++) for (let e = 0; e < events; e++) totals[e] += g.self.get(fn * events + e);
    const onPath = writtenZeros(new Uint8Array(functions));

    // The shares of the node being visited, per depth (a node's children are visited after its own share is read).
    const shares: Float64Array[] = [];
    const visit = (fn: number, parent: number, share: Float64Array, depth: number) => {
      const node = this.fn.length;
      this.fn.push(fn);
      this.parent.push(parent);
      for (let e = 0; e < events; e++) this.share.push(share[e]);
      this.depth.push(depth);
      if (depth + 1 >= this.maxDepth) {
        this.deep++;
        return;
      }
      onPath[fn] = 1;
      for (let k = g.edgeStart[fn]; k < g.edgeStart[fn + 1]; k++) {
        const edge = g.edgeOrder[k];
        const callee = g.edgeCallee.data[edge];
        // Recursion is folded into the outermost call on the path.
        if (onPath[callee]) continue;
        const calls = g.edgeCalls.get(edge);
        const childShare = (shares[depth + 1] ??= new Float64Array(events));
        let carries = false;
        for (let e = 0; e < events; e++) {
          const cost = g.edgeCost.get(edge * events + e);
          const incoming = incomingCost[callee * events + e];
          const weight = incoming > 0 ? cost / incoming : incomingCalls[callee] > 0 ? calls / incomingCalls[callee] : 0;
          childShare[e] = share[e] * weight;
          if (totals[e] > 0 && (share[e] * cost) / totals[e] >= MIN_PATH_SHARE) carries = true;
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

    for (let fn = 0; fn < functions; fn++) {
      let called = incomingCalls[fn] !== 0;
      for (let e = 0; e < events && !called; e++) called = incomingCost[fn * events + e] !== 0;
      if (!called) visit(fn, -1, new Float64Array(events).fill(1), 0);
    }

    // Nodes per function, in node order.
    const start = new Int32Array(functions + 1);
    const nodes = this.fn.length;
    for (let node = 0; node < nodes; node++) start[this.fn.data[node] + 1]++;
    for (let fn = 0; fn < functions; fn++) start[fn + 1] += start[fn];
    const fill = start.slice(0, functions);
    const byFunction = new Int32Array(nodes);
    for (let node = 0; node < nodes; node++) byFunction[fill[this.fn.data[node]]++] = node;
    this.functionStart = start;
    this.byFunction = byFunction;
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
  const events = graph.events;
  const frameIds = new Int32Array(graph.count).fill(-1);
  const stackIds = new Int32Array(paths.count).fill(-1);
  const frameOf = (fn: number) => {
    if (frameIds[fn] < 0) {
      const name = graph.name(fn);
      frameIds[fn] = builder.frame(demangledFrame({ name, file: graph.file(fn), module: graph.object(fn), kind: frameKind(name) }));
    }
    return frameIds[fn];
  };
  const stackOf = (node: number): number => {
    if (stackIds[node] >= 0) return stackIds[node];
    const chain: number[] = [];
    let at = node;
    while (at >= 0 && stackIds[at] < 0) {
      chain.push(at);
      at = paths.parent.data[at];
    }
    let stack: number | null = at >= 0 ? stackIds[at] : null;
    for (let i = chain.length - 1; i >= 0; i--) {
      stack = builder.stack(stack, frameOf(paths.fn.data[chain[i]]));
      stackIds[chain[i]] = stack;
    }
    return stack as number;
  };
  const shareSum = (node: number) => paths.shareSum(node);

  /**
   * Where a function with no expanded path goes: under its heaviest caller's heaviest path (its
   * paths were too rare to expand), or as a root when no caller leads to an expanded path. Under a
   * caller already at the depth bound it goes beside that caller instead, at the bound (`cut`): a
   * call chain deeper than the bound (200 k calls) stays maxDepth frames deep, each function's
   * self cost still its own. Kept per function in typed arrays (placedStack -2: not placed yet;
   * placedParent -1: a root).
   */
  const placedStack = new Int32Array(graph.count).fill(-2);
  const placedParent = new Int32Array(graph.count);
  const placedDepth = new Int32Array(graph.count);
  const placedCut = new Uint8Array(graph.count);
  const visiting = writtenZeros(new Uint8Array(graph.count));
  let rootsWithoutPath = 0;
  const place = (fn: number, stack: number, parent: number | null, depth: number, cut: boolean) => {
    placedStack[fn] = stack;
    placedParent[fn] = parent ?? -1;
    placedDepth[fn] = depth;
    placedCut[fn] = cut ? 1 : 0;
  };
  const fallbackOf = (fn: number, hops: number): void => {
    if (placedStack[fn] !== -2) return;
    const nodes = paths.nodesOf(fn);
    if (nodes.length > 0) {
      let best = nodes[0];
      for (const n of nodes) if (shareSum(n) > shareSum(best)) best = n;
      const parent = paths.parent.data[best];
      place(fn, stackOf(best), parent >= 0 ? stackOf(parent) : null, paths.depth.data[best], false);
      return;
    }
    const caller = paths.heaviestCaller[fn];
    visiting[fn] = 1;
    if (caller >= 0 && !visiting[caller] && hops < maxDepth) {
      fallbackOf(caller, hops + 1);
      const aboveStack = placedStack[caller];
      const aboveParent = placedParent[caller] < 0 ? null : placedParent[caller];
      const aboveDepth = placedDepth[caller];
      if (aboveDepth + 1 < maxDepth) place(fn, builder.stack(aboveStack, frameOf(fn)), aboveStack, aboveDepth + 1, placedCut[caller] === 1);
      else place(fn, builder.stack(aboveParent, frameOf(fn)), aboveParent, aboveDepth, true);
    } else {
      place(fn, builder.stack(null, frameOf(fn)), null, 0, false);
      rootsWithoutPath++;
    }
    visiting[fn] = 0;
  };

  let unexpanded = 0;
  let cutAtDepth = 0;
  let emitted = 0;
  for (let fn = 0; fn < graph.count; fn++) {
    let any = false;
    for (let e = 0; e < events && !any; e++) any = graph.self.get(fn * events + e) !== 0;
    if (!any) continue;
    const nodes = Array.from(paths.nodesOf(fn));
    for (let e = 0; e < events; e++) {
      const self = graph.self.get(fn * events + e);
      if (self === 0) continue;
      let weights = nodes.map((n) => paths.share.get(n * events + e));
      // No path carries this event (e.g. the calls into it cost nothing of it): use the paths' other events.
      if (weights.every((w) => w <= 0)) weights = nodes.map(shareSum);
      if (weights.every((w) => w <= 0)) {
        fallbackOf(fn, 0);
        if (placedCut[fn]) cutAtDepth++;
        else unexpanded++;
        builder.sample(placedStack[fn], track, null, metricIds[e], int64(self, FORMAT, "costs"));
        emitted++;
        continue;
      }
      const values = apportion(self, weights);
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
    for (let fn = 0; fn < graph.count; fn++) for (let e = 0; e < graph.events; e++) totals[e] += graph.self.get(fn * graph.events + e);
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
    graph.dropCalls();
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
