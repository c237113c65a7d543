import { writtenZeros } from "../io/bytes";
import { stableKey, stableKeyText, stableKeyWords } from "./hash";
import { MAX_SPAN_FLAME_NAMES, SpanFlameRecorder } from "./span-flame";
import { isInt64, outOfInt64Range } from "./int64";
import { AsciiBytes, TextCoder, TextDecoding, isCodedText, type CodedText } from "./text-coding";
import { col, FIELD_LIMITS, TABLES, type ColumnSpec, type EdgeKind, type FrameKind, type MetricKind, type TableName } from "./schema";

/**
 * Two staging tables that never become files: spans whose nesting is known only once the whole
 * input is read (traces) go out early as drafts (their text: name, args, …) and at the end as
 * places (ids, times, depth), so that millions of spans' strings do not wait in memory. Sinks
 * join them into `spans` by draft_id; every draft gets exactly one place.
 */
export const DRAFT_TABLES = {
  span_drafts: [
    col("draft_id", "BIGINT", false, "The importer's id for the span, joining it to its place."),
    col("name", "VARCHAR", false, "As spans.name."),
    col("category", "VARCHAR", true, "As spans.category."),
    col("status", "VARCHAR", true, "As spans.status."),
    col("args", "VARCHAR", true, "As spans.args."),
  ],
  span_places: [
    col("draft_id", "BIGINT", false, "The draft this places."),
    col("span_id", "BIGINT", false, "As spans.span_id."),
    col("track_id", "INTEGER", false, "As spans.track_id."),
    col("parent_span_id", "BIGINT", true, "As spans.parent_span_id."),
    col("start_ns", "BIGINT", false, "As spans.start_ns."),
    col("dur_ns", "BIGINT", false, "As spans.dur_ns."),
    col("depth", "INTEGER", false, "As spans.depth."),
  ],
} as const satisfies Record<string, ColumnSpec[]>;

export type StagingTableName = TableName | keyof typeof DRAFT_TABLES;
export const STAGING_TABLES: Record<StagingTableName, readonly ColumnSpec[]> = { ...TABLES, ...DRAFT_TABLES };

/**
 * A batch of rows of one table, column by column (same order as STAGING_TABLES[table]). Numeric
 * columns are Float64Arrays in which NaN stands for NULL (for nullable columns); text columns are
 * CodedText (see text-coding.ts), boolean columns plain arrays.
 */
export interface RowBatch {
  table: StagingTableName;
  columns: Record<string, ArrayLike<unknown> | CodedText>;
  length: number;
}

export function isNumericColumn(type: string): boolean {
  return type === "INTEGER" || type === "BIGINT" || type === "DOUBLE";
}

/** Where finished batches go: Parquet writers on the server, memory in tests and the browser. */
export interface BatchSink {
  write(batch: RowBatch): Promise<void> | void;
  /**
   * True when `write` copies whatever it keeps of a batch: once it resolves, the builder reuses
   * the batch's arrays for a later batch instead of making new ones. (A large array made anew is
   * fresh pages, a page fault each, and V8 counts it as new memory outside its heap: on a heap of
   * about 10 MB, a full mark-compact for every 15 MB or so of them.)
   */
  readonly copies?: boolean;
  /**
   * These staging tables will get no more rows, and the builder now derives its totals, which
   * may keep its thread busy for a second of a large import: a sink can write the tables out
   * meanwhile, best on one core. Not called when there are no totals to derive.
   */
  complete?(tables: StagingTableName[]): Promise<void> | void;
}

/** Tables the builder fills only in `finish`, from what the others hold. */
const DERIVED_TABLES: readonly StagingTableName[] = ["stack_totals", "frame_totals", "track_totals", "metrics"];

export interface FrameInput {
  name: string;
  file?: string | null;
  line?: number | null;
  col?: number | null;
  module?: string | null;
  kind: FrameKind;
  /** The mangled symbol when `name` is its demangled form (see analysis/symbols/demangle.ts). */
  mangledName?: string | null;
}

export interface MetricInput {
  name: string;
  unit: string;
  kind: MetricKind;
}

export interface TrackInput {
  processId?: string | number | null;
  processName?: string | null;
  threadId?: string | number | null;
  threadName?: string | null;
  kind: string;
}

export interface SpanInput {
  /** From allocateSpanId() when children must name the span before it ends; else assigned. */
  spanId?: number;
  trackId: number;
  parentSpanId?: number | null;
  name: string;
  category?: string | null;
  startNs: number;
  durNs: number;
  depth: number;
  status?: string | null;
  /** Serialized with a length bound. */
  args?: unknown;
}

export interface MeasurementInput {
  name: string;
  value: number;
  unit?: string | null;
  aggregation?: string | null;
  trialId?: string | null;
  isWarmup?: boolean;
  dimensions?: Record<string, unknown> | null;
}

export interface Limitation {
  code: string;
  message: string;
  count: number;
}

export interface EvidenceSummary {
  rows: Record<TableName, number>;
  limitations: Limitation[];
  /** Metadata an importer recorded (time origin, source units, …). */
  metadata: Record<string, string>;
}

export const DEFAULT_BATCH_ROWS = 65_536;
/** No field is bounded shorter than this. */
const SHORTEST_FIELD_LIMIT = Math.min(...Object.values(FIELD_LIMITS));
const DRAFT_NONE = 0;
const DRAFT_OPEN = 1;
const DRAFT_PLACED = 2;

class TableBuffer {
  private numeric: (Float64Array | null)[];
  /** Numeric columns of a batch the sink is done with (see BatchSink.copies), for the next reset. */
  private spare: (Float64Array | null)[] = [];
  private texts: (TextCoder | null)[];
  private other: (unknown[] | null)[];
  private capacity: number;
  length = 0;
  total = 0;
  constructor(
    readonly table: StagingTableName,
    private readonly initialCapacity: number,
  ) {
    this.capacity = initialCapacity;
    this.numeric = [];
    this.other = [];
    // A text column's coder keeps its dictionary from batch to batch.
    this.texts = STAGING_TABLES[table].map((c) => (c.type === "VARCHAR" ? new TextCoder(initialCapacity) : null));
    this.reset();
  }
  /** Starts empty at `capacity` rows: a table that filled a batch starts the next at its size. */
  private reset(capacity = this.initialCapacity): void {
    this.capacity = capacity;
    this.numeric = STAGING_TABLES[this.table].map((c, i) => {
      if (!isNumericColumn(c.type)) return null;
      const spare = this.spare[i];
      return spare && spare.length >= this.capacity ? spare : new Float64Array(this.capacity);
    });
    this.spare = [];
    this.other = STAGING_TABLES[this.table].map((c) => (isNumericColumn(c.type) || c.type === "VARCHAR" ? null : []));
  }
  private grow(): void {
    this.capacity *= 2;
    this.numeric = this.numeric.map((column) => {
      if (!column) return null;
      const bigger = new Float64Array(this.capacity);
      bigger.set(column);
      return bigger;
    });
  }
  /**
   * Appends a row and returns it: the caller writes its numeric cells into `column(i)[row]` and
   * pushes each of its text cells onto `text(i)`, so that no array is made per row.
   */
  reserve(): number {
    if (this.length === this.capacity) this.grow();
    this.total++;
    return this.length++;
  }
  column(index: number): Float64Array {
    return this.numeric[index]!;
  }
  text(index: number): TextCoder {
    return this.texts[index]!;
  }
  /** Appends a row of every column's value, in STAGING_TABLES order. */
  push(values: unknown[]): void {
    // A row short of a column would leave a reused array's old value in its cell.
    if (values.length !== this.numeric.length) throw new Error(`a ${this.table} row has ${values.length} values for ${this.numeric.length} columns`);
    if (this.length === this.capacity) this.grow();
    const at = this.length;
    for (let i = 0; i < values.length; i++) {
      const numeric = this.numeric[i];
      const value = values[i];
      if (numeric) numeric[at] = value === null || value === undefined ? NaN : (value as number);
      else if (this.texts[i]) this.texts[i]!.push(value as string | null);
      else this.other[i]!.push(value);
    }
    this.length++;
    this.total++;
  }
  take(): RowBatch {
    const specs = STAGING_TABLES[this.table];
    const columns = Object.fromEntries(specs.map((c, i) => [c.name, this.numeric[i] ? this.numeric[i]!.subarray(0, this.length) : this.texts[i] ? this.texts[i]!.take() : this.other[i]!]));
    const batch = { table: this.table, columns, length: this.length };
    this.length = 0;
    this.reset(this.capacity);
    return batch;
  }
  /**
   * Takes back a batch this buffer gave out, once its sink is done with it: its arrays are reused,
   * whole, by the next batch. Every row is written whole (`push` checks it, the callers of
   * `reserve` write every numeric cell), so a reused array needs no clearing.
   */
  recycle(batch: RowBatch): void {
    STAGING_TABLES[this.table].forEach((c, i) => {
      const column = batch.columns[c.name];
      if (column instanceof Float64Array) this.spare[i] = new Float64Array(column.buffer);
      else if (this.texts[i] && isCodedText(column)) this.texts[i]!.recycle(column);
    });
  }
}

/**
 * The next capacity of a growing per-node array: half as large again (not twice: at the peak of a
 * tree of tens of millions of nodes, doubling leaves up to half of every such array unused, and
 * holds old and new, three times the data, while it copies), and at least `needed`.
 */
export function grownCapacity(current: number, needed: number, least = 1024): number {
  return Math.max(needed, least, current + (current >> 1));
}

/** A growable column of int32 values. */
export class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(grownCapacity(this.data.length, this.length + 1));
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
}

/** A growable column of bytes (flags, one a node). */
class ByteList {
  data = new Uint8Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Uint8Array(grownCapacity(this.data.length, this.length + 1));
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
}

/**
 * A growable column of numbers: int32 storage while every value fits, widening to float64 at the
 * first value that does not. Millions of samples stay a few bytes each instead of a JS array slot.
 */
export class NumberColumn {
  private data: Int32Array | Float64Array = new Int32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) this.resize(this.data.length * 2);
    if (this.data instanceof Int32Array && (value | 0) !== value) this.widen();
    this.data[this.length++] = value;
  }

  get(index: number): number {
    return this.data[index];
  }

  /** The values so far, without copying (valid until the next push; int32 or float64 storage). */
  view(): Int32Array | Float64Array {
    return this.data.subarray(0, this.length);
  }

  set(index: number, value: number): void {
    if (this.data instanceof Int32Array && (value | 0) !== value) this.widen();
    this.data[index] = value;
  }

  private resize(capacity: number): void {
    const grown = this.data instanceof Int32Array ? new Int32Array(capacity) : new Float64Array(capacity);
    grown.set(this.data.subarray(0, this.length));
    this.data = grown;
  }

  private widen(): void {
    const wide = new Float64Array(this.data.length);
    wide.set(this.data.subarray(0, this.length));
    this.data = wide;
  }
}

/** Child pairs (frame + 1, child node) kept in each node's own record before its children overflow. */
const INLINE_CHILDREN = 3;
const RECORD_INTS = INLINE_CHILDREN * 2;

/**
 * The stack prefix tree's child lookup, (parent node, frame) → child node. A node that has
 * children has a record of its first INLINE_CHILDREN of them; further children go to an
 * open-addressing table by hash. Records, unlike hashed slots, sit in the order their nodes got a
 * first child: shallow nodes come first, so the hot top of the tree shares a few cache lines, a
 * new node's children are written next to the records last written, and growing is a copy instead
 * of a re-hash. (Parse of the 220 MB folded benchmark: 1.2 s of self CPU in stack building, against
 * 3.8 s with one hash table of every node.) A node without children (most are leaves or on a
 * single path) costs only its entry in `recordOf`: records by node id took 24 bytes of every node,
 * 805 MB of the 2 GB peak RSS of an 18 M-node tree (a 1 GB Instruments deep copy).
 */
export class StackChildren {
  /** Per node id + 1 (0: the roots), its record's number + 1, or 0 while it has no children. */
  private recordOf = new Int32Array(1024);
  /** RECORD_INTS int32s per record: (frame + 1, child) pairs, frame 0 = empty. */
  private records = new Int32Array(RECORD_INTS * 1024);
  private recordCount = 0;
  /** Overflow slots of four int32s: child + 1 (0: empty), parent, frame, unused. */
  private slots = new Int32Array(4 * 1024);
  private overflowCount = 0;
  private released = false;

  /** The child of `parent` (-1: the roots) with `frame`; when there is none, `newChild` becomes it. */
  childOrAdd(parent: number, frame: number, newChild: number): number {
    if (parent + 1 >= this.recordOf.length) this.growRecordOf(parent + 2);
    const number = this.recordOf[parent + 1];
    if (number === 0) {
      // The parent's first child: a new record, at the end.
      const record = this.recordCount * RECORD_INTS;
      if (record + RECORD_INTS > this.records.length) this.growRecords(record + RECORD_INTS);
      this.recordOf[parent + 1] = ++this.recordCount;
      this.records[record] = frame + 1;
      this.records[record + 1] = newChild;
      return newChild;
    }
    const records = this.records;
    const record = (number - 1) * RECORD_INTS;
    for (let at = record; at < record + RECORD_INTS; at += 2) {
      const entry = records[at];
      if (entry === frame + 1) return records[at + 1];
      if (entry === 0) {
        records[at] = frame + 1;
        records[at + 1] = newChild;
        return newChild;
      }
    }
    return this.overflowChildOrAdd(parent, frame, newChild);
  }

  /** Frees the lookup; a later childOrAdd throws (the tables start at length 0, so it lands in a grow). */
  release(): void {
    this.recordOf = new Int32Array(0);
    this.records = new Int32Array(0);
    this.recordCount = 0;
    this.slots = new Int32Array(4);
    this.released = true;
  }

  private growRecordOf(needed: number): void {
    if (this.released) throw new Error("no stack can be added once the evidence is finished");
    const grown = writtenZeros(new Int32Array(grownCapacity(this.recordOf.length, needed)), this.recordOf.length);
    grown.set(this.recordOf);
    this.recordOf = grown;
  }

  private growRecords(needed: number): void {
    if (this.released) throw new Error("no stack can be added once the evidence is finished");
    const length = RECORD_INTS * grownCapacity(this.records.length / RECORD_INTS, Math.ceil(needed / RECORD_INTS));
    // Not written ahead (unlike recordOf): a record's slots are read only once its first pair is
    // written, on the same page but at a page's end, so the capacity not yet used stays unmapped.
    const grown = new Int32Array(length);
    grown.set(this.records);
    this.records = grown;
  }

  private overflowChildOrAdd(parent: number, frame: number, newChild: number): number {
    const slots = this.slots;
    const mask = (slots.length >> 2) - 1;
    let slot = stackSlot(parent, frame) & mask;
    for (let entry = slots[slot << 2]; entry !== 0; entry = slots[slot << 2]) {
      if (slots[(slot << 2) + 1] === parent && slots[(slot << 2) + 2] === frame) return entry - 1;
      slot = (slot + 1) & mask;
    }
    slots[slot << 2] = newChild + 1;
    slots[(slot << 2) + 1] = parent;
    slots[(slot << 2) + 2] = frame;
    if (++this.overflowCount * 2 > mask + 1) this.growSlots();
    return newChild;
  }

  /**
   * Twice the slots. The old table is walked in slot order: an entry at slot s moves to s or
   * s + old size (or just past, by probing), so the writes run nearly sequentially.
   */
  private growSlots(): void {
    const old = this.slots;
    const slots = (this.slots = writtenZeros(new Int32Array(old.length * 2)));
    const mask = (slots.length >> 2) - 1;
    for (let from = 0; from < old.length; from += 4) {
      if (old[from] === 0) continue;
      const parent = old[from + 1];
      const frame = old[from + 2];
      let at = stackSlot(parent, frame) & mask;
      while (slots[at << 2] !== 0) at = (at + 1) & mask;
      slots[at << 2] = old[from];
      slots[(at << 2) + 1] = parent;
      slots[(at << 2) + 2] = frame;
    }
  }
}

/**
 * Builds one generation of normalized evidence. Frames, stacks, metrics and tracks are interned
 * (deduplicated) and written at finish(); samples, spans, edges and measurements stream out in
 * batches whenever an importer awaits checkpoint(), so memory stays bounded for huge inputs.
 */
export class EvidenceBuilder {
  private readonly frameIds = new FrameKeys();
  // The stack prefix tree: per node its parent (-1 at a root), frame and depth, and where to find
  // its children (StackChildren), so millions of nodes stay typed arrays.
  private readonly stackParent = new IntList();
  private readonly stackFrame = new IntList();
  private readonly stackDepth = new IntList();
  /** Per node, whether its frame is outermost on its path, as stack()'s callers said (see stack); shorter than the nodes when some node came without it. */
  private readonly saidOutermost = new ByteList();
  private readonly stackChildren = new StackChildren();
  /**
   * Per metric: summed sample value by leaf stack id (for the derived totals tables); int32 while
   * every sum is one (counts, most weights), widened to float64 at the first that is not.
   */
  private readonly selfByMetric: (Int32Array | Float64Array)[] = [];
  private readonly metricIds = new Map<string, number>();
  private readonly metricRows: unknown[][] = [];
  private readonly metricStats: { total: number; count: number; first: number | null; last: number | null }[] = [];
  /** Per metric, per track id + 1 (0: no track): sample rows and summed value (track_totals). */
  private readonly trackCounts: Float64Array[] = [];
  private readonly trackValues: Float64Array[] = [];
  private readonly trackIds = new Map<string, number>();
  private readonly trackRows: (string | null)[][] = [];
  private readonly limitations = new Map<string, Limitation>();
  private readonly buffers: Record<StagingTableName, TableBuffer>;
  private nextSpanId = 0;
  /** Per draft id: none, drafted, or placed. Each draft is placed exactly once, so sinks join them one to one. */
  private draftStates = new Uint8Array(1024);
  private openDrafts = 0;
  /** Every span's name, parent, track and duration, for a flame graph of spans should no sample come (see span-flame.ts). */
  private readonly spanFlame = new SpanFlameRecorder();
  readonly metadata: Record<string, string> = {};

  constructor(
    private readonly sink: BatchSink,
    private readonly batchRows = DEFAULT_BATCH_ROWS,
    /** The input's format, named by errors about values no int64 cell holds (see int64.ts). */
    private readonly format = "evidence",
  ) {
    const capacity = Math.min(batchRows, 4096);
    this.buffers = Object.fromEntries(Object.keys(STAGING_TABLES).map((t) => [t, new TableBuffer(t as StagingTableName, capacity)])) as Record<StagingTableName, TableBuffer>;
  }

  /** Records a limitation (deduplicated by code; `count` occurrences are added to its count). */
  limit(code: string, message: string, count = 1): void {
    const existing = this.limitations.get(code);
    if (existing) existing.count += count;
    else this.limitations.set(code, { code, message, count });
  }

  /**
   * Cuts an observed string to its bound, reporting the cut. The cut is by characters, so JSON
   * text (span args) may need its own structure-aware bound first (see otlp-json).
   */
  bound(value: string, field: keyof typeof FIELD_LIMITS): string;
  bound(value: string | null | undefined, field: keyof typeof FIELD_LIMITS): string | null;
  bound(value: string | null | undefined, field: keyof typeof FIELD_LIMITS): string | null {
    if (value === null || value === undefined) return null;
    // Most values are short: no need to look up their field's bound (a lookup by a key that
    // varies, which a trace's millions of span drafts paid three times each).
    if (value.length <= SHORTEST_FIELD_LIMIT) return value;
    const max = FIELD_LIMITS[field];
    if (value.length <= max) return value;
    this.limit("FIELD_TRUNCATED", `Some ${field} values were longer than ${max} characters and were cut.`);
    return value.slice(0, max);
  }

  frame(input: FrameInput): number {
    const name = this.bound(input.name, "name");
    const file = this.bound(input.file, "file");
    const module = this.bound(input.module, "module");
    // Lines and columns are INTEGER columns; a producer's fractional value is rounded.
    const line = integerOrNull(input.line);
    const col = integerOrNull(input.col);
    frameKeyWords(name, file, line, module, input.kind, keyWords);
    const known = this.frameIds.find(keyWords[0], keyWords[1]);
    if (known >= 0) return known;
    const id = this.frameIds.add(keyWords[0], keyWords[1]);
    const key = stableKeyText(keyWords[0], keyWords[1]);
    // The key is the demangled name's: a frame keeps its identity across builds whose hashes differ (Rust).
    this.buffers.frames.push([id, key, name, file, line, col, module, input.kind, this.bound(input.mangledName, "name")]);
    return id;
  }

  /**
   * The prefix-tree node for `frameId` under `parentStackId` (null: a root). A caller that walks
   * whole paths may say whether `frameId` is absent from the path above (`outermost`), which frame
   * totals need: when every node came with it, finish() need not work it out.
   */
  stack(parentStackId: number | null, frameId: number, outermost?: boolean): number {
    const parent = parentStackId === null ? -1 : parentStackId;
    const id = this.stackParent.length;
    const known = this.stackChildren.childOrAdd(parent, frameId, id);
    if (known !== id) return known;
    const depth = parent < 0 ? 0 : this.stackDepth.data[parent] + 1;
    this.stackParent.push(parent);
    this.stackFrame.push(frameId);
    this.stackDepth.push(depth);
    if (outermost !== undefined) this.saidOutermost.push(outermost ? 1 : 0);
    const stacks = this.buffers.stacks;
    const row = stacks.reserve();
    stacks.column(0)[row] = id;
    stacks.column(1)[row] = parent < 0 ? NaN : parent;
    stacks.column(2)[row] = frameId;
    stacks.column(3)[row] = depth;
    return id;
  }

  /** The leaf stack node of a root-first list of frame ids; null for an empty list. */
  stackOf(frameIdsRootFirst: readonly number[]): number | null {
    let stack: number | null = null;
    for (const frameId of frameIdsRootFirst) stack = this.stack(stack, frameId);
    return stack;
  }

  metric(input: MetricInput): number {
    const known = this.metricIds.get(input.name);
    if (known !== undefined) return known;
    const id = this.metricIds.size;
    this.metricIds.set(input.name, id);
    this.metricRows.push([id, input.name, input.unit, input.kind]);
    this.metricStats.push({ total: 0, count: 0, first: null, last: null });
    return id;
  }

  track(input: TrackInput): number {
    const pid = input.processId === null || input.processId === undefined ? null : String(input.processId);
    const tid = input.threadId === null || input.threadId === undefined ? null : String(input.threadId);
    const key = `${pid}\u0000${tid}\u0000${input.kind}`;
    const known = this.trackIds.get(key);
    if (known !== undefined) {
      this.nameTrack(known, input);
      return known;
    }
    const id = this.trackIds.size;
    this.trackIds.set(key, id);
    this.trackRows.push([pid, this.bound(input.processName, "other"), tid, this.bound(input.threadName, "other"), input.kind]);
    return id;
  }

  /** Fills in process/thread names learned later (e.g. Chrome's M events). */
  nameTrack(trackId: number, names: { processName?: string | null; threadName?: string | null }): void {
    const row = this.trackRows[trackId];
    if (names.processName) row[1] = this.bound(names.processName, "other");
    if (names.threadName) row[3] = this.bound(names.threadName, "other");
  }

  get trackCount(): number {
    return this.trackRows.length;
  }

  /** Stack nodes so far; ids run from 0 to this, less one. */
  get stackCount(): number {
    return this.stackParent.length;
  }

  sample(stackId: number, trackId: number | null, timeNs: number | null, metricId: number, value: number): void {
    let self = this.selfByMetric[metricId];
    if (self === undefined || stackId >= self.length) {
      // As long as the tree's own columns: they grow together.
      const length = Math.max(stackId + 1, this.stackParent.data.length);
      const grown = writtenZeros(self instanceof Float64Array ? new Float64Array(length) : new Int32Array(length), self?.length ?? 0);
      if (self) grown.set(self);
      self = this.selfByMetric[metricId] = grown;
    }
    const sum = self[stackId] + value;
    if (self instanceof Int32Array && (sum | 0) !== sum) {
      const wide = new Float64Array(self.length);
      wide.set(self);
      self = this.selfByMetric[metricId] = wide;
    }
    self[stackId] = sum;
    const stats = this.metricStats[metricId];
    stats.total += value;
    stats.count++;
    if (timeNs !== null) {
      if (stats.first === null || timeNs < stats.first) stats.first = timeNs;
      if (stats.last === null || timeNs > stats.last) stats.last = timeNs;
    }
    const time = timeNs === null ? NaN : Math.round(timeNs);
    const rounded = Math.round(value);
    if ((timeNs !== null && !isInt64(time)) || !isInt64(rounded)) this.outOfRange(timeNs !== null && !isInt64(time) ? "samples.time_ns" : "samples.value");
    // The stored value, as a scan of the samples would sum it.
    this.countOnTrack(metricId, trackId === null ? 0 : trackId + 1, rounded);
    const samples = this.buffers.samples;
    const row = samples.reserve();
    samples.column(0)[row] = stackId;
    samples.column(1)[row] = trackId === null ? NaN : trackId;
    samples.column(2)[row] = time;
    samples.column(3)[row] = metricId;
    samples.column(4)[row] = rounded;
  }

  private countOnTrack(metricId: number, slot: number, value: number): void {
    let counts = this.trackCounts[metricId];
    if (counts === undefined || slot >= counts.length) {
      const length = Math.max(slot + 1, 2 * (counts?.length ?? 4));
      const values = new Float64Array(length);
      counts = new Float64Array(length);
      if (this.trackCounts[metricId]) {
        counts.set(this.trackCounts[metricId]);
        values.set(this.trackValues[metricId]);
      }
      this.trackCounts[metricId] = counts;
      this.trackValues[metricId] = values;
    }
    counts[slot]++;
    this.trackValues[metricId][slot] += value;
  }

  /** A value for an int64 column that none holds: the import fails as for malformed input (the importer did not name its field). */
  private outOfRange(column: string): never {
    throw outOfInt64Range(this.format, column);
  }

  allocateSpanId(): number {
    return this.nextSpanId++;
  }

  private argsText(args: unknown): string | null {
    if (args === undefined || args === null) return null;
    if (args instanceof AsciiBytes) return this.bound(args.text(), "args");
    return this.bound(typeof args === "string" ? args : JSON.stringify(args), "args");
  }

  span(input: SpanInput): number {
    const id = input.spanId ?? this.allocateSpanId();
    const args = this.argsText(input.args);
    const start = Math.round(input.startNs);
    const dur = Math.max(0, Math.round(input.durNs));
    if (!isInt64(start) || !isInt64(dur)) this.outOfRange(isInt64(start) ? "spans.dur_ns" : "spans.start_ns");
    this.spanFlame.span(id, input.name, input.parentSpanId ?? null, input.trackId, dur);
    this.buffers.spans.push([
      id,
      input.trackId,
      input.parentSpanId ?? null,
      this.bound(input.name, "name"),
      this.bound(input.category, "category"),
      start,
      dur,
      input.depth,
      input.status ?? null,
      args,
    ]);
    return id;
  }

  /**
   * A span's text, before its place is known (see DRAFT_TABLES); `draftId` is the importer's own.
   * `args`: an object, its JSON text, or that text as it lies in the input (AsciiBytes).
   */
  spanDraft(draftId: number, input: { name: string; category?: string | null; status?: string | null; args?: unknown }): void {
    if (this.draftState(draftId) !== DRAFT_NONE) throw new Error(`span draft ${draftId} was drafted twice`);
    this.draftStates[draftId] = DRAFT_OPEN;
    this.openDrafts++;
    this.spanFlame.draft(draftId, input.name);
    // Cell by cell, as places are: a trace drafts millions of spans.
    const drafts = this.buffers.span_drafts;
    const row = drafts.reserve();
    drafts.column(0)[row] = draftId;
    drafts.text(1).push(this.bound(input.name, "name"));
    drafts.text(2).push(this.bound(input.category, "category"));
    drafts.text(3).push(input.status ?? null);
    // Args within their bound as they lie in the input go in without a string made of them.
    if (input.args instanceof AsciiBytes && input.args.length <= FIELD_LIMITS.args) drafts.text(4).pushAscii(input.args);
    else drafts.text(4).push(this.argsText(input.args));
  }

  /** The place of a drafted span: its id, track, parent, times and depth. */
  placeSpan(draftId: number, place: { spanId: number; trackId: number; parentSpanId: number | null; startNs: number; durNs: number; depth: number }): void {
    if (this.draftState(draftId) !== DRAFT_OPEN) throw new Error(`span ${draftId} placed without a draft, or twice`);
    const start = Math.round(place.startNs);
    const dur = Math.max(0, Math.round(place.durNs));
    if (!isInt64(start) || !isInt64(dur)) this.outOfRange(isInt64(start) ? "spans.dur_ns" : "spans.start_ns");
    this.draftStates[draftId] = DRAFT_PLACED;
    this.openDrafts--;
    // Written into the columns, as samples are: a trace places millions of spans in a row at its end.
    const places = this.buffers.span_places;
    const row = places.reserve();
    places.column(0)[row] = draftId;
    places.column(1)[row] = place.spanId;
    places.column(2)[row] = place.trackId;
    places.column(3)[row] = place.parentSpanId ?? NaN;
    places.column(4)[row] = start;
    places.column(5)[row] = dur;
    places.column(6)[row] = place.depth;
    this.spanFlame.placeDraft(draftId, place.spanId, place.parentSpanId, place.trackId, dur);
  }

  /** Where a draft id stands; ids are the importer's own, non-negative integers below 2^31. */
  private draftState(draftId: number): number {
    if (!Number.isInteger(draftId) || draftId < 0 || draftId > 2 ** 31 - 1) throw new Error(`span draft id ${draftId} is not an integer in [0, 2^31)`);
    if (draftId >= this.draftStates.length) {
      const grown = writtenZeros(new Uint8Array(Math.max(draftId + 1, this.draftStates.length * 2)), this.draftStates.length);
      grown.set(this.draftStates);
      this.draftStates = grown;
    }
    return this.draftStates[draftId];
  }

  edge(fromSpanId: number, toSpanId: number, kind: EdgeKind): void {
    this.buffers.edges.push([fromSpanId, toSpanId, kind]);
  }

  measurement(input: MeasurementInput): void {
    this.buffers.measurements.push([
      this.bound(input.name, "name"),
      input.value,
      input.unit ?? null,
      input.aggregation ?? null,
      input.trialId ?? null,
      input.isWarmup ?? false,
      input.dimensions ? this.bound(JSON.stringify(input.dimensions), "args") : null,
    ]);
  }

  /** Hands every full batch of the streaming tables to the sink. Importers await it between input chunks. */
  async checkpoint(): Promise<void> {
    for (const table of ["samples", "spans", "edges", "measurements", "stacks", "frames", "stack_totals", "frame_totals", "span_drafts", "span_places"] as const) {
      const buffer = this.buffers[table];
      if (buffer.length < this.batchRows) continue;
      // Sinks join places to drafts as they come: every draft goes out before any later place.
      if (table === "span_places" && this.buffers.span_drafts.length > 0) await this.send(this.buffers.span_drafts);
      await this.send(buffer);
    }
  }

  /** Hands the buffer's rows to the sink as a batch, and takes its arrays back if the sink copies them. */
  private async send(buffer: TableBuffer): Promise<void> {
    const batch = buffer.take();
    await this.sink.write(batch);
    if (this.sink.copies) buffer.recycle(batch);
  }

  /**
   * Per metric, inclusive totals per stack node and self/total per frame. Stack ids are assigned
   * parent-first, so one reverse pass accumulates subtrees. A frame's total sums its outermost
   * occurrences only, so recursion counts a sample once. Totals rows go out batch by batch: a
   * node per row, they would otherwise all wait in memory (3.7 M rows, 120 MB, for 220 MB of
   * folded stacks).
   */
  private async deriveTotals(): Promise<void> {
    const nodes = this.stackParent.length;
    const stackParent = this.stackParent.data;
    const stackFrame = this.stackFrame.data;
    const frames = this.frameIds.size;
    const metrics = this.selfByMetric.map((self, metricId) => ({ self, metricId })).filter(({ self }) => self !== undefined);
    if (metrics.length === 0) return;
    // 0.4 s for the 3.7 M nodes of the 220 MB folded benchmark, unless the importer said it.
    // Said of every node, the list is one entry per node in id order.
    const outermost = this.saidOutermost.length === nodes ? this.saidOutermost.data : outermostNodes(stackParent, stackFrame, this.stackDepth.data, nodes, frames);
    const rows = Math.min(this.batchRows, nodes);
    // Rows go straight into a batch's columns: a node per row, millions of them, and through the
    // generic row buffer they cost about twice as much.
    const newBatch = () => ({ stackId: new Float64Array(rows), self: new Float64Array(rows), total: new Float64Array(rows) });
    const send = async (batch: ReturnType<typeof newBatch>, length: number, metricId: number) => {
      this.buffers.stack_totals.total += length;
      const columns = { stack_id: batch.stackId.subarray(0, length), metric_id: new Float64Array(length).fill(metricId), self: batch.self.subarray(0, length), total: batch.total.subarray(0, length) };
      await this.sink.write({ table: "stack_totals", columns, length });
    };
    for (const { self: selfByStack, metricId } of metrics) {
      const selfKnown = Math.min(nodes, selfByStack.length);
      const total = writtenZeros(new Float64Array(nodes), selfKnown);
      total.set(selfByStack.subarray(0, selfKnown));
      for (let id = nodes - 1; id >= 0; id--) {
        const parent = stackParent[id];
        if (parent >= 0) total[parent] += total[id];
      }
      const frameSelf = new Float64Array(frames);
      const frameTotal = new Float64Array(frames);
      const frameSeen = new Uint8Array(frames);
      let batch = newBatch();
      let row = 0;
      for (let id = 0; id < nodes; id++) {
        const inclusive = total[id];
        if (inclusive === 0) continue;
        const self = id < selfByStack.length ? selfByStack[id] : 0;
        batch.stackId[row] = id;
        batch.self[row] = self;
        batch.total[row] = inclusive;
        if (++row === rows) {
          await send(batch, row, metricId);
          if (!this.sink.copies) batch = newBatch();
          row = 0;
        }
        const frame = stackFrame[id];
        frameSeen[frame] = 1;
        frameSelf[frame] += self;
        if (outermost[id]) frameTotal[frame] += inclusive;
      }
      if (row > 0) await send(batch, row, metricId);
      // In batches, as the stack totals: one batch of every frame (5.4 M rows for a 1 GB callgrind
      // file) grew its columns to 256 MB and went to the writer as a copy, at the import's peak.
      const frameTotals = this.buffers.frame_totals;
      for (let frame = 0; frame < frames; frame++) {
        if (!frameSeen[frame]) continue;
        frameTotals.push([frame, metricId, frameSelf[frame], frameTotal[frame]]);
        if (frameTotals.length >= this.batchRows) await this.send(frameTotals);
      }
    }
  }

  /** Whether any sample row was written (derived ones included). */
  get hasSamples(): boolean {
    return this.buffers.samples.total > 0;
  }

  /** Whether the import yielded anything to look at: samples, spans or measurements. */
  get hasEvidence(): boolean {
    return this.hasSamples || this.buffers.spans.total + this.buffers.span_places.total + this.buffers.measurements.total > 0;
  }

  /** The limitations recorded so far. */
  get limitationList(): Limitation[] {
    return [...this.limitations.values()];
  }

  /** Spans without any sample get a flame graph of their own (see span-flame.ts). */
  private deriveSpanSamples(): void {
    const recorder = this.spanFlame;
    if (this.hasSamples) {
      recorder.release();
      return;
    }
    if (recorder.overflowed) {
      this.limit("SPAN_FLAME_TOO_MANY_NAMES", `The input has no samples, and its spans have more than ${MAX_SPAN_FLAME_NAMES} distinct names: no flame graph was derived from them.`);
      return;
    }
    if (recorder.count === 0) return;
    if (recorder.derive(this) > 0) this.metadata.wall_ns_source = "spans: self time (duration minus the children's on the same track) by the path of span names";
  }

  /** Writes everything still buffered and returns row counts and limitations. */
  async finish(): Promise<EvidenceSummary> {
    if (this.openDrafts !== 0) throw new Error(`${this.openDrafts} span drafts were never placed`);
    this.deriveSpanSamples();
    // No stack is added after this point: the child lookup's memory goes before the totals' comes.
    this.stackChildren.release();
    this.trackRows.forEach((row, id) => this.buffers.tracks.push([id, ...row]));
    const complete = (Object.keys(this.buffers) as StagingTableName[]).filter((t) => !DERIVED_TABLES.includes(t));
    for (const table of complete) {
      const buffer = this.buffers[table];
      if (buffer.length > 0) await this.send(buffer);
    }
    if (this.stackParent.length > 0 && this.selfByMetric.some((self) => self !== undefined)) await this.sink.complete?.(complete);
    await this.deriveTotals();
    this.trackCounts.forEach((counts, metricId) => {
      const values = this.trackValues[metricId];
      for (let slot = 0; slot < counts.length; slot++) {
        if (counts[slot] > 0) this.buffers.track_totals.push([slot === 0 ? null : slot - 1, metricId, counts[slot], values[slot]]);
      }
    });
    this.metricRows.forEach((row, id) => {
      const stats = this.metricStats[id];
      this.buffers.metrics.push([...row, stats.total, stats.count, stats.first === null ? null : Math.round(stats.first), stats.last === null ? null : Math.round(stats.last)]);
    });
    for (const table of DERIVED_TABLES) {
      const buffer = this.buffers[table];
      if (buffer.length > 0) await this.send(buffer);
    }
    const rows = Object.fromEntries(Object.keys(TABLES).map((t) => [t, this.buffers[t as TableName].total])) as Record<TableName, number>;
    rows.spans += this.buffers.span_places.total;
    return { rows, limitations: [...this.limitations.values()], metadata: this.metadata };
  }
}

/**
 * A frame's stable key (frames.frame_key): the hash of its fields, as bounded. Frames with the same
 * key are one frame, whatever texts they came from.
 */
function frameKeyOf(name: string, file: string | null, line: number | null, module: string | null, kind: FrameKind): string {
  return stableKey(frameKeyInput(name, file, line, module, kind));
}

function frameKeyInput(name: string, file: string | null, line: number | null, module: string | null, kind: FrameKind): string {
  return `${name}\u0000${file ?? ""}\u0000${line ?? ""}\u0000${module ?? ""}\u0000${kind}`;
}

/** frameKeyOf's key as its two words (see stableKeyWords), into `out`. */
function frameKeyWords(name: string, file: string | null, line: number | null, module: string | null, kind: FrameKind, out: Int32Array): void {
  stableKeyWords(frameKeyInput(name, file, line, module, kind), out);
}

const keyWords = new Int32Array(2);

/**
 * Frame ids by frame key, the key held as its two 32-bit words (stableKeyWords) in columns, found
 * by open addressing over ids + 1 (0: empty). A Map of the keys' 16-character strings took about
 * 85 bytes a frame (235 MB of heap for the 2.76 M functions of a 1 GB callgrind file); this takes
 * 16 to 24.
 */
export class FrameKeys {
  private readonly high = new IntList();
  private readonly low = new IntList();
  private slots = writtenZeros(new Int32Array(1024));

  get size(): number {
    return this.high.length;
  }

  /** The frame id of the key (a, b), or -1. */
  find(a: number, b: number): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    for (let slot = keySlot(a, b) & mask; slots[slot] !== 0; slot = (slot + 1) & mask) {
      const id = slots[slot] - 1;
      if (this.high.data[id] === a && this.low.data[id] === b) return id;
    }
    return -1;
  }

  /** Adds the key (a, b), which find() did not find, as the next frame id. */
  add(a: number, b: number): number {
    const id = this.high.length;
    this.high.push(a);
    this.low.push(b);
    if (id * 2 >= this.slots.length) this.grow();
    else this.place(this.slots, id);
    return id;
  }

  private place(slots: Int32Array, id: number): void {
    const mask = slots.length - 1;
    let slot = keySlot(this.high.data[id], this.low.data[id]) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = id + 1;
  }

  private grow(): void {
    const slots = writtenZeros(new Int32Array(this.slots.length * 2));
    for (let id = 0; id < this.high.length; id++) this.place(slots, id);
    this.slots = slots;
  }
}

function keySlot(a: number, b: number): number {
  const h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b);
  return h ^ (h >>> 15);
}

/**
 * The key builder.frame gives this input, without recording anything: an importer that interns
 * frames elsewhere (a folded part on another thread) tells by it which texts are one frame.
 */
export function frameKey(input: FrameInput): string {
  const cut = (value: string | null | undefined, field: keyof typeof FIELD_LIMITS) => (value === null || value === undefined ? null : value.slice(0, FIELD_LIMITS[field]));
  return frameKeyOf(cut(input.name, "name")!, cut(input.file, "file"), integerOrNull(input.line), cut(input.module, "module"), input.kind);
}

function integerOrNull(value: number | null | undefined): number | null {
  return value === null || value === undefined || !Number.isFinite(value) || Math.abs(value) > 2 ** 31 - 1 ? null : Math.round(value);
}

/**
 * Per stack node, 1 when its frame does not occur among its ancestors (a frame's total sums these
 * only, so recursion counts a sample once). First by path summaries (outermostBySummary), which
 * is fastest on the trees profiles make; where their walks up the tree grow long, by one pass in
 * depth-first order (outermostByPath), in time linear whatever the tree.
 */
function outermostNodes(stackParent: Int32Array, stackFrame: Int32Array, stackDepth: Int32Array, nodes: number, frames: number): Uint8Array {
  return outermostBySummary(stackParent, stackFrame, nodes, 16 * nodes + 65_536) ?? outermostByPath(stackParent, stackFrame, stackDepth, nodes, frames);
}

/**
 * Each node carries a 64-bit summary of the frames on its path; only when the summary says the
 * frame may be there are the ancestors walked. A path of many distinct frames (a call chain 200 k
 * deep) sets every bit, and the walks then grow with the square of its depth (82 s for 200 k
 * nodes): past `budget` ancestors walked in all it gives up (null).
 */
export function outermostBySummary(stackParent: Int32Array, stackFrame: Int32Array, nodes: number, budget: number): Uint8Array | null {
  const outermost = new Uint8Array(nodes);
  const low = new Int32Array(nodes);
  const high = new Int32Array(nodes);
  let walked = 0;
  for (let id = 0; id < nodes; id++) {
    const frame = stackFrame[id];
    const bit = Math.imul(frame, 0x9e3779b1) >>> 26;
    const word = bit < 32 ? 1 << bit : 1 << (bit - 32);
    const parent = stackParent[id];
    let ancestorLow = 0;
    let ancestorHigh = 0;
    if (parent >= 0) {
      ancestorLow = low[parent];
      ancestorHigh = high[parent];
    }
    let outer = ((bit < 32 ? ancestorLow : ancestorHigh) & word) === 0;
    if (!outer) {
      // Up to the frame, or to the first ancestor whose own summary lacks its bit: none above has it.
      outer = true;
      for (let up = parent; up >= 0; up = stackParent[up]) {
        if (++walked > budget) return null;
        if (stackFrame[up] === frame) {
          outer = false;
          break;
        }
        if (((bit < 32 ? low[up] : high[up]) & word) === 0) break;
      }
    }
    outermost[id] = outer ? 1 : 0;
    low[id] = bit < 32 ? ancestorLow | word : ancestorLow;
    high[id] = bit < 32 ? ancestorHigh : ancestorHigh | word;
  }
  return outermost;
}

/**
 * The tree walked depth-first with a count per frame of its occurrences on the current path: a
 * node is outermost when its frame's count is 0 as it is entered. Each node is entered and left
 * once. (Ids are parent-first, so children are listed by parent in id order, from the parents'
 * child counts.)
 */
export function outermostByPath(stackParent: Int32Array, stackFrame: Int32Array, stackDepth: Int32Array, nodes: number, frames: number): Uint8Array {
  const outermost = new Uint8Array(nodes);
  // Slot parent + 1 (0: the roots) lists its children at children[first[slot], first[slot + 1]).
  const first = new Int32Array(nodes + 2);
  for (let id = 0; id < nodes; id++) first[stackParent[id] + 1]++;
  for (let slot = 1; slot <= nodes; slot++) first[slot] += first[slot - 1];
  first[nodes + 1] = nodes;
  const children = new Int32Array(nodes);
  for (let id = nodes - 1; id >= 0; id--) children[--first[stackParent[id] + 1]] = id;
  let deepest = 0;
  for (let id = 0; id < nodes; id++) if (stackDepth[id] > deepest) deepest = stackDepth[id];
  const onPath = new Int32Array(frames);
  // The current path (path[0] = -1 for the roots) and, per level, the next child to enter.
  const path = new Int32Array(deepest + 2);
  const next = new Int32Array(deepest + 2);
  let top = 0;
  path[0] = -1;
  next[0] = first[0];
  while (top >= 0) {
    const node = path[top];
    if (next[top] < first[node + 2]) {
      const child = children[next[top]++];
      const frame = stackFrame[child];
      outermost[child] = onPath[frame] === 0 ? 1 : 0;
      onPath[frame]++;
      path[++top] = child;
      next[top] = first[child + 1];
    } else {
      if (node >= 0) onPath[stackFrame[node]]--;
      top--;
    }
  }
  return outermost;
}

/** Hash of a (parent, frame) pair for the stack table. */
function stackSlot(parent: number, frame: number): number {
  // murmur3's finalizer over a combination of both: the table indexes by the low bits.
  let h = Math.imul(parent + 1, 0x9e3779b1) ^ (frame + 1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Collects batches in memory, as row objects per table (tests, the browser, small inputs). */
export class MemorySink implements BatchSink {
  /** Rows are decoded into objects as they come: the builder reuses the batches' arrays. */
  readonly copies = true;
  readonly tables: Record<TableName, Record<string, unknown>[]> = Object.fromEntries(
    Object.keys(TABLES).map((t) => [t, []]),
  ) as unknown as Record<TableName, Record<string, unknown>[]>;
  /** Span drafts waiting for their place, by draft_id. */
  private readonly drafts = new Map<number, Record<string, unknown>>();

  /** Per staging table and text column, its dictionary so far. */
  private readonly decodings = new Map<string, TextDecoding>();

  write(batch: RowBatch): void {
    const specs = STAGING_TABLES[batch.table];
    const texts = new Map<string, { column: CodedText; decoding: TextDecoding }>();
    for (const spec of specs) {
      const column = batch.columns[spec.name];
      if (!isCodedText(column)) continue;
      const key = `${batch.table}.${spec.name}`;
      let decoding = this.decodings.get(key);
      if (!decoding) this.decodings.set(key, (decoding = new TextDecoding()));
      decoding.learn(column);
      texts.set(spec.name, { column, decoding });
    }
    for (let i = 0; i < batch.length; i++) {
      const row: Record<string, unknown> = {};
      for (const spec of specs) {
        const text = texts.get(spec.name);
        if (text) {
          row[spec.name] = text.decoding.value(text.column, i);
          continue;
        }
        const value = (batch.columns[spec.name] as ArrayLike<unknown>)[i];
        row[spec.name] = spec.nullable && typeof value === "number" && Number.isNaN(value) ? null : value;
      }
      if (batch.table === "span_drafts") this.drafts.set(row.draft_id as number, row);
      else if (batch.table === "span_places") this.tables.spans.push(this.placed(row));
      else this.tables[batch.table].push(row);
    }
  }

  private placed(place: Record<string, unknown>): Record<string, unknown> {
    const draft = this.drafts.get(place.draft_id as number);
    if (!draft) throw new Error(`span place for unknown draft ${String(place.draft_id)}`);
    this.drafts.delete(place.draft_id as number);
    const row: Record<string, unknown> = { ...place, ...draft };
    return Object.fromEntries(TABLES.spans.map((c) => [c.name, row[c.name]]));
  }
}
