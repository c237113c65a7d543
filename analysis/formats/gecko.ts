/**
 * The Gecko profile format: the JSON Firefox's profiler writes (about:profiling, the DevTools
 * performance panel's "Recorded Performance Data" files, which wrap one), and what Android's
 * simpleperf (gecko_profile_generator.py) and `perf script report gecko` write. Each thread holds
 * `{schema, data}` tables (samples, stackTable, frameTable) and a string table; the profiles of
 * other processes nest under `processes`, each on its own clock (meta.startTime). Every thread is
 * a track (pid, tid, names); its samples become `samples`, `wall_ns` and, from threadCPUDelta,
 * `cpu_ns` (see firefox-profile.ts). A frame's location string says what it is, read as the
 * Firefox Profiler reads it: `0x…` an unsymbolicated address (its library from `libs`),
 * `name (in lib)` native code, `name (url:line:col)` JavaScript, anything else a label.
 * Versions 5 to 31 are read (the layout this reads has not changed since 5; later versions changed
 * markers, which are not imported); older and newer ones are refused by version.
 */
import type { EvidenceBuilder, FrameInput } from "../evidence/builder";
import { parseJsonStream, type JsonValue } from "../io/json-stream";
import { EvidenceParseError, UnsupportedVersionError } from "./errors";
import {
  FirefoxCollector,
  StackResolver,
  categoryKind,
  categoryNames,
  isJsonObject,
  isKernelLibrary,
  metaNumber,
  pausesOf,
  recordUnread,
  sampleUnit,
  threadTrack,
  writeThreadSamples,
  type FirefoxProfileNode,
  type FirefoxThread,
  type JsonObject,
} from "./firefox-profile";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "gecko";
export const GECKO_VERSIONS = { oldest: 5, newest: 31 } as const;

/** A library's address range (the `libs` of a process), for unsymbolicated addresses. */
interface LibRange {
  start: number;
  end: number;
  name: string;
}

function libRanges(libs: JsonValue[] | null): LibRange[] {
  if (!libs) return [];
  const ranges: LibRange[] = [];
  for (const lib of libs) {
    if (!isJsonObject(lib) || typeof lib.start !== "number" || typeof lib.end !== "number") continue;
    const name = typeof lib.name === "string" ? lib.name : typeof lib.debugName === "string" ? lib.debugName : null;
    if (name) ranges.push({ start: lib.start, end: lib.end, name });
  }
  return ranges.sort((a, b) => a.start - b.start);
}

function libraryAt(ranges: LibRange[], address: number): string | null {
  let low = 0;
  let high = ranges.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ranges[mid].start <= address) low = mid + 1;
    else high = mid;
  }
  const lib = ranges[low - 1];
  return lib && address < lib.end ? lib.name : null;
}

/** "a -> b -> url": the last script of a loader chain is the real one. */
function realScript(url: string): string {
  const at = url.lastIndexOf(" -> ");
  return at < 0 ? url : url.slice(at + 4);
}

const JS_LOCATION = /^(.*) \((.+?):([0-9]+)(?::([0-9]+))?\)(?:\[\d+\])?$/;
const JS_ANONYMOUS = /^()(.+?):([0-9]+)(?::([0-9]+))?(?:\[\d+\])?$/;
const NATIVE_LOCATION = /^(.*) \(in ([^)]*)\)(?: (\+ [0-9]+|\((.*):([0-9]+)\)))?$/;

export interface LocationContext {
  libs: LibRange[];
  categories: readonly string[];
}

/** What a Gecko frame's location string says about it (see the file comment). */
export function describeLocation(location: string, relevantForJS: boolean, category: number, ctx: LocationContext): FrameInput {
  const implied = categoryKind(ctx.categories, category);
  if (!relevantForJS) {
    if (/^0x[0-9a-fA-F]+$/.test(location)) {
      const address = Number.parseInt(location, 16);
      const module = Number.isSafeInteger(address) ? libraryAt(ctx.libs, address) : null;
      return { name: location, module, kind: module && isKernelLibrary(module) ? "kernel" : (implied ?? "native") };
    }
    const native = NATIVE_LOCATION.exec(location);
    if (native) {
      const [, name, lib, , file, line] = native;
      return { name: name || location, module: lib, file: file ?? null, line: line ? Number(line) : null, kind: isKernelLibrary(lib) ? "kernel" : (implied ?? "native") };
    }
    const js = JS_LOCATION.exec(location) ?? JS_ANONYMOUS.exec(location);
    if (js) {
      const [, name, rawUrl, line, column] = js;
      const url = realScript(rawUrl);
      return { name: name || `(root scope) ${url}`, file: url, module: url, line: Number(line), col: column ? Number(column) : null, kind: "js" };
    }
  }
  return { name: location, kind: location === "(root)" ? "program" : (implied ?? "other") };
}

/**
 * Version 14 marked JS entry points with relevantForJS; before it they were labels named
 * "AutoEntryScript <reason>", which the Firefox Profiler's upgrader renames to "<reason>".
 */
function upgradedLocation(location: string, version: number): string {
  return version < 14 && location.startsWith("AutoEntryScript ") ? location.slice("AutoEntryScript ".length) : location;
}

/** The root profile's meta, checked: a Gecko profile of a version this reads. */
function checkRootMeta(root: FirefoxProfileNode): JsonObject {
  const meta = root.meta;
  if (!meta) throw new EvidenceParseError(FORMAT, "the profile has no meta object", { offset: 0 });
  if (meta.preprocessedProfileVersion !== undefined) {
    throw new EvidenceParseError(FORMAT, "this is a Firefox Profiler processed profile (meta.preprocessedProfileVersion), not a Gecko profile: import it with --format firefox-processed", { offset: root.metaOffset });
  }
  const version = meta.version;
  const supported = `${GECKO_VERSIONS.oldest} to ${GECKO_VERSIONS.newest}`;
  if (typeof version !== "number" || !Number.isInteger(version)) {
    throw new UnsupportedVersionError(FORMAT, "none", supported, "meta.version is missing or not a whole number (Gecko profiles before version 1 had none)", { offset: root.metaOffset });
  }
  if (version < GECKO_VERSIONS.oldest) {
    throw new UnsupportedVersionError(FORMAT, String(version), supported, `Gecko profiles before version ${GECKO_VERSIONS.oldest} embed other processes as text; load it in profiler.firefox.com and save it again to upgrade it`, { offset: root.metaOffset });
  }
  if (version > GECKO_VERSIONS.newest) {
    throw new UnsupportedVersionError(FORMAT, String(version), supported, `version ${version} is newer than any this importer knows`, { offset: root.metaOffset });
  }
  return meta;
}

class GeckoImport {
  private readonly waiting: { node: FirefoxProfileNode; thread: FirefoxThread }[] = [];
  private rootMeta: JsonObject | null = null;
  private samples = 0;
  private markers = 0;
  private droppedLines = 0;
  private readonly libsByNode = new Map<FirefoxProfileNode, LibRange[]>();
  readonly collector: FirefoxCollector;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {
    this.collector = new FirefoxCollector(FORMAT, (node, thread) => this.waiting.push({ node, thread }));
  }

  /** Writes the threads whose profile's clock is known; at the end, all of them. */
  async drain(final: boolean): Promise<void> {
    while (this.waiting.length > 0) {
      const { node, thread } = this.waiting[0];
      if (!final && (!this.collector.root.meta || !node.meta)) return;
      this.waiting.shift();
      await this.writeThread(node, thread);
    }
  }

  async finish(): Promise<void> {
    const root = this.collector.finish();
    if (!this.collector.sawObject) throw new EvidenceParseError(FORMAT, "the input is not a Gecko profile (no top-level object)", { offset: 0 });
    await this.drain(true);
    const meta = this.rootMeta ?? checkRootMeta(root);
    recordUnread(this.builder, root, this.markers);
    if (this.droppedLines > 0) {
      this.builder.limit("FIREFOX_FRAME_LINES", "Frames carry their function's line; the line each sample was executing (frameTable.line) was not kept.", this.droppedLines);
    }
    if (this.samples === 0) throw new EvidenceParseError(FORMAT, "the profile has no samples on any thread", { offset: 0 });
    const metadata = this.builder.metadata;
    metadata.gecko_version = String(meta.version);
    metadata.time_origin_ms = String(metaNumber(meta, "startTime", 0));
    if (typeof meta.product === "string") metadata.product = this.builder.bound(meta.product, "other");
    if (this.collector.wrapped) metadata.container = "Firefox DevTools recording (Recorded Performance Data)";
    metadata.wall_ns_weighting = "time until the thread's next sample, each moment counted once, ending at a pause; the last sample: one interval";
    metadata.cpu_ns_weighting = "threadCPUDelta of the next sample (the CPU used until then)";
  }

  private async writeThread(node: FirefoxProfileNode, thread: FirefoxThread): Promise<void> {
    const { builder } = this;
    const root = this.collector.root;
    const rootMeta = (this.rootMeta ??= checkRootMeta(root));
    if (!node.meta) throw new EvidenceParseError(FORMAT, "a process's profile has no meta object", { offset: node.offset });
    this.markers += thread.markers;
    const samples = thread.tables.get("samples");
    if (!samples || samples.length === 0) return;
    const stackTable = thread.tables.get("stackTable");
    const frameTable = thread.tables.get("frameTable");
    if (!stackTable || !frameTable) throw new EvidenceParseError(FORMAT, "a thread has samples but no stackTable or frameTable", { offset: samples.offset });
    // A process's sample times count from its own start; one without a start shares the parent's.
    const rootStart = metaNumber(rootMeta, "startTime", 0);
    const shiftMs = metaNumber(node.meta, "startTime", rootStart) - rootStart;
    let libs = this.libsByNode.get(node);
    if (!libs) this.libsByNode.set(node, (libs = libRanges(node.libs ?? root.libs)));
    const ctx: LocationContext = { libs, categories: categoryNames(node.meta.categories ? node.meta : rootMeta) };
    const location = frameTable.indexColumn("location");
    const relevant = frameTable.column("relevantForJS");
    const categories = frameTable.column("category");
    const lines = frameTable.column("line");
    const frameIds = new Int32Array(frameTable.length).fill(-1);
    const frameId = (index: number): number => {
      if (index < 0 || index >= frameIds.length) throw new EvidenceParseError(FORMAT, `a stack names frame ${index}, beyond the frame table's ${frameIds.length}`, { offset: stackTable.offset });
      let id = frameIds[index];
      if (id < 0) {
        const text = upgradedLocation(thread.string(location.get(index), "a frame's location", FORMAT), rootMeta.version as number);
        const input = describeLocation(text, (relevant?.get(index) ?? 0) === 1, categories ? categories.get(index) : -1, ctx);
        const line = lines ? lines.get(index) : -1;
        if (line >= 0 && line !== input.line) this.droppedLines++;
        id = frameIds[index] = builder.frame(input);
      }
      return id;
    };
    const stacks = new StackResolver(builder, FORMAT, this.maxDepth, stackTable, frameId);
    const stackColumn = samples.indexColumn("stack");
    const timeColumn = samples.floatColumn("time");
    if (!timeColumn || timeColumn.length !== stackColumn.length) throw new EvidenceParseError(FORMAT, "a thread's samples have no time for every stack", { offset: samples.offset });
    const count = stackColumn.length;
    const stackIds = new Int32Array(count);
    const times = new Float64Array(count);
    for (let k = 0; k < count; k++) {
      stackIds[k] = stacks.resolve(stackColumn.get(k));
      times[k] = timeColumn.get(k) + shiftMs;
    }
    const weight = samples.floatColumn("weight");
    const cpu = samples.floatColumn("threadCPUDelta");
    const fallbackProcess = typeof thread.fields.processType === "string" ? thread.fields.processType : null;
    await writeThreadSamples(builder, FORMAT, {
      trackId: threadTrack(builder, thread, fallbackProcess),
      stacks: stackIds,
      timesMs: times,
      weights: weight && weight.length === count ? weight.view().slice() : null,
      weightType: samples.weightType ?? "samples",
      cpuDeltas: cpu && cpu.length === count ? cpu.view().slice() : null,
      cpuUnit: sampleUnit(rootMeta, "threadCPUDelta"),
      intervalMs: metaNumber(node.meta, "interval", metaNumber(rootMeta, "interval", 1)),
      pauses: pausesOf(node.pausedRanges, shiftMs),
    });
    this.samples += count;
    await builder.checkpoint();
  }
}

export const geckoImporter: FormatImporter = {
  id: "gecko",
  title: "Gecko profile (Firefox, simpleperf, perf script gecko)",
  extensions: ["json", "json.gz"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{")) return 0;
    if (/"preprocessedProfileVersion"\s*:/.test(text)) return 0;
    // DevTools' "Recorded Performance Data": {label, duration, markers, …, allocations: {sites, …}, profile}.
    if (/"allocations"\s*:\s*\{\s*"sites"\s*:/.test(text) && /"profile"\s*:\s*\{/.test(text)) return 0.95;
    // The meta of a Firefox profile: its clock, interval and process type.
    const fields = ["startTime", "interval", "processType", "stackwalk", "shutdownTime"].filter((f) => new RegExp(`"${f}"\\s*:`).test(text)).length;
    const meta = /"meta"\s*:\s*\{/.test(text) && fields >= 3;
    const geckoTables = /"stringTable"\s*:\s*\[/.test(text) || /"schema"\s*:\s*\{\s*"(stack|location|prefix|frame)"\s*:\s*\d/.test(text);
    if (meta && geckoTables) return 0.95;
    // Firefox writes its hundreds of libraries first, often more than the head holds: a Gecko
    // library has an address range and a breakpad id (a processed profile's have no range).
    const geckoLibs = /"libs"\s*:\s*\[\s*\{[^{}]*"start"\s*:\s*\d[^{}]*"(breakpadId|debugName)"\s*:/.test(text);
    if (geckoLibs && (meta || /^\{\s*"libs"\s*:\s*\[/.test(text))) return 0.85;
    if (meta && /"version"\s*:\s*\d/.test(text)) return 0.7;
    return 0;
  },

  async parse({ source, builder, limits }: ImportContext) {
    const run = new GeckoImport(builder, limits.maxDepth);
    await parseJsonStream(
      source.chunks(),
      { format: FORMAT, maxDepth: limits.maxDepth, select: run.collector.select, onValue: run.collector.onValue },
      async () => {
        await run.drain(false);
        await builder.checkpoint();
      },
    );
    await run.finish();
  },
};
