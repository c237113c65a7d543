/**
 * The Firefox Profiler's processed profile format: what profiler.firefox.com saves and uploads,
 * and what samply (fxprof-processed-profile), vernier and other tools write. Tables are columns
 * (`{stack: [...], time: [...], length}`); frames name functions (funcTable) whose name, file and
 * resource (library or web origin) are string indices. Every thread is a track; its samples become
 * `samples`, `wall_ns` and, from threadCPUDelta, `cpu_ns` (see firefox-profile.ts), or `wall_ns` /
 * `alloc_bytes` by the table's weightType; JS and native allocation tables become allocation
 * metrics. Versions 4 to 63 are read, each by where that version keeps things (the changes that
 * matter here, from the format's own upgraders): before 18 a JS function's file could carry its
 * line; before 29 a sample's weight was `duration`; 50 allows `timeDeltas` for `time`; 56 moved
 * the strings to `shared.stringArray`; 58 replaced `funcTable.fileName` by `source` into
 * `shared.sources`; 60 moved the stack, frame, func and resource tables to `shared`. Older and
 * newer versions are refused by version.
 */
import type { EvidenceBuilder, FrameInput } from "../evidence/builder";
import { parseJsonStream } from "../io/json-stream";
import { EvidenceParseError, UnsupportedVersionError } from "./errors";
import {
  FirefoxCollector,
  FirefoxScope,
  FloatColumn,
  StackResolver,
  categoryKind,
  categoryNames,
  isKernelLibrary,
  metaNumber,
  pausesOf,
  recordUnread,
  sampleUnit,
  threadTrack,
  writeThreadSamples,
  type FirefoxTable,
  type FirefoxThread,
  type JsonObject,
} from "./firefox-profile";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "firefox-processed";
export const PROCESSED_VERSIONS = { oldest: 4, newest: 63 } as const;
/** The resourceTable's type of a native library. */
const RESOURCE_LIBRARY = 1;

/** Where a version keeps what this importer reads (see the file comment). */
interface Layout {
  version: number;
  stringsShared: boolean;
  tablesShared: boolean;
  fileNameBySource: boolean;
  weightColumn: "weight" | "duration";
  fileNameHoldsLine: boolean;
}

function layoutOf(meta: JsonObject, offset: number): Layout {
  const version = meta.preprocessedProfileVersion;
  const supported = `${PROCESSED_VERSIONS.oldest} to ${PROCESSED_VERSIONS.newest}`;
  if (typeof version !== "number" || !Number.isInteger(version)) {
    throw new UnsupportedVersionError(FORMAT, "none", supported, "meta.preprocessedProfileVersion is missing or not a whole number", { offset });
  }
  if (version < PROCESSED_VERSIONS.oldest) {
    throw new UnsupportedVersionError(FORMAT, String(version), supported, `processed profiles before version ${PROCESSED_VERSIONS.oldest} name JS functions with their file in the name; load it in profiler.firefox.com and save it again to upgrade it`, { offset });
  }
  if (version > PROCESSED_VERSIONS.newest) {
    throw new UnsupportedVersionError(FORMAT, String(version), supported, `version ${version} is newer than any this importer knows`, { offset });
  }
  return {
    version,
    stringsShared: version >= 56,
    tablesShared: version >= 60,
    fileNameBySource: version >= 58,
    weightColumn: version >= 29 ? "weight" : "duration",
    fileNameHoldsLine: version < 18,
  };
}

/** Frames of one frame table (a thread's, or the shared one), made into builder frames on first use. */
class FrameMaker {
  private readonly ids: Int32Array;
  droppedLines = 0;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly layout: Layout,
    private readonly tables: FirefoxScope,
    private readonly strings: FirefoxScope,
    private readonly sources: FirefoxTable | undefined,
    private readonly categories: readonly string[],
  ) {
    this.ids = new Int32Array(this.table("frameTable").length).fill(-1);
  }

  private table(name: string): FirefoxTable {
    const table = this.tables.tables.get(name);
    if (!table) throw new EvidenceParseError(FORMAT, `the profile has no ${name}${this.layout.tablesShared ? " in shared" : " in a thread"}`, { offset: this.tables.offset });
    return table;
  }

  id = (index: number): number => {
    const ids = this.ids;
    if (index < 0 || index >= ids.length) throw new EvidenceParseError(FORMAT, `a stack names frame ${index}, beyond the frame table's ${ids.length}`, { offset: this.table("stackTable").offset });
    let id = ids[index];
    if (id < 0) id = ids[index] = this.builder.frame(this.describe(index));
    return id;
  };

  private describe(index: number): FrameInput {
    const frames = this.table("frameTable");
    const funcs = this.table("funcTable");
    const func = frames.indexColumn("func").get(index);
    if (func < 0 || func >= funcs.length) throw new EvidenceParseError(FORMAT, `frame ${index} names function ${func}, beyond the function table's ${funcs.length}`, { offset: frames.offset });
    const str = (column: string, at: number): string | null => {
      const values = funcs.column(column);
      const stringIndex = values && at < values.length ? values.get(at) : -1;
      return stringIndex < 0 ? null : this.strings.string(stringIndex, `funcTable.${column}`, FORMAT);
    };
    const number = (table: FirefoxTable, column: string, at: number): number | null => {
      const values = table.column(column);
      const value = values && at < values.length ? values.get(at) : -1;
      return value >= 0 ? value : null;
    };
    let name = str("name", func) ?? "(unnamed)";
    let file: string | null;
    if (this.layout.fileNameBySource) {
      const source = number(funcs, "source", func);
      const filename = source !== null && this.sources ? number(this.sources, "filename", source) : null;
      file = filename === null ? null : this.strings.string(filename, "sources.filename", FORMAT);
    } else {
      file = str("fileName", func);
    }
    let line = number(funcs, "lineNumber", func);
    let col = number(funcs, "columnNumber", func);
    const isJS = (number(funcs, "isJS", func) ?? 0) === 1;
    if (this.layout.fileNameHoldsLine && isJS && file) {
      // Before version 18 a JS function with a column kept "file:line" in fileName and the column as its line.
      const match = /^(.*):([0-9]+)$/.exec(file);
      if (match) {
        col = line;
        file = match[1];
        line = Number(match[2]);
      }
    }
    const resource = number(funcs, "resource", func);
    let module: string | null = null;
    let resourceType = -1;
    if (resource !== null) {
      const resources = this.table("resourceTable");
      if (resource >= resources.length) throw new EvidenceParseError(FORMAT, `function ${func} names resource ${resource}, beyond the resource table's ${resources.length}`, { offset: funcs.offset });
      const nameIndex = number(resources, "name", resource);
      module = nameIndex === null ? null : this.strings.string(nameIndex, "resourceTable.name", FORMAT);
      resourceType = number(resources, "type", resource) ?? -1;
    }
    const frameLine = number(frames, "line", index);
    if (frameLine !== null && frameLine !== line) this.droppedLines++;
    const implied = categoryKind(this.categories, number(frames, "category", index) ?? -1);
    // A JS function's module is its script, as for Gecko and V8 profiles (its resource is the script's origin).
    if (isJS) return { name, file, line, col, module: file ?? module, kind: "js" };
    if (name === "") name = "(unnamed)";
    if (resourceType === RESOURCE_LIBRARY && module !== null) return { name, file, line, col, module, kind: isKernelLibrary(module) ? "kernel" : (implied ?? "native") };
    return { name, file, line, col, module, kind: name === "(root)" ? "program" : (implied ?? "other") };
  }
}

/** Cumulative times from `time`, or from `timeDeltas` (version 50+). */
function sampleTimes(table: FirefoxTable, count: number): Float64Array | null {
  const time = table.floatColumn("time");
  if (time && time.length === count) return time.view().slice();
  const deltas = table.floatColumn("timeDeltas");
  if (deltas && deltas.length === count) {
    const times = new Float64Array(count);
    let at = 0;
    for (let k = 0; k < count; k++) times[k] = at += deltas.get(k);
    return times;
  }
  return null;
}

function columnOf(table: FirefoxTable, name: string, count: number): Float64Array | null {
  const column = table.column(name);
  return column instanceof FloatColumn && column.length === count ? column.view().slice() : null;
}

class ProcessedImport {
  readonly threads: FirefoxThread[] = [];
  readonly collector = new FirefoxCollector(FORMAT, (_node, thread) => this.threads.push(thread));

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {}

  async finish(): Promise<void> {
    const { builder } = this;
    const root = this.collector.finish();
    if (!this.collector.sawObject) throw new EvidenceParseError(FORMAT, "the input is not a processed profile (no top-level object)", { offset: 0 });
    const meta = root.meta;
    if (!meta) throw new EvidenceParseError(FORMAT, "the profile has no meta object", { offset: 0 });
    if (meta.preprocessedProfileVersion === undefined && typeof meta.version === "number") {
      throw new EvidenceParseError(FORMAT, "this is a Gecko profile (meta.version without meta.preprocessedProfileVersion), not a processed profile: import it with --format gecko", { offset: root.metaOffset });
    }
    const layout = layoutOf(meta, root.metaOffset);
    const categories = categoryNames(meta);
    const timesAreBytes = sampleUnit(meta, "time") === "bytes";
    const cpuUnit = sampleUnit(meta, "threadCPUDelta");
    const intervalMs = metaNumber(meta, "interval", 1);
    const sharedMaker = layout.tablesShared ? this.frameMaker(layout, root.shared, root.shared, root.shared, categories) : null;
    const sharedStacks = sharedMaker ? this.stackResolver(root.shared, sharedMaker) : null;
    const makers: FrameMaker[] = sharedMaker ? [sharedMaker] : [];
    let samples = 0;
    let markers = 0;
    for (const thread of this.threads) {
      markers += thread.markers;
      let stacks = sharedStacks;
      const tablesOf = (name: string) => thread.tables.get(name);
      if (!stacks && ["samples", "jsAllocations", "nativeAllocations"].some((t) => (tablesOf(t)?.length ?? 0) > 0)) {
        const maker = this.frameMaker(layout, thread, layout.stringsShared ? root.shared : thread, root.shared, categories);
        makers.push(maker);
        stacks = this.stackResolver(thread, maker);
      }
      const trackId = threadTrack(builder, thread, typeof thread.fields.processType === "string" ? thread.fields.processType : null);
      const pauses = pausesOf(Array.isArray(thread.fields.pausedRanges) ? thread.fields.pausedRanges : null, 0);
      for (const [name, weightType, bytesMetric, countMetric] of [
        ["samples", null, undefined, undefined],
        ["jsAllocations", "bytes", "alloc_bytes", "alloc_count"],
        ["nativeAllocations", "bytes", "native_alloc_bytes", "native_alloc_count"],
      ] as const) {
        const table = tablesOf(name);
        if (!table || !stacks) continue;
        const stackColumn = table.indexColumn("stack");
        const count = stackColumn.length;
        if (count === 0) continue;
        if (table.declaredLength !== null && table.declaredLength !== count) throw new EvidenceParseError(FORMAT, `a thread's ${name} has ${count} stacks for a length of ${table.declaredLength}`, { offset: table.offset });
        const stackIds = new Int32Array(count);
        for (let k = 0; k < count; k++) stackIds[k] = stacks.resolve(stackColumn.get(k));
        const times = timesAreBytes ? null : sampleTimes(table, count);
        if (!times && !timesAreBytes) throw new EvidenceParseError(FORMAT, `a thread's ${name} has no time (or timeDeltas) for every stack`, { offset: table.offset });
        await writeThreadSamples(builder, FORMAT, {
          trackId,
          stacks: stackIds,
          timesMs: times,
          weights: columnOf(table, name === "samples" ? layout.weightColumn : "weight", count),
          weightType: weightType ?? table.weightType ?? "samples",
          cpuDeltas: name === "samples" ? columnOf(table, "threadCPUDelta", count) : null,
          cpuUnit,
          intervalMs,
          pauses,
          bytesMetric,
          countMetric,
          negative: name === "nativeAllocations" ? { code: "FIREFOX_DEALLOCATIONS_SKIPPED", message: "The native allocations table's deallocations (negative sizes) were not imported; only allocations were." } : undefined,
        });
        samples += count;
      }
      await builder.checkpoint();
    }
    recordUnread(builder, root, markers);
    const droppedLines = makers.reduce((sum, m) => sum + m.droppedLines, 0);
    if (droppedLines > 0) builder.limit("FIREFOX_FRAME_LINES", "Frames carry their function's line; the line each sample was executing (frameTable.line) was not kept.", droppedLines);
    if (timesAreBytes) builder.limit("FIREFOX_SIZE_PROFILE", "The profile's sample times are byte offsets (a size profile, meta.sampleUnits.time = bytes); samples were imported without times.");
    if (samples === 0) throw new EvidenceParseError(FORMAT, "the profile has no samples on any thread", { offset: 0 });
    const metadata = builder.metadata;
    metadata.processed_version = String(layout.version);
    if (typeof meta.version === "number") metadata.gecko_version = String(meta.version);
    metadata.time_origin_ms = String(metaNumber(meta, "startTime", 0));
    if (typeof meta.product === "string") metadata.product = builder.bound(meta.product, "other");
    if (typeof meta.importedFrom === "string") metadata.imported_from = builder.bound(meta.importedFrom, "other");
    metadata.wall_ns_weighting = "time until the thread's next sample, each moment counted once, ending at a pause; the last sample: one interval";
    metadata.cpu_ns_weighting = "threadCPUDelta of the next sample (the CPU used until then)";
  }

  private frameMaker(layout: Layout, tables: FirefoxScope, strings: FirefoxScope, shared: FirefoxScope, categories: readonly string[]): FrameMaker {
    if (layout.stringsShared && !shared.strings) throw new EvidenceParseError(FORMAT, `a version ${layout.version} profile keeps its strings in shared.stringArray, and it has none`, { offset: shared.offset });
    return new FrameMaker(this.builder, layout, tables, strings, layout.fileNameBySource ? shared.tables.get("sources") : undefined, categories);
  }

  private stackResolver(scope: FirefoxScope, maker: FrameMaker): StackResolver {
    const table = scope.tables.get("stackTable");
    if (!table) throw new EvidenceParseError(FORMAT, "the profile has no stackTable where its version keeps it", { offset: scope.offset });
    return new StackResolver(this.builder, FORMAT, this.maxDepth, table, maker.id);
  }
}

export const firefoxProcessedImporter: FormatImporter = {
  id: "firefox-processed",
  title: "Firefox Profiler processed profile (profiler.firefox.com, samply)",
  extensions: ["json", "json.gz"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{") || !/"meta"\s*:\s*\{/.test(text)) return 0;
    if (/"preprocessedProfileVersion"\s*:\s*\d/.test(text)) return 0.95;
    const fields = ["startTime", "interval", "processType", "stackwalk"].filter((f) => new RegExp(`"${f}"\\s*:`).test(text)).length;
    const columns = /"stringArray"\s*:\s*\[/.test(text) || /"funcTable"\s*:\s*\{/.test(text) || /"stackTable"\s*:\s*\{\s*"(frame|prefix|length)"\s*:/.test(text);
    return fields >= 3 && columns ? 0.9 : 0;
  },

  async parse({ source, builder, limits }: ImportContext) {
    const run = new ProcessedImport(builder, limits.maxDepth);
    await parseJsonStream(source.chunks(), { format: FORMAT, maxDepth: limits.maxDepth, select: run.collector.select, onValue: run.collector.onValue }, () => builder.checkpoint());
    await run.finish();
  },
};
