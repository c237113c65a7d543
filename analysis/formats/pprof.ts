/**
 * pprof profiles (profile.proto of github.com/google/pprof), as raw protobuf (gunzipped by the
 * import service). Every sample type becomes a metric; every sample one aggregate sample per
 * non-zero value (no time) on its stack: locations leaf-first in the file, root-first
 * here, a location with several lines expanding to its inlined frames (line[0] innermost).
 * Frames are per function (name, file, start line, mapping file as module). A sample's thread
 * and process labels (`thread`, `thread_id`, `pid`, … — pprof.Do in Go, Datadog's and
 * pyroscope's profilers, async-profiler) put it on a track, as other formats' threads do;
 * samples without them are on no track. Labels are also summed per key and value into
 * measurements; period, duration and start time go to metadata.
 */
import type { EvidenceBuilder } from "../evidence/builder";
import type { FrameKind, MetricKind } from "../evidence/schema";
import { int64 } from "../evidence/int64";
import { ProtoFieldStream, ProtoReader, WIRE_LENGTH_DELIMITED, WIRE_VARINT, type FieldKey } from "../io/protobuf";
import { demangle, demangledFrame } from "../symbols/demangle";
import { EvidenceParseError } from "./errors";
import { lowerSnake, splitCamelCase } from "./metric-names";
import type { FormatImporter, ImportContext, ImportSource } from "./types";

const FORMAT = "pprof";
/** Distinct label key/value pairs kept as measurements; more are counted in a limitation. */
const MAX_LABEL_PAIRS = 10_000;
const SAMPLES_PER_CHECKPOINT = 4096;

// Field numbers of profile.proto.
const PROFILE = { sampleType: 1, sample: 2, mapping: 3, location: 4, function: 5, stringTable: 6, dropFrames: 7, keepFrames: 8, timeNanos: 9, durationNanos: 10, periodType: 11, period: 12, comment: 13, defaultSampleType: 14 } as const;

interface ValueType {
  type: number;
  unit: number;
}
interface Line {
  functionId: number;
  line: number;
}
interface Location {
  mappingId: number;
  address: bigint;
  lines: Line[];
}
interface PprofFunction {
  name: number;
  systemName: number;
  filename: number;
  startLine: number;
}
interface Mapping {
  filename: number;
}

/** Everything but the samples, read in a first pass: pprof writes the string table after the samples. */
interface ProfileTables {
  strings: string[];
  sampleTypes: ValueType[];
  locations: Map<number, Location>;
  functions: Map<number, PprofFunction>;
  mappings: Map<number, Mapping>;
  periodType: ValueType | null;
  period: number;
  timeNanos: bigint;
  durationNanos: bigint;
  comments: number[];
  dropFrames: number;
  keepFrames: number;
  defaultSampleType: number;
}

function readValueType(reader: ProtoReader): ValueType {
  const out: ValueType = { type: 0, unit: 0 };
  while (!reader.done) {
    const key = reader.key();
    if (key.field === 1 || key.field === 2) {
      reader.expect(key, WIRE_VARINT);
      if (key.field === 1) out.type = reader.varint();
      else out.unit = reader.varint();
    } else reader.skip(key.wireType);
  }
  return out;
}

function readLine(reader: ProtoReader): Line {
  const out: Line = { functionId: 0, line: 0 };
  while (!reader.done) {
    const key = reader.key();
    if (key.field === 1) {
      reader.expect(key, WIRE_VARINT);
      out.functionId = reader.varint();
    } else if (key.field === 2) {
      reader.expect(key, WIRE_VARINT);
      out.line = reader.int64();
    } else reader.skip(key.wireType);
  }
  return out;
}

function readLocation(reader: ProtoReader): [number, Location] {
  let id = 0;
  const out: Location = { mappingId: 0, address: 0n, lines: [] };
  while (!reader.done) {
    const key = reader.key();
    switch (key.field) {
      case 1:
        reader.expect(key, WIRE_VARINT);
        id = reader.varint();
        break;
      case 2:
        reader.expect(key, WIRE_VARINT);
        out.mappingId = reader.varint();
        break;
      case 3:
        reader.expect(key, WIRE_VARINT);
        out.address = reader.uint64();
        break;
      case 4:
        reader.expect(key, WIRE_LENGTH_DELIMITED);
        out.lines.push(readLine(reader.message()));
        break;
      default:
        reader.skip(key.wireType);
    }
  }
  return [id, out];
}

function readFunction(reader: ProtoReader): [number, PprofFunction] {
  let id = 0;
  const out: PprofFunction = { name: 0, systemName: 0, filename: 0, startLine: 0 };
  while (!reader.done) {
    const key = reader.key();
    if (key.field >= 1 && key.field <= 5) {
      reader.expect(key, WIRE_VARINT);
      if (key.field === 1) id = reader.varint();
      else if (key.field === 2) out.name = reader.varint();
      else if (key.field === 3) out.systemName = reader.varint();
      else if (key.field === 4) out.filename = reader.varint();
      else out.startLine = reader.int64();
    } else reader.skip(key.wireType);
  }
  return [id, out];
}

function readMapping(reader: ProtoReader): [number, Mapping] {
  let id = 0;
  const out: Mapping = { filename: 0 };
  while (!reader.done) {
    const key = reader.key();
    if (key.field === 1) {
      reader.expect(key, WIRE_VARINT);
      id = reader.varint();
    } else if (key.field === 5) {
      reader.expect(key, WIRE_VARINT);
      out.filename = reader.varint();
    } else reader.skip(key.wireType);
  }
  return [id, out];
}

function emptyTables(): ProfileTables {
  return {
    strings: [],
    sampleTypes: [],
    locations: new Map(),
    functions: new Map(),
    mappings: new Map(),
    periodType: null,
    period: 0,
    timeNanos: 0n,
    durationNanos: 0n,
    comments: [],
    dropFrames: 0,
    keepFrames: 0,
    defaultSampleType: 0,
  };
}

/** One top-level field of the first pass (samples are passed over by the stream, not read here). */
function readTableField(tables: ProfileTables, key: FieldKey, reader: ProtoReader, decoder: TextDecoder): void {
  switch (key.field) {
    case PROFILE.sampleType:
      reader.expect(key, WIRE_LENGTH_DELIMITED);
      tables.sampleTypes.push(readValueType(reader.message()));
      break;
    case PROFILE.mapping: {
      reader.expect(key, WIRE_LENGTH_DELIMITED);
      const [id, mapping] = readMapping(reader.message());
      tables.mappings.set(id, mapping);
      break;
    }
    case PROFILE.location: {
      reader.expect(key, WIRE_LENGTH_DELIMITED);
      const [id, location] = readLocation(reader.message());
      if (id === 0) throw new EvidenceParseError(FORMAT, "a location has no id", { offset: key.offset });
      tables.locations.set(id, location);
      break;
    }
    case PROFILE.function: {
      reader.expect(key, WIRE_LENGTH_DELIMITED);
      const [id, fn] = readFunction(reader.message());
      if (id === 0) throw new EvidenceParseError(FORMAT, "a function has no id", { offset: key.offset });
      tables.functions.set(id, fn);
      break;
    }
    case PROFILE.stringTable:
      reader.expect(key, WIRE_LENGTH_DELIMITED);
      tables.strings.push(reader.string(decoder));
      break;
    case PROFILE.timeNanos:
      reader.expect(key, WIRE_VARINT);
      tables.timeNanos = reader.int64Exact();
      break;
    case PROFILE.durationNanos:
      reader.expect(key, WIRE_VARINT);
      tables.durationNanos = reader.int64Exact();
      break;
    case PROFILE.periodType:
      reader.expect(key, WIRE_LENGTH_DELIMITED);
      tables.periodType = readValueType(reader.message());
      break;
    case PROFILE.period:
      reader.expect(key, WIRE_VARINT);
      tables.period = reader.int64();
      break;
    case PROFILE.comment:
      reader.repeated(key.wireType, tables.comments);
      break;
    case PROFILE.dropFrames:
    case PROFILE.keepFrames:
    case PROFILE.defaultSampleType: {
      reader.expect(key, WIRE_VARINT);
      const index = reader.varint();
      if (key.field === PROFILE.dropFrames) tables.dropFrames = index;
      else if (key.field === PROFILE.keepFrames) tables.keepFrames = index;
      else tables.defaultSampleType = index;
      break;
    }
    default:
      reader.skip(key.wireType);
  }
}

/**
 * The first pass: everything but the samples, whose bytes are passed over as they stream by (pprof
 * writes the string table after the samples, so they are read in a second pass). Returns the
 * tables and the input's length.
 */
async function readTables(source: ImportSource, maxDepth: number): Promise<{ tables: ProfileTables; bytes: number }> {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  const tables = emptyTables();
  const stream = new ProtoFieldStream(
    FORMAT,
    maxDepth,
    (key, reader) => readTableField(tables, key, reader, decoder),
    (key) => {
      if (key.field !== PROFILE.sample) return false;
      if (key.wireType !== WIRE_LENGTH_DELIMITED) throw new EvidenceParseError(FORMAT, "a field has the wrong wire type for its number", { offset: key.offset });
      return true;
    },
  );
  let bytes = 0;
  for await (const chunk of source.chunks({ reuse: true })) {
    stream.write(chunk);
    bytes += chunk.length;
  }
  stream.end();
  return { tables, bytes };
}

function stringAt(tables: ProfileTables, index: number, at: number): string {
  if (index < 0 || index >= tables.strings.length) throw new EvidenceParseError(FORMAT, "a string index is outside the string table", { offset: at });
  return tables.strings[index];
}

/** Go's and Node's conventional sample types, named as the schema names them. */
const WELL_KNOWN_METRICS: Record<string, { name: string; unit: string; kind: MetricKind }> = {
  "samples/count": { name: "samples", unit: "count", kind: "sampled" },
  "sample/count": { name: "samples", unit: "count", kind: "sampled" },
  "cpu/nanoseconds": { name: "cpu_ns", unit: "ns", kind: "sampled" },
  "wall/nanoseconds": { name: "wall_ns", unit: "ns", kind: "temporal" },
  "alloc_space/bytes": { name: "alloc_bytes", unit: "bytes", kind: "sampled" },
  "alloc_objects/count": { name: "alloc_count", unit: "count", kind: "sampled" },
  "inuse_space/bytes": { name: "inuse_bytes", unit: "bytes", kind: "sampled" },
  "inuse_objects/count": { name: "inuse_count", unit: "count", kind: "sampled" },
};

const UNIT_SUFFIXES: Record<string, { suffix: string; unit: string }> = {
  nanoseconds: { suffix: "_ns", unit: "ns" },
  microseconds: { suffix: "_us", unit: "us" },
  milliseconds: { suffix: "_ms", unit: "ms" },
  seconds: { suffix: "_s", unit: "s" },
  bytes: { suffix: "_bytes", unit: "bytes" },
  count: { suffix: "", unit: "count" },
};

/**
 * A sample type's metric: the well-known ones by the schema's names, others as
 * lower_snake(type) plus a unit suffix (delay/nanoseconds → delay_ns, contentions/count → contentions).
 */
export function pprofMetric(type: string, unit: string): { name: string; unit: string; kind: MetricKind } {
  const known = WELL_KNOWN_METRICS[`${type.toLowerCase()}/${unit.toLowerCase()}`];
  if (known) return known;
  const base = lowerSnake(splitCamelCase(type), "value");
  const suffix = UNIT_SUFFIXES[unit.toLowerCase()];
  if (!suffix) return { name: base, unit: unit || "count", kind: "sampled" };
  const name = base.endsWith(suffix.suffix) ? base : base + suffix.suffix;
  return { name, unit: suffix.unit, kind: unit.toLowerCase() === "nanoseconds" && base === "wall" ? "temporal" : "sampled" };
}

const JS_FILE = /\.(m?js|cjs|mjs|jsx|tsx?)$|^(https?|file|webpack|node):/;
const GO_GC = /^runtime\.(gc[A-Z]\w*|GC|markroot\w*|scanobject|greyobject|scanstack|bgsweep|sweepone)$/;
const PSEUDO_KINDS: Record<string, FrameKind> = {
  "(garbage collector)": "gc",
  "(idle)": "idle",
  "(program)": "program",
  "(root)": "program",
};

/**
 * What kind of code a frame is, from its name and file: Python by a .py file, JavaScript by a
 * script file or URL (Node's pprof exporters), Go's collector by its runtime.gc* functions, the
 * kernel by its mapping; everything else is compiled code (native).
 */
export function pprofFrameKind(name: string, file: string | null, module: string | null): FrameKind {
  const pseudo = PSEUDO_KINDS[name];
  if (pseudo) return pseudo;
  if (module && (module.startsWith("[kernel") || module === "[vmlinux]")) return "kernel";
  if (file) {
    if (file.endsWith(".py") || file.endsWith(".pyx")) return "python";
    if (JS_FILE.test(file)) return "js";
  }
  if (GO_GC.test(name)) return "gc";
  return "native";
}

class PprofStacks {
  private readonly locationFrames = new Map<number, number[]>();
  truncated = 0;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly tables: ProfileTables,
    private readonly maxDepth: number,
  ) {}

  private string(index: number, at: number): string {
    return stringAt(this.tables, index, at);
  }

  /** A location's frames, caller first (its last line is the caller the others were inlined into). */
  private framesOf(locationId: number, at: number): number[] {
    const known = this.locationFrames.get(locationId);
    if (known) return known;
    const location = this.tables.locations.get(locationId);
    if (!location) throw new EvidenceParseError(FORMAT, "a sample names a location that does not exist", { offset: at });
    let module: string | null = null;
    if (location.mappingId !== 0) {
      const mapping = this.tables.mappings.get(location.mappingId);
      if (!mapping) throw new EvidenceParseError(FORMAT, "a location names a mapping that does not exist", { offset: at });
      module = this.string(mapping.filename, at) || null;
    }
    const frames: number[] = [];
    if (location.lines.length === 0) {
      // Not symbolized: the address is all there is.
      const name = `0x${location.address.toString(16)}`;
      frames.push(this.builder.frame({ name, module, kind: pprofFrameKind(name, null, module) }));
    }
    for (let i = location.lines.length - 1; i >= 0; i--) {
      const fn = this.tables.functions.get(location.lines[i].functionId);
      if (!fn) throw new EvidenceParseError(FORMAT, "a location names a function that does not exist", { offset: at });
      const systemName = this.string(fn.systemName, at);
      const name = this.string(fn.name, at) || systemName || `0x${location.address.toString(16)}`;
      const file = this.string(fn.filename, at) || null;
      const line = fn.startLine > 0 ? fn.startLine : null;
      // profile.proto's system_name is the mangled name, when the writer gave name demangled.
      const frame = demangledFrame({ name, file, line, module, kind: pprofFrameKind(name, file, module) });
      if (!frame.mangledName && systemName && systemName !== name && demangle(systemName) !== null) frame.mangledName = systemName;
      frames.push(this.builder.frame(frame));
    }
    this.locationFrames.set(locationId, frames);
    return frames;
  }

  /** The leaf stack node of a sample's leaf-first location ids; null when it has none. */
  leaf(locationIds: number[], at: number): number | null {
    let node: number | null = null;
    let depth = 0;
    for (let i = locationIds.length - 1; i >= 0; i--) {
      for (const frame of this.framesOf(locationIds[i], at)) {
        if (depth === this.maxDepth) {
          this.truncated++;
          return node;
        }
        node = this.builder.stack(node, frame);
        depth++;
      }
    }
    return node;
  }
}

/** Label keys that name a sample's thread or process (lower-cased, spaces as written by Datadog's profilers). */
const THREAD_NAME_KEYS = new Set(["thread", "thread_name", "thread name", "threadname"]);
const THREAD_ID_KEYS = new Set(["thread_id", "thread id", "threadid", "tid", "native_thread_id", "thread native id"]);
const PROCESS_ID_KEYS = new Set(["pid", "process_id", "process id"]);
const PROCESS_NAME_KEYS = new Set(["process", "process_name", "process name", "comm"]);

/** A sample's track from its thread and process labels; null when it carries none. */
class LabelTracks {
  private readonly ids = new Map<string, number>();
  constructor(private readonly builder: EvidenceBuilder) {}

  of(labels: readonly { key: string; value: string | number }[]): number | null {
    let threadName: string | null = null;
    let threadId: string | null = null;
    let processId: string | null = null;
    let processName: string | null = null;
    for (const { key, value } of labels) {
      const k = key.toLowerCase();
      const text = String(value);
      if (text === "") continue;
      if (THREAD_NAME_KEYS.has(k)) threadName ??= text;
      else if (THREAD_ID_KEYS.has(k)) threadId ??= text;
      else if (PROCESS_ID_KEYS.has(k)) processId ??= text;
      else if (PROCESS_NAME_KEYS.has(k)) processName ??= text;
    }
    if (threadName === null && threadId === null && processId === null && processName === null) return null;
    const thread = threadId !== null || threadName !== null;
    // Tracks are told apart by process and thread id: a thread known only by its name is named by it.
    const key = `${processId}\u0000${processName}\u0000${threadId}\u0000${threadName}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.builder.track({
        processId: processId ?? (thread ? null : processName),
        processName,
        threadId: thread ? (threadId ?? threadName) : null,
        threadName,
        kind: thread ? "thread" : "process",
      });
      this.ids.set(key, id);
    }
    return id;
  }
}

/** Label totals: key and value → summed weight of the samples carrying it. */
class LabelTotals {
  readonly totals = new Map<string, { key: string; value: string | number; unit: string | null; weight: number; samples: number }>();
  dropped = 0;

  add(key: string, value: string | number, unit: string | null, weight: number): void {
    const id = `${key}\u0000${typeof value}\u0000${value}\u0000${unit ?? ""}`;
    const known = this.totals.get(id);
    if (known) {
      known.weight += weight;
      known.samples++;
    } else if (this.totals.size < MAX_LABEL_PAIRS) this.totals.set(id, { key, value, unit, weight, samples: 1 });
    else this.dropped++;
  }
}

/** One sample of the second pass into the builder. */
class SampleReader {
  readonly stacks: PprofStacks;
  readonly labels = new LabelTotals();
  private readonly tracks: LabelTracks;
  private readonly named: { key: string; value: string | number }[] = [];
  private emptyStack: number | null = null;
  count = 0;
  private readonly locationIds: number[] = [];
  private readonly values: number[] = [];
  private readonly sampleLabels: { key: number; str: number; num: number; numUnit: number; hasNum: boolean }[] = [];

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly tables: ProfileTables,
    private readonly metricIds: number[],
    private readonly weightIndex: number,
    maxDepth: number,
  ) {
    this.stacks = new PprofStacks(builder, tables, maxDepth);
    this.tracks = new LabelTracks(builder);
  }

  read(top: FieldKey, reader: ProtoReader): void {
    const { builder, tables, locationIds, values, sampleLabels, named, labels, weightIndex, metricIds } = this;
    const sample = reader.message();
    locationIds.length = 0;
    values.length = 0;
    sampleLabels.length = 0;
    while (!sample.done) {
      const key = sample.key();
      if (key.field === 1) sample.repeated(key.wireType, locationIds);
      else if (key.field === 2) sample.repeated(key.wireType, values, (r) => r.int64());
      else if (key.field === 3) {
        sample.expect(key, WIRE_LENGTH_DELIMITED);
        const label = sample.message();
        const out = { key: 0, str: 0, num: 0, numUnit: 0, hasNum: false };
        while (!label.done) {
          const lk = label.key();
          if (lk.field >= 1 && lk.field <= 4) {
            label.expect(lk, WIRE_VARINT);
            if (lk.field === 1) out.key = label.varint();
            else if (lk.field === 2) out.str = label.varint();
            else if (lk.field === 3) {
              out.num = label.int64();
              out.hasNum = true;
            } else out.numUnit = label.varint();
          } else label.skip(lk.wireType);
        }
        sampleLabels.push(out);
      } else sample.skip(key.wireType);
    }
    if (values.length !== tables.sampleTypes.length) {
      throw new EvidenceParseError(FORMAT, `a sample has ${values.length < tables.sampleTypes.length ? "fewer" : "more"} values than the profile has sample types`, { offset: top.offset });
    }
    let leaf = this.stacks.leaf(locationIds, top.offset);
    if (leaf === null) {
      builder.limit("PPROF_SAMPLE_WITHOUT_STACK", "Some samples had no locations; they are drawn under a frame named (no stack).");
      this.emptyStack ??= builder.stack(null, builder.frame({ name: "(no stack)", kind: "other" }));
      leaf = this.emptyStack;
    }
    named.length = 0;
    for (const label of sampleLabels) {
      const key = stringAt(tables, label.key, top.offset);
      const value = label.hasNum ? label.num : stringAt(tables, label.str, top.offset);
      named.push({ key, value });
      if (label.hasNum) labels.add(key, value, stringAt(tables, label.numUnit, top.offset) || null, values[weightIndex]);
      else labels.add(key, value, null, values[weightIndex]);
    }
    const track = named.length ? this.tracks.of(named) : null;
    for (let i = 0; i < values.length; i++) if (values[i] !== 0) builder.sample(leaf, track, null, metricIds[i], int64(values[i], FORMAT, "sample.value", { offset: top.offset }));
    this.count++;
  }
}

/** The second pass: the samples, streamed into the builder as they come; every other field is passed over. */
async function readSamples(source: ImportSource, tables: ProfileTables, builder: EvidenceBuilder, metricIds: number[], weightIndex: number, maxDepth: number): Promise<SampleReader> {
  const samples = new SampleReader(builder, tables, metricIds, weightIndex, maxDepth);
  const stream = new ProtoFieldStream(FORMAT, maxDepth, (key, reader) => samples.read(key, reader), (key) => key.field !== PROFILE.sample);
  let checkpointed = 0;
  for await (const chunk of source.chunks({ reuse: true })) {
    stream.write(chunk);
    if (samples.count - checkpointed >= SAMPLES_PER_CHECKPOINT) {
      checkpointed = samples.count;
      await builder.checkpoint();
    }
  }
  stream.end();
  return samples;
}

/**
 * Cheap check that the head looks like a Profile message: its first fields carry the wire types
 * of profile.proto and one of them is a sample_type. A field cut by the end of the head ends the check.
 */
function looksLikeProfile(head: Uint8Array): boolean {
  const reader = new ProtoReader(head, FORMAT);
  let sawSampleType = false;
  try {
    for (let fields = 0; fields < 16 && !reader.done; fields++) {
      const key = reader.key();
      if (key.field > 20) return false;
      const delimited = [1, 2, 3, 4, 5, 6, 11, 16].includes(key.field);
      if (delimited && key.wireType !== WIRE_LENGTH_DELIMITED) return false;
      if (!delimited && key.field !== 13 && key.wireType !== WIRE_VARINT) return false;
      if (key.field === PROFILE.sampleType) {
        readValueType(reader.message());
        sawSampleType = true;
      } else reader.skip(key.wireType);
    }
  } catch {
    return sawSampleType;
  }
  return sawSampleType;
}

export const pprofImporter: FormatImporter = {
  id: "pprof",
  title: "pprof profile (profile.proto)",
  extensions: ["pprof", "pb", "pb.gz", "prof"],
  version: "3",

  sniff(head, _headText, fileName) {
    const named = /\.(pprof|pb|pb\.gz)$/i.test(fileName ?? "") || /(^|\/)(cpu|heap|mem|profile|allocs|goroutine|block|mutex)\.(prof|out)$/i.test(fileName ?? "");
    try {
      if (head.length === 0 || !looksLikeProfile(head)) return 0;
      // Go and most writers put sample_type first: 0x0a, a short length, then its type field 0x08.
      const typical = head[0] === 0x0a && head[2] === 0x08;
      if (typical) return named ? 0.95 : 0.8;
      return named ? 0.7 : 0.4;
    } catch {
      return 0;
    }
  },

  async parse({ source, builder, limits }: ImportContext) {
    // The string table follows the samples in the file: a first pass reads everything else, a
    // second one streams the samples (the input is read twice, never held).
    const { tables, bytes } = await readTables(source, limits.maxDepth);
    if (bytes === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0 });
    if (tables.sampleTypes.length === 0) throw new EvidenceParseError(FORMAT, "the profile declares no sample types", { offset: 0 });
    if (tables.strings.length === 0 || tables.strings[0] !== "") {
      throw new EvidenceParseError(FORMAT, "the string table is missing or does not start with the empty string", { offset: 0 });
    }
    const str = (index: number) => stringAt(tables, index, 0);

    const metricIds: number[] = [];
    const metricNames: string[] = [];
    const used = new Set<string>();
    for (const sampleType of tables.sampleTypes) {
      const metric = pprofMetric(str(sampleType.type), str(sampleType.unit));
      // Two sample types with one name would merge into one metric: keep them apart.
      let name = metric.name;
      for (let n = 2; used.has(name); n++) name = `${metric.name}_${n}`;
      used.add(name);
      metricNames.push(name);
      metricIds.push(builder.metric({ ...metric, name }));
    }
    // Labels are weighted by the default sample type (pprof's rule: the named one, else the last).
    let weightIndex = tables.sampleTypes.length - 1;
    if (tables.defaultSampleType !== 0) {
      const wanted = str(tables.defaultSampleType);
      const found = tables.sampleTypes.findIndex((t) => str(t.type) === wanted);
      if (found >= 0) weightIndex = found;
    }

    const { stacks, labels, count: samples } = await readSamples(source, tables, builder, metricIds, weightIndex, limits.maxDepth);

    const weightMetric = metricNames[weightIndex];
    const weightUnit = str(tables.sampleTypes[weightIndex].unit);
    for (const label of labels.totals.values()) {
      builder.measurement({
        name: `label:${label.key}`,
        value: label.weight,
        unit: weightUnit || null,
        aggregation: "sum",
        dimensions: { label: label.key, value: label.value, ...(label.unit ? { value_unit: label.unit } : {}), metric: weightMetric, samples: label.samples },
      });
    }
    if (labels.dropped > 0) {
      builder.limit("PPROF_LABELS_TRUNCATED", `Only the first ${MAX_LABEL_PAIRS} distinct label values were kept as measurements; ${labels.dropped} label occurrences were dropped.`);
    }
    if (stacks.truncated > 0) {
      builder.limit("STACK_TRUNCATED", `${stacks.truncated} stack(s) were deeper than ${limits.maxDepth} frames; their leaf-most frames were dropped.`);
    }

    const meta = builder.metadata;
    meta.source_format = "pprof";
    meta["pprof.samples"] = String(samples);
    meta["pprof.sample_types"] = tables.sampleTypes.map((t, i) => `${str(t.type)}/${str(t.unit)}=${metricNames[i]}`).join(",");
    meta["pprof.default_sample_type"] = metricNames[weightIndex];
    if (tables.periodType) meta["pprof.period_type"] = `${str(tables.periodType.type)}/${str(tables.periodType.unit)}`;
    if (tables.period !== 0) meta["pprof.period"] = String(tables.period);
    if (tables.durationNanos !== 0n) meta.duration_ns = tables.durationNanos.toString();
    if (tables.timeNanos !== 0n) meta.start_time_unix_ns = tables.timeNanos.toString();
    if (tables.comments.length > 0) meta["pprof.comments"] = builder.bound(tables.comments.map(str).join("\n"), "args");
    if (tables.dropFrames !== 0) meta["pprof.drop_frames"] = str(tables.dropFrames);
    if (tables.keepFrames !== 0) meta["pprof.keep_frames"] = str(tables.keepFrames);
  },
};
