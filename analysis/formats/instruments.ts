/**
 * Xcode Instruments "Deep Copy" text: a call tree copied from a call-tree view (Edit → Deep Copy),
 * one row per node, tab-separated under a header row. The symbol column's leading spaces give a
 * node's depth; its value columns hold the node's inclusive weight ("4.93 s  100.0%", as the view
 * rounds it) and, in most layouts, its self weight. Layouts seen in Instruments 7 to 16:
 *   Running Time, Self (ms), –, Symbol Name         (Time Profiler, Instruments 7–9)
 *   Weight, Self Weight, –, Symbol Name(s)          (Time Profiler / CPU Counters, 10–16)
 *   Bytes Used, Count, –, Symbol Name               (Allocations)
 *   # Samples, Symbol Name                          (sample counts)
 * A Time Profiler weight is the CPU time of the samples (it samples running threads): cpu_ns;
 * cycles (Kc, Mc, Gc) become `cycles`, bytes `alloc_bytes` (KB = 1024 bytes, as Instruments
 * counts), counts `samples` or `alloc_count`. Each node's self value becomes one aggregate sample
 * (no times) on its stack: the self column when there is one, else its weight less its children's.
 * Process rows ("name (pid)") and thread rows ("Main Thread  0x1d0d") become tracks. Values are
 * as rounded as the copy shows them; a node whose weight disagrees with its self and children's
 * beyond that rounding (a filtered or pruned tree) is counted in a limitation.
 */
import type { EvidenceBuilder } from "../evidence/builder";
import { lineBatches, ownCopy } from "../io/text";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "instruments-deep-copy";

const SYMBOL_COLUMNS = ["Symbol Name", "Symbol Names"];
const WEIGHT_COLUMNS = ["Weight", "Running Time", "Bytes Used", "# Samples", "Sample Count", "Samples"];
const SELF_COLUMNS = ["Self Weight", "Self (ms)", "Self", "Self Bytes"];

type Family = "time" | "cycles" | "bytes" | "count";

const UNITS: Record<string, { family: Family; factor: number }> = {
  ns: { family: "time", factor: 1 },
  µs: { family: "time", factor: 1e3 },
  μs: { family: "time", factor: 1e3 },
  us: { family: "time", factor: 1e3 },
  ms: { family: "time", factor: 1e6 },
  s: { family: "time", factor: 1e9 },
  min: { family: "time", factor: 60e9 },
  h: { family: "time", factor: 3600e9 },
  cycles: { family: "cycles", factor: 1 },
  Kc: { family: "cycles", factor: 1e3 },
  Mc: { family: "cycles", factor: 1e6 },
  Gc: { family: "cycles", factor: 1e9 },
  Tc: { family: "cycles", factor: 1e12 },
  Bytes: { family: "bytes", factor: 1 },
  bytes: { family: "bytes", factor: 1 },
  B: { family: "bytes", factor: 1 },
  KB: { family: "bytes", factor: 1024 },
  KiB: { family: "bytes", factor: 1024 },
  MB: { family: "bytes", factor: 1024 ** 2 },
  MiB: { family: "bytes", factor: 1024 ** 2 },
  GB: { family: "bytes", factor: 1024 ** 3 },
  GiB: { family: "bytes", factor: 1024 ** 3 },
  TB: { family: "bytes", factor: 1024 ** 4 },
};

const METRICS: Record<Family, { name: string; unit: string; kind: "sampled" }> = {
  time: { name: "cpu_ns", unit: "ns", kind: "sampled" },
  cycles: { name: "cycles", unit: "cycles", kind: "sampled" },
  bytes: { name: "alloc_bytes", unit: "bytes", kind: "sampled" },
  count: { name: "samples", unit: "count", kind: "sampled" },
};

interface Quantity {
  value: number;
  family: Family;
  /** Half the step of the last digit shown, in the metric's unit: how far rounding may have moved it. */
  rounding: number;
}

/**
 * "4.93 s  100.0%", "4273.0ms   99.9%", "429.93 MB     100.0%", "34532", "-". `defaultUnit`: the
 * unit a bare number is in (a "Self (ms)" column's). Null when the text is no quantity.
 */
export function parseQuantity(text: string, defaultUnit: string | null): Quantity | null {
  const trimmed = text.trim();
  if (trimmed === "-" || trimmed === "") return { value: 0, family: defaultUnit ? UNITS[defaultUnit].family : "count", rounding: 0 };
  const match = /^([0-9][0-9.,]*)\s*([A-Za-zµμ]+)?(?:\s+[0-9.,]+\s*%)?$/.exec(trimmed);
  if (!match) return null;
  const [, digits, unitText] = match;
  let number: string;
  if (/^\d{1,3}(,\d{3})+(\.\d+)?$/.test(digits)) number = digits.replace(/,/g, "");
  else if (/^\d+,\d+$/.test(digits)) number = digits.replace(",", "."); // a decimal comma (some locales)
  else if (/^\d+(\.\d+)?$/.test(digits)) number = digits;
  else return null;
  const unitName = unitText ?? defaultUnit;
  const unit = unitName === null ? { family: "count" as Family, factor: 1 } : UNITS[unitName];
  if (!unit) return null;
  const decimals = number.includes(".") ? number.length - number.indexOf(".") - 1 : 0;
  return { value: Number(number) * unit.factor, family: unit.family, rounding: unit.factor * 0.5 * 10 ** -decimals };
}

interface Column {
  index: number;
  name: string;
}

function findColumn(header: string[], names: string[]): Column | null {
  for (const name of names) {
    const index = header.findIndex((h) => h.trim() === name);
    if (index >= 0) return { index, name };
  }
  return null;
}

interface OpenNode {
  indent: number;
  /** The node's stack (frame rows), or -1 for a process or thread row. */
  stack: number;
  /** The node's track, or -1 until a frame needs it (a process row's is made only then). */
  track: number;
  /** Of a process row: its pid and name. */
  process: { id: string; name: string } | null;
  /** Depth of the node's stack, -1 for process and thread rows. */
  depth: number;
  /** The frame a frame row added to the stack, else -1 (counted on the open path while it is open). */
  frame: number;
  weight: Quantity;
  self: Quantity | null;
  count: number | null;
  childWeight: number;
  childRounding: number;
  childCount: number;
  label: string;
  line: number;
}

const PROCESS_ROW = /^(.*\S) \((\d+)\)$/;
const THREAD_ROW = /^(.*\S)\s+0x([0-9a-fA-F]+)$/;

class DeepCopy {
  private readonly open: OpenNode[] = [];
  private weightMetric = -1;
  private family: Family | null = null;
  private countMetric = -1;
  private defaultTrack = -1;
  private disagreements = 0;
  private negative = 0;
  private truncated = 0;
  samples = 0;
  /** Frame ids by symbol, file and library: a large copy names the same symbols on thousands of rows. */
  private readonly frames = new Map<string, number>();
  /** Per frame id, how many open rows have it: a frame not yet on the open path is outermost there. */
  private onPath = new Int32Array(1024);
  /** Parsed values by their text and default unit: copies repeat a few hundred values over millions of rows. */
  private readonly quantities = new Map<string, Quantity | null>();

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
    private readonly columns: { symbol: Column; weight: Column; self: Column | null; count: Column | null; source: Column | null; library: Column | null },
    private readonly selfUnit: string | null,
  ) {}

  row(cells: string[], line: number): void {
    const { columns, builder } = this;
    const symbol = cells[columns.symbol.index];
    if (symbol === undefined) throw new EvidenceParseError(FORMAT, `a row has no ${columns.symbol.name} column`, { line });
    const label = symbol.trim();
    if (label === "") throw new EvidenceParseError(FORMAT, "a row has an empty symbol name", { line });
    const indent = symbol.length - symbol.trimStart().length;
    const weight = this.quantity(cells[columns.weight.index], null, line, columns.weight.name);
    const self = columns.self ? this.quantity(cells[columns.self.index], this.selfUnit, line, columns.self.name) : null;
    const countColumn = columns.count;
    const count = countColumn ? this.quantity(cells[countColumn.index], null, line, countColumn.name) : null;
    if (countColumn && count && count.family !== "count") throw new EvidenceParseError(FORMAT, `${countColumn.name} holds a value that is not a count`, { line });
    while (this.open.length > 0 && this.open[this.open.length - 1].indent >= indent) this.close();
    const parent = this.open.length > 0 ? this.open[this.open.length - 1] : null;
    const node: OpenNode = { indent, stack: -1, track: -1, process: null, depth: -1, frame: -1, weight, self, count: count ? count.value : null, childWeight: 0, childRounding: 0, childCount: 0, label, line };
    const process = parent === null ? PROCESS_ROW.exec(label) : null;
    const thread = parent === null || parent.process !== null ? THREAD_ROW.exec(label) : null;
    if (process) {
      node.process = { id: process[2], name: process[1] };
    } else if (thread) {
      const owner = parent?.process ?? null;
      node.track = builder.track({ processId: owner?.id ?? null, processName: owner?.name ?? null, threadId: `0x${thread[2].toLowerCase()}`, threadName: thread[1], kind: "thread" });
    } else {
      node.track = parent ? this.trackOf(parent) : this.defaultTrackId();
      const parentStack = parent && parent.stack >= 0 ? parent.stack : null;
      const parentDepth = parent && parent.stack >= 0 ? parent.depth : -1;
      if (parentDepth + 1 >= this.maxDepth) {
        this.truncated++;
        node.stack = parentStack!;
        node.depth = parentDepth;
      } else {
        const file = columns.source ? cells[columns.source.index]?.trim() || null : null;
        const module = columns.library ? cells[columns.library.index]?.trim() || null : null;
        const key = `${label}\u0000${file ?? ""}\u0000${module ?? ""}`;
        let frame = this.frames.get(key);
        if (frame === undefined) this.frames.set(key, (frame = builder.frame({ name: label, file, module, kind: "native" })));
        if (frame >= this.onPath.length) {
          const grown = new Int32Array(Math.max(frame + 1, this.onPath.length * 2));
          grown.set(this.onPath);
          this.onPath = grown;
        }
        // The open rows are the path from the root: the builder is told whether the frame is already on it.
        node.stack = builder.stack(parentStack, frame, this.onPath[frame] === 0);
        node.frame = frame;
        this.onPath[frame]++;
        node.depth = parentDepth + 1;
      }
    }
    this.open.push(node);
  }

  /** Ends the tree: every open node is closed. */
  async finish(): Promise<void> {
    while (this.open.length > 0) this.close();
    const { builder } = this;
    if (this.disagreements > 0) {
      builder.limit("INSTRUMENTS_TOTALS_DISAGREE", "Some nodes' weights differ from their self weight and their children's by more than the copy's rounding (a filtered or pruned call tree); each node's self value was imported as copied.", this.disagreements);
    }
    if (this.negative > 0) builder.limit("INSTRUMENTS_NEGATIVE_SELF", "Some nodes weigh less than their children (rounding or a pruned tree); their self value was taken as 0.", this.negative);
    if (this.truncated > 0) builder.limit("STACK_TRUNCATED", `Some stacks were deeper than ${this.maxDepth} frames; their leaf-most frames were folded into the deepest kept one.`, this.truncated);
    if (this.samples === 0) throw new EvidenceParseError(FORMAT, "the call tree has no rows with weight", { line: 1 });
    builder.metadata.instruments_weight = this.columns.weight.name;
    if (this.family === "time") builder.metadata.instruments_time = "the CPU time of the samples of running threads, as Instruments' Time Profiler weighs them";
    await builder.checkpoint();
  }

  /** A node's track: a thread row's, its ancestors', or a process row's own, made when first needed. */
  private trackOf(node: OpenNode): number {
    if (node.track < 0) {
      node.track = node.process ? this.builder.track({ processId: node.process.id, processName: node.process.name, kind: "process" }) : this.defaultTrackId();
    }
    return node.track;
  }

  private defaultTrackId(): number {
    if (this.defaultTrack < 0) this.defaultTrack = this.builder.track({ kind: "thread" });
    return this.defaultTrack;
  }

  private quantity(cell: string | undefined, defaultUnit: string | null, line: number, column: string): Quantity {
    let quantity: Quantity | null = null;
    if (cell !== undefined) {
      const key = defaultUnit === null ? cell : `${defaultUnit}\u0000${cell}`;
      const known = this.quantities.get(key);
      if (known !== undefined) quantity = known;
      else {
        quantity = parseQuantity(cell, defaultUnit);
        if (this.quantities.size > 65_536) this.quantities.clear();
        // A copy is kept, not the cell: the cell is a slice of its batch's text (lineBatches decodes
        // a megabyte at a time), which a kept slice would keep alive whole. Kept slices of 65 k
        // batches grew the 1 GB benchmark's heap by gigabytes and its time faster than its size.
        this.quantities.set(ownCopy(key), quantity);
      }
    }
    if (!quantity) throw new EvidenceParseError(FORMAT, `the ${column} column holds a value that is not a number with a known unit`, { line });
    return quantity;
  }

  private close(): void {
    const node = this.open.pop()!;
    if (node.frame >= 0) this.onPath[node.frame]--;
    const parent = this.open.length > 0 ? this.open[this.open.length - 1] : null;
    const { builder } = this;
    const weightFamily = node.weight.family;
    if (node.self && node.self.value > 0 && node.self.family !== weightFamily) {
      throw new EvidenceParseError(FORMAT, "a row's self value is in other units than its weight", { line: node.line });
    }
    let self: number;
    if (node.self) {
      self = node.self.value;
      const slack = node.weight.rounding + node.self.rounding + node.childRounding;
      if (Math.abs(node.weight.value - self - node.childWeight) > slack + 1e-9 * node.weight.value) this.disagreements++;
    } else {
      self = node.weight.value - node.childWeight;
      // Children that add up to more than their parent weighs, by more than the rounding: a pruned tree.
      if (self < -(node.weight.rounding + node.childRounding)) this.negative++;
      if (self < 0) self = 0;
    }
    if (parent) {
      parent.childWeight += node.weight.value;
      parent.childRounding += node.weight.rounding;
      if (node.count !== null) parent.childCount += node.count;
    }
    if (self > 0) {
      const metric = this.metricFor(weightFamily, node.line);
      builder.sample(this.stackOf(node), this.trackOf(node), null, metric, Math.round(self));
      this.samples++;
    }
    if (node.count !== null) {
      const selfCount = node.count - node.childCount;
      if (selfCount > 0) {
        if (this.countMetric < 0) this.countMetric = builder.metric({ name: "alloc_count", unit: "count", kind: "sampled" });
        builder.sample(this.stackOf(node), this.trackOf(node), null, this.countMetric, selfCount);
      }
    }
  }

  /** A process or thread row with weight of its own has it on a frame named after the row. */
  private stackOf(node: OpenNode): number {
    if (node.stack >= 0) return node.stack;
    return (node.stack = this.builder.stack(null, this.builder.frame({ name: node.label, kind: "program" }), true));
  }

  private metricFor(family: Family, line: number): number {
    if (this.family === null) {
      this.family = family;
      this.weightMetric = this.builder.metric(METRICS[family]);
    } else if (family !== this.family) {
      throw new EvidenceParseError(FORMAT, `a row's weight is in ${family} where earlier rows' were in ${this.family}`, { line });
    }
    return this.weightMetric;
  }
}

/** The header's columns, or null when the line is not an Instruments call-tree header. */
function readHeader(line: string) {
  if (!line.includes("\t")) return null;
  const header = line.split("\t");
  const symbol = findColumn(header, SYMBOL_COLUMNS);
  const weight = findColumn(header, WEIGHT_COLUMNS);
  if (!symbol || !weight) return null;
  const self = findColumn(header, SELF_COLUMNS);
  const count = weight.name === "Bytes Used" ? findColumn(header, ["Count", "# Allocations"]) : null;
  return { symbol, weight, self, count, source: findColumn(header, ["Source Path"]), library: findColumn(header, ["Library", "Binary"]) };
}

async function parseDeepCopy({ source, builder, limits }: ImportContext): Promise<void> {
  let tree: DeepCopy | null = null;
  let lineNumber = 0;
  for await (const batch of lineBatches(source.chunks(), limits.maxLineLength)) {
    for (const text of batch.texts()) {
      lineNumber++;
      if (text.trim() === "") continue;
      if (!tree) {
        const columns = readHeader(text);
        if (!columns) throw new EvidenceParseError(FORMAT, "the first line is not an Instruments call-tree header (Weight, Running Time, Bytes Used or # Samples, and Symbol Name, tab-separated)", { line: lineNumber });
        tree = new DeepCopy(builder, limits.maxDepth, columns, columns.self?.name === "Self (ms)" ? "ms" : null);
        continue;
      }
      tree.row(text.split("\t"), lineNumber);
    }
    await builder.checkpoint();
  }
  if (!tree) throw new EvidenceParseError(FORMAT, "the input is empty", { line: 1 });
  await tree.finish();
}

export const instrumentsImporter: FormatImporter = {
  id: "instruments-deep-copy",
  title: "Xcode Instruments call tree (Deep Copy text)",
  extensions: ["txt", "instruments.txt"],
  version: "1",

  sniff(_head, headText) {
    const lines = headText.replace(/^\uFEFF/, "").split(/\r?\n/, 3);
    const columns = readHeader(lines[0] ?? "");
    if (!columns) return 0;
    // The first row's weight column parses as Instruments writes it.
    const first = lines[1]?.split("\t");
    return first && parseQuantity(first[columns.weight.index] ?? "", null) ? 0.95 : 0.7;
  },

  parse: parseDeepCopy,
};
