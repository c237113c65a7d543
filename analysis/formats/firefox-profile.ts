/**
 * What the two Firefox Profiler formats share: their tables read as columns whichever way the file
 * lays them out (the Gecko format's `{schema, data}` rows, the processed format's `{column: [...]}`
 * arrays), collected while the JSON streams by, and the samples of one thread written as evidence.
 * The importers are gecko.ts (what Firefox, simpleperf and perf write) and firefox-processed.ts
 * (what profiler.firefox.com saves and samply writes); each interprets the columns by its version.
 * Format description: github.com/firefox-devtools/profiler, docs-developer/gecko-profile-format.md,
 * src/types/gecko-profile.ts and src/types/profile.ts.
 */
import type { EvidenceBuilder } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import type { JsonPath, JsonValue } from "../io/json-stream";
import { EvidenceParseError } from "./errors";

export type JsonObject = { [key: string]: JsonValue };

export const isJsonObject = (value: JsonValue | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** Non-negative integers (indices, lines) or null, kept as int32 with -1 for null. */
export class IndexColumn {
  private data = new Int32Array(256);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
  /** The value at `index`; -1 (null) beyond the column's end. */
  get(index: number): number {
    return index < this.length ? this.data[index] : -1;
  }
}

/** Numbers or null (NaN). */
export class FloatColumn {
  private data = new Float64Array(256);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
  /** The value at `index`; NaN (null) beyond the column's end. */
  get(index: number): number {
    return index < this.length ? this.data[index] : NaN;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

type ColumnKind = "index" | "number" | "flag";
type Column = IndexColumn | FloatColumn;

/** The columns kept of each table (the rest is skipped unread); a flag is an index column of 0 and 1. */
const TABLE_COLUMNS: Record<string, Record<string, ColumnKind>> = {
  samples: { stack: "index", time: "number", timeDeltas: "number", weight: "number", duration: "number", threadCPUDelta: "number" },
  jsAllocations: { stack: "index", time: "number", timeDeltas: "number", weight: "number" },
  nativeAllocations: { stack: "index", time: "number", timeDeltas: "number", weight: "number" },
  stackTable: { prefix: "index", frame: "index" },
  frameTable: { location: "index", func: "index", line: "index", column: "index", category: "index", relevantForJS: "flag" },
  funcTable: { name: "index", isJS: "flag", relevantForJS: "flag", resource: "index", fileName: "index", source: "index", lineNumber: "index", columnNumber: "index" },
  resourceTable: { name: "index", type: "index" },
  sources: { filename: "index" },
};

/** One table's kept columns, from rows (Gecko) or column arrays (processed). */
export class FirefoxTable {
  readonly columns = new Map<string, Column>();
  /** Gecko rows: column name → position in a row. */
  schema: Map<string, number> | null = null;
  /** The `weightType` a samples-like table declares, or null. */
  weightType: string | null = null;
  /** The kept columns' positions in a Gecko row, once the schema is known. */
  private rowCells: { position: number; column: Column; name: string; kind: ColumnKind }[] | null = null;
  /** Rows that came before their schema (kept until it comes). */
  private waitingRows: { row: JsonValue[]; offset: number }[] = [];
  /** The `length` the table declares (processed), or null. */
  declaredLength: number | null = null;
  /** Gecko rows read. */
  rows = 0;
  /** Where the table starts in the input (errors about its contents point here). */
  constructor(
    readonly name: string,
    readonly offset: number,
    private readonly format: string,
  ) {}

  column(name: string): Column | undefined {
    return this.columns.get(name);
  }

  /** The index column `name`, or an error when the table lacks it. */
  indexColumn(name: string): IndexColumn {
    const column = this.columns.get(name);
    if (!(column instanceof IndexColumn)) throw new EvidenceParseError(this.format, `the ${this.name} has no ${name} column`, { offset: this.offset });
    return column;
  }

  floatColumn(name: string): FloatColumn | null {
    const column = this.columns.get(name);
    return column instanceof FloatColumn ? column : null;
  }

  /** How many entries the table holds: its declared length, else its longest column. */
  get length(): number {
    if (this.declaredLength !== null) return this.declaredLength;
    if (this.schema !== null || this.rows > 0) return this.rows;
    let longest = 0;
    for (const column of this.columns.values()) longest = Math.max(longest, column.length);
    return longest;
  }

  /** The kept column `name` (made when first asked for), or null when the table does not keep it. */
  keptColumn(name: string): { column: Column; kind: ColumnKind } | null {
    const kind = keptKind(this.name, name);
    if (kind === null) return null;
    let column = this.columns.get(name);
    if (!column) this.columns.set(name, (column = kind === "number" ? new FloatColumn() : new IndexColumn()));
    return { column, kind };
  }

  /** A value of column `name` (processed layout), at `offset` in the input. */
  pushTo(column: Column, name: string, kind: ColumnKind, value: JsonValue, offset: number): void {
    column.push(this.cell(name, kind, value, offset));
  }

  /** One Gecko row. */
  pushRow(row: JsonValue, offset: number): void {
    if (!Array.isArray(row)) throw new EvidenceParseError(this.format, `a ${this.name} row is not an array`, { offset });
    const cells = this.rowCells;
    if (cells === null) {
      this.waitingRows.push({ row, offset });
      return;
    }
    this.rows++;
    for (let c = 0; c < cells.length; c++) {
      const { position, column, name, kind } = cells[c];
      const value = row[position];
      column.push(this.cell(name, kind, value === undefined ? null : value, offset));
    }
  }

  setSchema(schema: JsonValue, offset: number): void {
    if (!isJsonObject(schema)) throw new EvidenceParseError(this.format, `the ${this.name} schema is not an object`, { offset });
    const positions = new Map<string, number>();
    for (const [name, position] of Object.entries(schema)) {
      if (typeof position !== "number" || !Number.isInteger(position) || position < 0 || position > 1024) {
        throw new EvidenceParseError(this.format, `the ${this.name} schema gives a column a position that is not a small index`, { offset });
      }
      positions.set(name, position);
    }
    this.schema = positions;
    this.rowCells = [];
    for (const [name, position] of positions) {
      const kept = this.keptColumn(name);
      if (kept) this.rowCells.push({ position, name, ...kept });
    }
    const waiting = this.waitingRows;
    this.waitingRows = [];
    for (const { row, offset: at } of waiting) this.pushRow(row, at);
  }

  private cell(name: string, kind: ColumnKind, value: JsonValue, offset: number): number {
    if (kind === "number") {
      if (value === null) return NaN;
      if (typeof value === "number") return value;
      throw new EvidenceParseError(this.format, `${this.name}.${name} holds a value that is not a number`, { offset });
    }
    if (kind === "flag") {
      if (value === true || value === 1) return 1;
      if (value === false || value === 0 || value === null) return 0;
      throw new EvidenceParseError(this.format, `${this.name}.${name} holds a value that is not a boolean`, { offset });
    }
    if (value === null || value === -1) return -1;
    if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 31 - 1) return value;
    throw new EvidenceParseError(this.format, `${this.name}.${name} holds a value that is not an index`, { offset });
  }
}

/** Tables and strings of one thread, or those a processed profile shares between its threads. */
export class FirefoxScope {
  readonly tables = new Map<string, FirefoxTable>();
  /** `stringTable` (Gecko) or `stringArray` (processed). */
  strings: string[] | null = null;
  stringsOffset = 0;
  constructor(readonly offset: number) {}

  string(index: number, what: string, format: string): string {
    const strings = this.strings;
    if (strings === null) throw new EvidenceParseError(format, `${what} names a string, but there is no string table`, { offset: this.offset });
    if (index < 0 || index >= strings.length) throw new EvidenceParseError(format, `${what} names string ${index}, beyond the string table's ${strings.length}`, { offset: this.stringsOffset });
    return strings[index];
  }
}

export class FirefoxThread extends FirefoxScope {
  /** Its scalar and small fields: name, pid, tid, processType, processName, pausedRanges, … */
  readonly fields: Record<string, JsonValue> = {};
  /** Gecko marker rows seen, and the length a processed markers table declares. */
  markerRows = 0;
  markerLength: number | null = null;
  get markers(): number {
    return this.markerLength ?? this.markerRows;
  }
  constructor(
    readonly index: number,
    offset: number,
  ) {
    super(offset);
  }
}

/** One profile: the whole file, or (Gecko) a process's profile nested under `processes`. */
export class FirefoxProfileNode {
  meta: JsonObject | null = null;
  metaOffset = 0;
  libs: JsonValue[] | null = null;
  pausedRanges: JsonValue[] | null = null;
  readonly shared: FirefoxScope;
  readonly children: FirefoxProfileNode[] = [];
  /** Top-level keys seen that the importers do not read (counters, …), for limitations. */
  readonly unread = new Set<string>();
  constructor(
    readonly parent: FirefoxProfileNode | null,
    readonly offset: number,
  ) {
    this.shared = new FirefoxScope(offset);
  }
}

const THREAD_FIELDS = new Set(["name", "processType", "processName", "tid", "pid", "isMainThread", "registerTime", "unregisterTime", "processStartupTime", "pausedRanges"]);
const STRING_TABLES = new Set(["stringTable", "stringArray"]);
/** Top-level keys whose contents no importer reads, recorded so a limitation can name them. */
const UNREAD_KEYS = new Set(["counters", "profilerOverhead"]);

/** The kind of a kept column of a table, or null when it is not kept (own keys only: names come from the input). */
function keptKind(table: string, column: string): ColumnKind | null {
  if (!Object.hasOwn(TABLE_COLUMNS, table)) return null;
  const columns = TABLE_COLUMNS[table];
  return Object.hasOwn(columns, column) ? columns[column] : null;
}

/**
 * The streamed array whose elements come next, read without looking their path up again (a
 * profile's columns hold millions of numbers): a column's values, Gecko rows, a string table's
 * entries, or Gecko marker rows (counted).
 */
interface ActiveArray {
  /** The array's path length: its elements' is one more. */
  depth: number;
  kind: "column" | "rows" | "strings" | "markers";
  table: FirefoxTable | null;
  column: Column | null;
  columnName: string;
  columnKind: ColumnKind;
  scope: FirefoxScope;
}

/**
 * Collects a Firefox profile from the JSON stream: give `select` and `onValue` to
 * parseJsonStream. `onThread` hears each thread once its data is complete (the next one began or
 * the input ended); a Gecko importer writes it then and lets its tables go.
 */
export class FirefoxCollector {
  readonly root: FirefoxProfileNode;
  private active: ActiveArray | null = null;
  /** Path elements before the profile: 0, or 1 for DevTools' "Recorded Performance Data" wrapper. */
  private rootPrefix = -1;
  private current: { node: FirefoxProfileNode; thread: FirefoxThread } | null = null;
  private topLevelObject = false;

  constructor(
    private readonly format: string,
    private readonly onThread: (node: FirefoxProfileNode, thread: FirefoxThread) => void,
  ) {
    this.root = new FirefoxProfileNode(null, 0);
  }

  /** The top-level value was an object (else the input is not a profile). */
  get sawObject(): boolean {
    return this.topLevelObject;
  }

  /** Whether the input was DevTools' recording wrapper around a Gecko profile. */
  get wrapped(): boolean {
    return this.rootPrefix === 1;
  }

  select = (path: JsonPath): "stream" | "materialize" | "skip" => {
    const active = this.active;
    if (active !== null) {
      if (path.length === active.depth + 1) {
        if (active.kind !== "markers") return "materialize";
        (active.scope as FirefoxThread).markerRows++;
        return "skip";
      }
      // Parsing has moved on: the array ended.
      if (path.length <= active.depth) this.active = null;
    }
    if (path.length === 0) return "stream";
    if (path.length === 1 && typeof path[0] === "string") this.topLevelObject = true;
    const at = this.locate(path);
    if (at === null) return "skip";
    const { node, i } = at;
    const rest = path.length - i;
    if (rest === 0) return "stream"; // a nested process's profile
    const key = path[i];
    if (key === "meta" || key === "libs" || key === "pausedRanges") {
      this.leaveThread(null, -1);
      return rest === 1 ? "materialize" : "skip";
    }
    if (key === "threads") {
      if (rest === 1) {
        this.leaveThread(null, -1);
        return "stream";
      }
      const index = path[i + 1];
      if (typeof index !== "number") return "skip";
      const thread = this.enterThread(node, index, 0);
      if (rest === 2) return "stream";
      return this.selectInScope(path, i + 2, thread, true);
    }
    if (key === "shared") {
      this.leaveThread(null, -1);
      if (rest === 1) return "stream";
      return this.selectInScope(path, i + 1, node.shared, false);
    }
    if (key === "processes") {
      this.leaveThread(null, -1);
      return rest === 1 ? "stream" : "skip";
    }
    if (rest === 1 && typeof key === "string" && UNREAD_KEYS.has(key)) node.unread.add(key);
    return "skip";
  };

  onValue = (path: JsonPath, value: JsonValue, offset: number): void => {
    const active = this.active;
    if (active !== null && path.length === active.depth + 1) {
      if (active.kind === "column") active.table!.pushTo(active.column!, active.columnName, active.columnKind, value, offset);
      else if (active.kind === "rows") active.table!.pushRow(value, offset);
      else if (active.kind === "strings") this.pushString(active.scope, active.columnName, value, offset);
      return;
    }
    if (path.length === 0) throw new EvidenceParseError(this.format, "the top-level value is not an object", { offset });
    const at = this.locate(path);
    if (at === null) return;
    const { node, i } = at;
    const rest = path.length - i;
    if (rest === 0) throw new EvidenceParseError(this.format, "a process's profile is not an object", { offset });
    const key = path[i];
    if (rest === 1) {
      if (key === "meta") {
        if (!isJsonObject(value)) throw new EvidenceParseError(this.format, "meta is not an object", { offset });
        node.meta = value;
        node.metaOffset = offset;
      } else if (key === "libs") node.libs = Array.isArray(value) ? value : null;
      else if (key === "pausedRanges") node.pausedRanges = Array.isArray(value) ? value : null;
      else if (key === "threads" || key === "processes" || key === "shared") throw new EvidenceParseError(this.format, `${key} is not ${key === "shared" ? "an object" : "an array"}`, { offset });
      return;
    }
    if (key === "threads") {
      const index = path[i + 1] as number;
      const thread = this.enterThread(node, index, offset);
      if (rest === 2) {
        // Gecko profiles before version 5 embedded other processes as JSON strings here.
        throw new EvidenceParseError(this.format, typeof value === "string" ? "a thread is a string (an embedded process of a Gecko profile older than version 5)" : "a thread is not an object", { offset });
      }
      this.valueInScope(path, i + 2, thread, value, offset, true);
    } else if (key === "shared") {
      this.valueInScope(path, i + 1, node.shared, value, offset, false);
    }
  };

  /** Ends the collection: the last thread is complete. */
  finish(): FirefoxProfileNode {
    this.leaveThread(null, -1);
    return this.root;
  }

  /** The profile a path is in and the index of its first element within that profile; null: outside any. */
  private locate(path: JsonPath): { node: FirefoxProfileNode; i: number } | null {
    if (this.rootPrefix < 0) {
      const top = path[0];
      if (top === "profile") this.rootPrefix = 1;
      else if (top === "meta" || top === "threads" || top === "shared" || top === "processes") this.rootPrefix = 0;
      else return null;
    }
    if (this.rootPrefix === 1 && path[0] !== "profile") return null;
    let node = this.root;
    let i = this.rootPrefix;
    while (path.length - i >= 2 && path[i] === "processes" && typeof path[i + 1] === "number") {
      const index = path[i + 1] as number;
      let child = node.children[index];
      if (!child) {
        this.leaveThread(null, -1);
        child = node.children[index] = new FirefoxProfileNode(node, 0);
      }
      node = child;
      i += 2;
    }
    return { node, i };
  }

  private enterThread(node: FirefoxProfileNode, index: number, offset: number): FirefoxThread {
    const current = this.current;
    if (current && current.node === node && current.thread.index === index) return current.thread;
    this.leaveThread(node, index);
    const thread = new FirefoxThread(index, Math.max(0, offset));
    this.current = { node, thread };
    return thread;
  }

  /** Completes the current thread unless it is (node, index). */
  private leaveThread(node: FirefoxProfileNode | null, index: number): void {
    const current = this.current;
    if (!current || (current.node === node && current.thread.index === index)) return;
    this.current = null;
    this.onThread(current.node, current.thread);
  }

  private selectInScope(path: JsonPath, i: number, scope: FirefoxScope, isThread: boolean): "stream" | "materialize" | "skip" {
    const rest = path.length - i;
    const key = path[i];
    if (typeof key !== "string") return "skip";
    if (STRING_TABLES.has(key)) {
      if (rest === 1) this.activate(path.length, "strings", null, null, key, "index", scope);
      return rest <= 2 ? "stream" : "skip";
    }
    if (isThread && rest === 1 && THREAD_FIELDS.has(key)) return "materialize";
    if (isThread && key === "markers") {
      // Counted, not read: a Gecko marker is a row of `data`, a processed table says its length.
      if (rest === 1) return "stream";
      if (path[i + 1] === "data" && rest === 2) {
        this.activate(path.length, "markers", null, null, "data", "index", scope);
        return "stream";
      }
      return rest === 2 && path[i + 1] === "length" ? "materialize" : "skip";
    }
    if (!Object.hasOwn(TABLE_COLUMNS, key)) return "skip";
    if (rest === 1) {
      if (!scope.tables.has(key)) scope.tables.set(key, new FirefoxTable(key, 0, this.format));
      return "stream";
    }
    const column = path[i + 1];
    if (column === "schema" || column === "length" || column === "weightType") return rest === 2 ? "materialize" : "skip";
    if (typeof column !== "string" || rest !== 2) return "skip";
    let table = scope.tables.get(key);
    if (!table) scope.tables.set(key, (table = new FirefoxTable(key, 0, this.format)));
    if (column === "data") {
      this.activate(path.length, "rows", table, null, column, "index", scope);
      return "stream";
    }
    const kept = table.keptColumn(column);
    if (!kept) return "skip";
    this.activate(path.length, "column", table, kept.column, column, kept.kind, scope);
    return "stream";
  }

  private activate(depth: number, kind: ActiveArray["kind"], table: FirefoxTable | null, column: Column | null, columnName: string, columnKind: ColumnKind, scope: FirefoxScope): void {
    this.active = { depth, kind, table, column, columnName, columnKind, scope };
  }

  private pushString(scope: FirefoxScope, key: string, value: JsonValue, offset: number): void {
    if (typeof value !== "string") throw new EvidenceParseError(this.format, `${key} holds a value that is not a string`, { offset });
    if (scope.strings === null) {
      scope.strings = [];
      scope.stringsOffset = offset;
    }
    scope.strings.push(value);
  }

  private valueInScope(path: JsonPath, i: number, scope: FirefoxScope, value: JsonValue, offset: number, isThread: boolean): void {
    const rest = path.length - i;
    const key = path[i] as string;
    if (STRING_TABLES.has(key)) {
      if (rest === 1) throw new EvidenceParseError(this.format, `${key} is not an array`, { offset });
      this.pushString(scope, key, value, offset);
      return;
    }
    if (isThread && rest === 1) {
      (scope as FirefoxThread).fields[key] = value;
      return;
    }
    if (isThread && key === "markers") {
      if (rest === 2 && path[i + 1] === "length" && typeof value === "number") (scope as FirefoxThread).markerLength = value;
      return;
    }
    if (rest === 1) throw new EvidenceParseError(this.format, `the ${key} is not an object`, { offset });
    let table = scope.tables.get(key);
    if (!table) scope.tables.set(key, (table = new FirefoxTable(key, offset, this.format)));
    const column = path[i + 1] as string;
    if (rest === 2) {
      if (column === "schema") table.setSchema(value, offset);
      else if (column === "length") {
        if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw new EvidenceParseError(this.format, `the ${key} length is not a count`, { offset });
        table.declaredLength = value;
      } else if (column === "weightType") {
        if (typeof value !== "string") throw new EvidenceParseError(this.format, `the ${key} weightType is not text`, { offset });
        table.weightType = value;
      } else if (column === "data") throw new EvidenceParseError(this.format, `the ${key} data is not an array`, { offset });
      // A column given as null (samples.weight: null) has no values.
      else if (value !== null) throw new EvidenceParseError(this.format, `${key}.${column} is not an array`, { offset });
      return;
    }
    // Elements of arrays come through the active array; nothing else is this deep.
  }
}

/** The kind a frame's category implies, if any: the Firefox Profiler's categories for idle, GC and kernel code. */
export function categoryKind(categoryNames: readonly string[], category: number): FrameKind | null {
  if (category < 0 || category >= categoryNames.length) return null;
  const name = categoryNames[category].toLowerCase();
  if (name === "idle") return "idle";
  if (name === "gc / cc" || name === "gc") return "gc";
  if (name === "kernel") return "kernel";
  return null;
}

/** The category names of a profile's meta (an empty list when it has none). */
export function categoryNames(meta: JsonObject | null): string[] {
  const categories = meta?.categories;
  if (!Array.isArray(categories)) return [];
  return categories.map((c) => (isJsonObject(c) && typeof c.name === "string" ? c.name : ""));
}

/** Whether a native library name is the kernel's (perf and simpleperf name it so). */
export function isKernelLibrary(name: string): boolean {
  return name === "[kernel.kallsyms]" || name.endsWith(".ko") || name === "[kernel]" || name === "kernel";
}

/**
 * Maps a table's stack indices to builder stacks: each stack is its prefix's plus one frame. A
 * stack deeper than the bound keeps its root-most frames (and a limitation says so); a prefix chain
 * that loops or names a stack beyond the table is an error.
 */
export class StackResolver {
  private readonly memo: Int32Array;
  private readonly depths: Int32Array;
  private readonly chain: number[] = [];

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly format: string,
    private readonly maxDepth: number,
    private readonly table: FirefoxTable,
    private readonly frameId: (frameIndex: number) => number,
  ) {
    const length = table.length;
    this.memo = new Int32Array(length).fill(-2);
    this.depths = new Int32Array(length);
  }

  get length(): number {
    return this.memo.length;
  }

  /** The builder stack of stack `index`; -1 for a null stack. */
  resolve(index: number): number {
    if (index < 0) return -1;
    const memo = this.memo;
    if (index >= memo.length) throw new EvidenceParseError(this.format, `a sample names stack ${index}, beyond the stack table's ${memo.length}`, { offset: this.table.offset });
    const known = memo[index];
    if (known !== -2) return known;
    const prefix = this.table.indexColumn("prefix");
    const frame = this.table.indexColumn("frame");
    const chain = this.chain;
    chain.length = 0;
    let at = index;
    while (at >= 0 && memo[at] === -2) {
      chain.push(at);
      if (chain.length > memo.length) throw new EvidenceParseError(this.format, `the prefixes of stack ${index} form a cycle`, { offset: this.table.offset });
      at = at < prefix.length ? prefix.get(at) : -1;
      if (at >= memo.length) throw new EvidenceParseError(this.format, `a stack's prefix is stack ${at}, beyond the stack table's ${memo.length}`, { offset: this.table.offset });
    }
    let parent = at >= 0 ? memo[at] : -1;
    let depth = at >= 0 ? this.depths[at] : -1;
    for (let k = chain.length - 1; k >= 0; k--) {
      const node = chain[k];
      if (depth + 1 >= this.maxDepth) {
        this.builder.limit("STACK_TRUNCATED", `Some stacks were deeper than ${this.maxDepth} frames; their leaf-most frames were dropped.`);
      } else {
        if (node >= frame.length) throw new EvidenceParseError(this.format, `stack ${node} has no frame`, { offset: this.table.offset });
        parent = this.builder.stack(parent < 0 ? null : parent, this.frameId(frame.get(node)));
        depth++;
      }
      memo[node] = parent;
      this.depths[node] = depth;
    }
    return parent;
  }
}

export interface ThreadSamples {
  trackId: number;
  /** Per sample, its builder stack (-1: an empty stack). */
  stacks: Int32Array;
  /** Per sample, its time in ms on the file's timeline; null when the samples have no times. */
  timesMs: Float64Array | null;
  /** Per sample, its weight; null: 1 each. */
  weights: Float64Array | null;
  weightType: string;
  /** Per sample, the thread's CPU time since the previous sample (threadCPUDelta), and its unit. */
  cpuDeltas: Float64Array | null;
  cpuUnit: string | null;
  intervalMs: number;
  /** When the profiler was paused (ms on the same timeline), sorted by start. */
  pauses: { start: number; end: number }[];
  /** Metric names for byte weights (samples' `bytes`, or an allocations table). */
  bytesMetric?: string;
  countMetric?: string;
  /** What a negative weight means in this table, when not a comparison profile's subtracted side. */
  negative?: { code: string; message: string };
}

const CHECKPOINT_EVERY = 16_384;

/**
 * Writes one thread's samples. By weightType: `samples` → samples (the weight, 1 by default),
 * wall_ns (see coveredWeights) and, from threadCPUDelta, cpu_ns (or cpu_cycles); `tracing-ms` →
 * wall_ns of the weight itself; `bytes` → the bytes metric (and a count). A sample with an empty
 * stack or a negative weight (a comparison profile's) is left out, and a limitation counts it.
 */
export async function writeThreadSamples(builder: EvidenceBuilder, format: string, input: ThreadSamples): Promise<void> {
  const { stacks, timesMs, weights, trackId } = input;
  const count = stacks.length;
  if (count === 0) return;
  const type = input.weightType;
  if (type !== "samples" && type !== "tracing-ms" && type !== "bytes") {
    throw new EvidenceParseError(format, "a samples table has a weightType other than samples, tracing-ms or bytes", { offset: 0 });
  }
  const samplesMetric = type === "samples" ? builder.metric({ name: "samples", unit: "count", kind: "sampled" }) : -1;
  const wallMetric = (type === "samples" && timesMs) || type === "tracing-ms" ? builder.metric({ name: "wall_ns", unit: "ns", kind: "temporal" }) : -1;
  const bytesMetric = type === "bytes" ? builder.metric({ name: input.bytesMetric ?? "alloc_bytes", unit: "bytes", kind: "sampled" }) : -1;
  const countMetric = type === "bytes" ? builder.metric({ name: input.countMetric ?? "alloc_count", unit: "count", kind: "sampled" }) : -1;
  const covered = type === "samples" && timesMs ? coveredWeights(timesMs, input.intervalMs, input.pauses) : null;
  const cpu = type === "samples" && input.cpuDeltas ? cpuWeights(builder, input.cpuDeltas, input.cpuUnit) : null;
  const cpuMetric = cpu ? builder.metric(cpu.metric) : -1;
  let empty = 0;
  let negative = 0;
  for (let k = 0; k < count; k++) {
    const stack = stacks[k];
    const weight = weights ? weights[k] : 1;
    if (stack < 0) {
      empty++;
      continue;
    }
    if (!(weight >= 0)) {
      negative++;
      continue;
    }
    const time = timesMs ? timesMs[k] * 1e6 : null;
    if (type === "samples") {
      builder.sample(stack, trackId, time, samplesMetric, weight);
      if (covered) builder.sample(stack, trackId, time, wallMetric, covered[k] * 1e6);
      if (cpu && cpu.values[k] > 0) builder.sample(stack, trackId, time, cpuMetric, cpu.values[k]);
    } else if (type === "tracing-ms") {
      builder.sample(stack, trackId, time, wallMetric, weight * 1e6);
    } else {
      builder.sample(stack, trackId, time, bytesMetric, weight);
      builder.sample(stack, trackId, time, countMetric, 1);
    }
    if (k % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await builder.checkpoint();
  }
  if (empty > 0) builder.limit("FIREFOX_EMPTY_STACKS", "Some samples had no stack (the thread ran no code the profiler could see); they were left out.", empty);
  if (negative > 0) {
    const { code, message } = input.negative ?? { code: "FIREFOX_NEGATIVE_WEIGHTS", message: "Some samples had a negative or missing weight (a comparison profile's subtracted side); they were left out." };
    builder.limit(code, message, negative);
  }
}

/**
 * Wall time per sample: from its time to the next sample's, counting each moment once (a sample
 * whose successor steps back in time covers nothing, and the next covers only what is new), and
 * ending where the profiler was paused. The last sample covers one interval.
 */
export function coveredWeights(timesMs: Float64Array, intervalMs: number, pauses: readonly { start: number; end: number }[]): Float64Array {
  const count = timesMs.length;
  const weights = new Float64Array(count);
  let coveredUntil = -Infinity;
  for (let k = 0; k < count; k++) {
    const start = Math.max(timesMs[k], coveredUntil);
    let end = k + 1 < count ? timesMs[k + 1] : timesMs[k] + intervalMs;
    if (pauses.length > 0) {
      const pause = firstPauseAfter(pauses, start);
      if (pause !== null && pause < end) end = pause;
    }
    if (end > start) {
      weights[k] = end - start;
      coveredUntil = end;
    }
  }
  return weights;
}

function firstPauseAfter(pauses: readonly { start: number; end: number }[], time: number): number | null {
  let low = 0;
  let high = pauses.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (pauses[mid].start <= time) low = mid + 1;
    else high = mid;
  }
  return low < pauses.length ? pauses[low].start : null;
}

/**
 * CPU time per sample from threadCPUDelta, whose value at sample k is the CPU the thread used since
 * sample k − 1: sample k is given the CPU used until the next sample (as wall time is), so the
 * first value, which has no previous sample, is not used and the last sample gets none.
 */
function cpuWeights(builder: EvidenceBuilder, deltas: Float64Array, unit: string | null): { metric: { name: string; unit: string; kind: "sampled" }; values: Float64Array } | null {
  const factor = unit === "ns" ? 1 : unit === "µs" || unit === "μs" ? 1000 : unit === "variable CPU cycles" ? 1 : null;
  if (factor === null) {
    builder.limit("FIREFOX_CPU_UNIT_UNKNOWN", "The profile's threadCPUDelta values have no known unit (meta.sampleUnits); CPU time was not imported.");
    return null;
  }
  const values = new Float64Array(deltas.length);
  let missing = 0;
  for (let k = 0; k + 1 < deltas.length; k++) {
    const delta = deltas[k + 1];
    if (!(delta >= 0)) {
      missing++;
      continue;
    }
    values[k] = delta * factor;
  }
  if (missing > 0) builder.limit("FIREFOX_CPU_DELTA_MISSING", "Some samples had no CPU delta; their CPU time is 0.", missing);
  const metric = unit === "variable CPU cycles" ? { name: "cpu_cycles", unit: "cycles", kind: "sampled" as const } : { name: "cpu_ns", unit: "ns", kind: "sampled" as const };
  return { metric, values };
}

/** Paused ranges of a profile or thread (`{startTime, endTime}` in ms, null for open ends), shifted and sorted. */
export function pausesOf(ranges: JsonValue[] | null | undefined, shiftMs: number): { start: number; end: number }[] {
  if (!Array.isArray(ranges)) return [];
  const out: { start: number; end: number }[] = [];
  for (const range of ranges) {
    if (!isJsonObject(range)) continue;
    const start = typeof range.startTime === "number" ? range.startTime + shiftMs : -Infinity;
    const end = typeof range.endTime === "number" ? range.endTime + shiftMs : Infinity;
    out.push({ start, end });
  }
  return out.sort((a, b) => a.start - b.start);
}

/** A thread's track: its process (pid, processName) and its own tid and name. */
export function threadTrack(builder: EvidenceBuilder, thread: FirefoxThread, fallbackProcess: string | null): number {
  const f = thread.fields;
  const text = (value: JsonValue | undefined) => (typeof value === "string" ? value : typeof value === "number" ? String(value) : null);
  const processName = text(f.processName) ?? fallbackProcess;
  return builder.track({
    processId: text(f.pid),
    processName,
    threadId: text(f.tid) ?? `#${thread.index}`,
    threadName: text(f.name),
    kind: "thread",
  });
}

/** A number from a meta field, or `fallback`. */
export function metaNumber(meta: JsonObject | null, key: string, fallback: number): number {
  const value = meta?.[key];
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

/** The unit meta.sampleUnits gives `key`, or null. */
export function sampleUnit(meta: JsonObject | null, key: string): string | null {
  const units = meta?.sampleUnits;
  return isJsonObject(units) && typeof units[key] === "string" ? (units[key] as string) : null;
}

/** Limitations for what a profile holds that is not imported. */
export function recordUnread(builder: EvidenceBuilder, node: FirefoxProfileNode, markers: number): void {
  if (markers > 0) builder.limit("FIREFOX_MARKERS_SKIPPED", "The profile's markers (intervals and events on each thread's timeline) were not imported.", markers);
  for (const key of node.unread) {
    if (key === "counters") builder.limit("FIREFOX_COUNTERS_SKIPPED", "The profile's counters (memory, power, bandwidth tracks) were not imported.");
    if (key === "profilerOverhead") builder.limit("FIREFOX_OVERHEAD_SKIPPED", "The profile's profiler-overhead samples were not imported.");
  }
}
