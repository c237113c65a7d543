/**
 * Chrome Trace Event Format (chrome://tracing, Perfetto's JSON, node --trace-events, many tools),
 * as an array of events or `{traceEvents: […]}`. Slices (X, B/E, instants) become spans on one
 * thread track per pid+tid, async b/e/n spans go on a track per pid+cat+id, flows (s/t/f and
 * bind_id) become `flow` edges between the slices they bind to, counters (C) become measurements,
 * and V8's CPU profiles (Profile/ProfileChunk events, and the CpuProfile instant events of Chrome
 * 65/66 timelines) become frames, stacks and samples, as do the top-level `samples` and
 * `stackFrames` of Hermes / React Native traces (chrome-trace-samples.ts). Times: µs → ns from the
 * earliest event; numbers written as strings (Hermes) are read as numbers. Events are kept
 * compactly and nested per track at the end, so order does not matter.
 */
import { NumberColumn, type EvidenceBuilder } from "../evidence/builder";
import { int64 } from "../evidence/int64";
import { AsciiBytes } from "../evidence/text-coding";
import { parseJsonStream, type JsonPath, type JsonSelection, type JsonValue } from "../io/json-stream";
import { numberValue, TraceSamples } from "./chrome-trace-samples";
import { ScanBudget, TraceEventScanner, type ScannedEvent } from "./chrome-trace-scan";
import { isJsonObject, V8NodeTree, writeV8Samples } from "./cpuprofile";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "chrome-trace";
const CHECKPOINT_EVERY = 16_384;

type JsonObject = { [key: string]: JsonValue };
/**
 * A slice's args: a non-empty object, or its text as JSON.stringify writes it (the scanner's,
 * taken from the file's bytes: for X, i and I events, as ASCII bytes valid during the event), or null.
 */
type SliceArgs = JsonObject | string | AsciiBytes | null;

const FLOW_IN = 1;
const FLOW_OUT = 2;

const FLOW_START = 0;
const FLOW_STEP = 1;
const FLOW_END = 2;

/** Ids are numbers or strings ("0x1f"); both name the same thing as text. */
function idText(value: JsonValue | undefined): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return null;
}

/** An async or flow event's id: `id`, or `id2.global` / `id2.local` (local ids are per process). */
function eventId(event: JsonObject, pid: string | null): string | null {
  const id = idText(event.id);
  if (id !== null) return id;
  if (isJsonObject(event.id2)) {
    const global = idText(event.id2.global);
    if (global !== null) return global;
    const local = idText(event.id2.local);
    if (local !== null) return `${pid}:local:${local}`;
  }
  return null;
}

function categoryOf(cat: JsonValue | undefined): string | null {
  return typeof cat === "string" ? cat : null;
}

function nameOf(name: JsonValue | undefined): string {
  return typeof name === "string" ? name : "(unnamed)";
}

/** A slice's args as an object (text from the scanner is JSON.stringify's, so this is its object). */
function argsValue(args: SliceArgs): JsonObject | null {
  if (args instanceof AsciiBytes) return JSON.parse(args.text()) as JsonObject;
  return typeof args === "string" ? (JSON.parse(args) as JsonObject) : args;
}

function argsObject(value: JsonValue | undefined): JsonObject | null {
  if (!isJsonObject(value)) return null;
  // The first own key decides, without listing them all.
  for (const key in value) if (Object.hasOwn(value, key)) return value;
  return null;
}

class StringTable {
  private readonly ids = new Map<string, number>();
  readonly values: string[] = [];
  id(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.values.length;
      this.ids.set(text, id);
      this.values.push(text);
    }
    return id;
  }
}

/**
 * Where every slice of the trace sits (track, start, duration), kept until the end to nest them.
 * Their text (name, category, args) goes to the builder as a span draft as soon as the slice is
 * complete, so the strings of millions of slices never wait in memory; the slice's index is its
 * draft id.
 */
class Slices {
  readonly track = new NumberColumn();
  readonly start = new NumberColumn();
  /** -1 while a B or b is still open. */
  readonly dur = new NumberColumn();

  get length(): number {
    return this.track.length;
  }

  add(track: number, start: number, dur: number): number {
    this.track.push(track);
    this.start.push(start);
    this.dur.push(dur);
    return this.track.length - 1;
  }
}

interface OpenSlice {
  index: number;
  name: string;
  category: string | null;
  /** Kept until the slice ends: never a view of the input (AsciiBytes), which holds only during its event. */
  args: Exclude<SliceArgs, AsciiBytes>;
}

interface ProfileState {
  trackId: number | null;
  startUs: number | null;
  endUs: number | null;
  tree: V8NodeTree;
  nodeIds: NumberColumn;
  timeDeltas: NumberColumn;
}

interface TrackOwner {
  pid: string | null;
  tid: string | null;
  thread: boolean;
}

class TraceCollector {
  private readonly strings = new StringTable();
  private readonly slices = new Slices();
  private readonly tracks = new Map<string, number>();
  private readonly numericThreadTracks = new Map<number, Map<number, number>>();
  private readonly trackOwners: TrackOwner[] = [];
  private readonly openByTrack = new Map<number, OpenSlice[]>();
  private readonly lastBeginEndTs = new Map<number, number>();
  private readonly openAsync = new Map<string, OpenSlice[]>();
  // Flow v1 (s/t/f) points and flow v2 (bind_id) bindings, resolved once slices are nested.
  private readonly flowTrack = new NumberColumn();
  private readonly flowTs = new NumberColumn();
  private readonly flowKey = new NumberColumn();
  private readonly flowPhase = new NumberColumn();
  private readonly flowEnclosing = new NumberColumn();
  private readonly bindSlice = new NumberColumn();
  private readonly bindKey = new NumberColumn();
  private readonly bindFlags = new NumberColumn();
  // Counter values (C events).
  private readonly counterTs = new NumberColumn();
  private readonly counterValue = new NumberColumn();
  private readonly counterName = new NumberColumn();
  private readonly counterSeries = new NumberColumn();
  private readonly counterPid = new NumberColumn();
  private readonly profiles = new Map<string, ProfileState>();
  /** Top-level `samples` and `stackFrames` (Hermes). */
  readonly traceSamples = new TraceSamples();
  private readonly processNames = new Map<string | null, string>();
  private readonly threadNames = new Map<string, string>();
  private minTs = Infinity;
  private maxTs = -Infinity;
  events = 0;

  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly maxDepth: number,
  ) {}

  event(value: JsonValue, offset: number): void {
    this.events++;
    if (!isJsonObject(value) || typeof value.ph !== "string") {
      this.builder.limit("INVALID_EVENT", "Some trace events are not objects with a ph field; they were skipped.");
      return;
    }
    const event = value;
    const ph = event.ph as string;
    if (ph === "M") {
      this.metadataEvent(event, idText(event.pid), idText(event.tid));
      return;
    }
    const ts = this.timestamp(event.ts);
    if (ts === undefined) return;
    switch (ph) {
      case "X":
      case "B":
        this.bindFlow(event, this.slice(ph, event.pid, event.tid, ts, event.dur, event.tdur, event.name, event.cat, event.s, argsObject(event.args)));
        break;
      case "i":
      case "I":
        if (event.name === "CpuProfile") {
          this.cpuProfileEvent(argsObject(event.args), idText(event.pid), idText(event.tid), offset);
          break;
        }
      // falls through: an instant
      case "E":
      case "R":
        this.slice(ph, event.pid, event.tid, ts, event.dur, event.tdur, event.name, event.cat, event.s, argsObject(event.args));
        break;
      case "b":
      case "S":
        this.asyncBegin(event, ts, idText(event.pid));
        break;
      case "e":
      case "F":
        this.asyncEnd(event, ts, idText(event.pid));
        break;
      case "n":
      case "T":
      case "p":
        this.asyncInstant(event, ts, idText(event.pid));
        break;
      case "s":
      case "t":
      case "f":
        this.flowPoint(event, ts, idText(event.pid), idText(event.tid));
        break;
      case "C":
        this.counter(event, ts, idText(event.pid));
        break;
      case "P":
        this.profileEvent(event, idText(event.pid), idText(event.tid), offset);
        break;
      default:
        this.builder.limit("UNSUPPORTED_PHASE", "Some events have phases this importer does not read (object snapshots, memory dumps, marks of other kinds); they were skipped.");
    }
  }

  /** An X, B, E, i or I event read from its bytes (chrome-trace-scan.ts): what `event` does with it. */
  scannedEvent(event: ScannedEvent): void {
    this.events++;
    const ts = this.timestamp(event.ts);
    if (ts === undefined) return;
    // A Chrome 65/66 timeline keeps its whole CPU profile in the args of one instant event.
    if (event.name === "CpuProfile" && (event.ph === "I" || event.ph === "i")) this.cpuProfileEvent(argsValue(event.args), idText(event.pid), idText(event.tid), 0);
    else this.slice(event.ph, event.pid, event.tid, ts, event.dur, event.tdur, event.name, event.cat, event.s, event.args);
  }

  /** `ts` as a usable timestamp (noted as one), a number or a string holding one (Hermes); undefined, with a limitation, if not. */
  private timestamp(ts: JsonValue | undefined): number | undefined {
    const value = typeof ts === "number" && Number.isFinite(ts) ? ts : numberValue(ts);
    if (value === undefined) {
      this.builder.limit("MISSING_TIMESTAMP", "Some trace events have no numeric ts; they were skipped.");
      return undefined;
    }
    this.noteTime(value);
    return value;
  }

  /** An entry of the top-level `samples` array (Hermes): its thread track, and its time noted. */
  sampleEntry(value: JsonValue): void {
    const ts = this.traceSamples.sample(this.builder, value, (pid, tid) => this.eventThreadTrack(pid, tid));
    if (ts !== undefined) this.noteTime(ts);
  }

  /**
   * A slice event on a thread (X complete, B begin, E end) or an instant (i, I, R); the fields as
   * the event has them. Returns the index of the slice it starts, or -1.
   */
  private slice(
    ph: string,
    pid: JsonValue | undefined,
    tid: JsonValue | undefined,
    ts: number,
    dur: JsonValue | undefined,
    tdur: JsonValue | undefined,
    name: JsonValue | undefined,
    cat: JsonValue | undefined,
    scope: JsonValue | undefined,
    args: SliceArgs,
  ): number {
    switch (ph) {
      case "X": {
        let length = typeof dur === "number" ? dur : numberValue(dur);
        if (length === undefined || !(length >= 0)) {
          // Without dur, the thread time tdur is the only length the event has (speedscope reads it too).
          const threadLength = numberValue(tdur);
          if (threadLength !== undefined && threadLength >= 0) {
            this.builder.limit("DURATION_FROM_TDUR", "Some complete (X) events have no dur, only tdur (thread time); tdur was used as their duration.");
            length = threadLength;
          } else {
            this.builder.limit("MISSING_DURATION", "Some complete (X) events have no valid dur; they were kept with duration 0.");
            length = 0;
          }
        }
        int64(length * 1000, FORMAT, "dur");
        this.noteTime(ts + length);
        return this.addSlice(this.eventThreadTrack(pid, tid), ts, length, name, cat, this.argsText(args));
      }
      case "B": {
        const track = this.eventThreadTrack(pid, tid);
        this.checkOrder(track, ts);
        const index = this.slices.add(track, ts, -1);
        this.openStack(this.openByTrack, track).push({ index, name: nameOf(name), category: categoryOf(cat), args: args instanceof AsciiBytes ? args.text() : args });
        return index;
      }
      case "E": {
        const track = this.eventThreadTrack(pid, tid);
        this.checkOrder(track, ts);
        const open = this.openByTrack.get(track)?.pop();
        if (!open) this.builder.limit("UNMATCHED_END", "Some E events have no open B event on their thread; they were skipped.");
        else {
          // An E ends the innermost open B whatever its name, as Chrome's trace viewer reads it.
          if (typeof name === "string" && name !== open.name) {
            this.builder.limit("MISMATCHED_END", "Some E events name another slice than the innermost open B on their thread; each ended that innermost B.");
          }
          this.close(open, ts, args);
        }
        return -1;
      }
      default:
        return this.addSlice(this.instantTrack(scope, pid, tid), ts, 0, name, cat, this.argsText(args));
    }
  }

  private noteTime(ts: number): void {
    if (ts < this.minTs) this.minTs = ts;
    if (ts > this.maxTs) this.maxTs = ts;
  }

  /** Args as the builder takes them: their JSON text, bounded, or as they lie in the input (the builder bounds them). */
  private argsText(args: SliceArgs): string | AsciiBytes | null {
    if (args === null || args instanceof AsciiBytes) return args;
    return this.builder.bound(typeof args === "string" ? args : JSON.stringify(args), "args");
  }

  /** A complete slice: placed now, drafted now. */
  private addSlice(track: number, ts: number, dur: number, name: JsonValue | undefined, cat: JsonValue | undefined, args: string | AsciiBytes | null): number {
    const index = this.slices.add(track, ts, dur);
    this.builder.spanDraft(index, { name: nameOf(name), category: categoryOf(cat), args });
    return index;
  }

  private close(open: OpenSlice, ts: number, endArgs: SliceArgs, status: string | null = null): void {
    const start = this.slices.start.get(open.index);
    if (ts < start) this.builder.limit("END_BEFORE_BEGIN", "Some slices end before they begin; they were kept with duration 0.");
    this.slices.dur.set(open.index, Math.max(0, ts - start));
    // Chrome shows the E event's args merged over the B event's.
    const args = endArgs ? { ...argsValue(open.args), ...argsValue(endArgs) } : open.args;
    this.builder.spanDraft(open.index, { name: open.name, category: open.category, status, args: this.argsText(args) });
  }

  private checkOrder(track: number, ts: number): void {
    const last = this.lastBeginEndTs.get(track);
    if (last !== undefined && ts < last) {
      this.builder.limit("OUT_OF_ORDER_EVENTS", "Some B/E events on a thread are out of timestamp order; they were matched in file order.");
    }
    this.lastBeginEndTs.set(track, ts);
  }

  private openStack<K>(map: Map<K, OpenSlice[]>, key: K): OpenSlice[] {
    let stack = map.get(key);
    if (!stack) {
      stack = [];
      map.set(key, stack);
    }
    return stack;
  }

  private track(key: string, owner: TrackOwner, make: () => number): number {
    let id = this.tracks.get(key);
    if (id === undefined) {
      id = make();
      this.tracks.set(key, id);
      this.trackOwners[id] = owner;
    }
    return id;
  }

  /**
   * The thread track of an event. Most events carry numeric pid and tid: their tracks are also
   * found by the numbers, without building the text key (a third of the per-event cost of tracks).
   */
  private eventThreadTrack(p: JsonValue | undefined, t: JsonValue | undefined): number {
    if (typeof p !== "number" || typeof t !== "number") return this.threadTrack(idText(p), idText(t));
    let byTid = this.numericThreadTracks.get(p);
    if (byTid === undefined) this.numericThreadTracks.set(p, (byTid = new Map()));
    let track = byTid.get(t);
    if (track === undefined) byTid.set(t, (track = this.threadTrack(idText(p), idText(t))));
    return track;
  }

  private threadTrack(pid: string | null, tid: string | null): number {
    return this.track(`t\u0000${pid}\u0000${tid}`, { pid, tid, thread: true }, () => this.builder.track({ processId: pid, threadId: tid, kind: "thread" }));
  }

  /** Instants scoped to a process ("p") or the whole trace ("g") get their own track. */
  private instantTrack(scope: JsonValue | undefined, p: JsonValue | undefined, t: JsonValue | undefined): number {
    if (scope === "g") return this.track("g", { pid: null, tid: null, thread: false }, () => this.builder.track({ kind: "global" }));
    if (scope === "p") {
      const pid = idText(p);
      return this.track(`p\u0000${pid}`, { pid, tid: null, thread: false }, () => this.builder.track({ processId: pid, kind: "process" }));
    }
    return this.eventThreadTrack(p, t);
  }

  private asyncKey(event: JsonObject, pid: string | null): { key: string; category: string; id: string } | null {
    const id = eventId(event, pid);
    if (id === null) return null;
    const category = typeof event.cat === "string" ? event.cat : "";
    const scope = typeof event.scope === "string" ? event.scope : "";
    return { key: `${pid}\u0000${category}\u0000${scope}\u0000${id}`, category, id };
  }

  private asyncTrack(key: { key: string; category: string; id: string }, pid: string | null, name: string): number {
    return this.track(`a\u0000${key.key}`, { pid, tid: null, thread: false }, () =>
      this.builder.track({ processId: pid, threadId: `${key.category}:${key.id}`, threadName: name, kind: "async" }),
    );
  }

  private asyncBegin(event: JsonObject, ts: number, pid: string | null): void {
    const key = this.asyncKey(event, pid);
    if (!key) {
      this.builder.limit("ASYNC_WITHOUT_ID", "Some async events have no id; they were skipped.");
      return;
    }
    const name = nameOf(event.name);
    const index = this.slices.add(this.asyncTrack(key, pid, name), ts, -1);
    this.openStack(this.openAsync, key.key).push({ index, name, category: categoryOf(event.cat), args: argsObject(event.args) });
  }

  /** Ends the innermost open async slice of the same id with the same name (else the innermost). */
  private asyncEnd(event: JsonObject, ts: number, pid: string | null): void {
    const key = this.asyncKey(event, pid);
    const stack = key ? this.openAsync.get(key.key) : undefined;
    if (!stack || stack.length === 0) {
      this.builder.limit("UNMATCHED_ASYNC_END", "Some async end events have no open begin with the same category and id; they were skipped.");
      return;
    }
    let at = stack.length - 1;
    if (typeof event.name === "string") {
      for (let k = stack.length - 1; k >= 0; k--) {
        if (stack[k].name === event.name) {
          at = k;
          break;
        }
      }
    }
    const [open] = stack.splice(at, 1);
    this.close(open, ts, argsObject(event.args));
  }

  private asyncInstant(event: JsonObject, ts: number, pid: string | null): void {
    const key = this.asyncKey(event, pid);
    if (!key) {
      this.builder.limit("ASYNC_WITHOUT_ID", "Some async events have no id; they were skipped.");
      return;
    }
    this.addSlice(this.asyncTrack(key, pid, nameOf(event.name)), ts, 0, event.name, event.cat, this.argsText(argsObject(event.args)));
  }

  private flowPoint(event: JsonObject, ts: number, pid: string | null, tid: string | null): void {
    const key = this.asyncKey(event, pid);
    if (!key) {
      this.builder.limit("FLOW_WITHOUT_ID", "Some flow events have no id; they were skipped.");
      return;
    }
    const phase = event.ph === "s" ? FLOW_START : event.ph === "t" ? FLOW_STEP : FLOW_END;
    // A flow ends at the next slice on its thread, unless bound to the enclosing one (bp "e").
    const enclosing = phase !== FLOW_END || event.bp === "e";
    this.flowTrack.push(this.threadTrack(pid, tid));
    this.flowTs.push(ts);
    // Flow ids are global: the key leaves out the pid.
    this.flowKey.push(this.strings.id(`flow\u0000${key.category}\u0000${key.id}`));
    this.flowPhase.push(phase);
    this.flowEnclosing.push(enclosing ? 1 : 0);
  }

  private bindFlow(event: JsonObject, slice: number): void {
    const flags = (event.flow_in === true ? FLOW_IN : 0) | (event.flow_out === true ? FLOW_OUT : 0);
    const id = idText(event.bind_id);
    if (flags === 0 || id === null) return;
    this.bindSlice.push(slice);
    this.bindKey.push(this.strings.id(`bind\u0000${id}`));
    this.bindFlags.push(flags);
  }

  private counter(event: JsonObject, ts: number, pid: string | null): void {
    if (!isJsonObject(event.args)) return;
    const id = idText(event.id);
    const name = this.strings.id(id === null ? nameOf(event.name) : `${nameOf(event.name)}[${id}]`);
    for (const [series, value] of Object.entries(event.args)) {
      if (typeof value !== "number") continue;
      this.counterTs.push(ts);
      this.counterValue.push(value);
      this.counterName.push(name);
      this.counterSeries.push(this.strings.id(series));
      this.counterPid.push(pid === null ? -1 : this.strings.id(pid));
    }
  }

  /** V8's CPU profile inside a trace: one Profile event, then ProfileChunk events with the same id. */
  private profileEvent(event: JsonObject, pid: string | null, tid: string | null, offset: number): void {
    if (event.name !== "Profile" && event.name !== "ProfileChunk") {
      this.builder.limit("UNSUPPORTED_PHASE", "Some events have phases this importer does not read (object snapshots, memory dumps, marks of other kinds); they were skipped.");
      return;
    }
    const key = `${pid}\u0000${idText(event.id)}`;
    let profile = this.profiles.get(key);
    if (!profile) {
      profile = { trackId: null, startUs: null, endUs: null, tree: new V8NodeTree(this.builder, FORMAT, this.maxDepth), nodeIds: new NumberColumn(), timeDeltas: new NumberColumn() };
      this.profiles.set(key, profile);
    }
    const data = isJsonObject(event.args) && isJsonObject(event.args.data) ? event.args.data : {};
    if (event.name === "Profile") {
      profile.trackId = this.threadTrack(pid, tid);
      if (typeof data.startTime === "number") {
        profile.startUs = data.startTime;
        this.noteTime(data.startTime);
      }
      return;
    }
    if (profile.trackId === null) profile.trackId = this.threadTrack(pid, tid);
    const cpuProfile = isJsonObject(data.cpuProfile) ? data.cpuProfile : {};
    if (Array.isArray(cpuProfile.nodes)) for (const node of cpuProfile.nodes) profile.tree.add(node, offset);
    if (Array.isArray(cpuProfile.samples)) for (const id of cpuProfile.samples) if (typeof id === "number") profile.nodeIds.push(id);
    if (Array.isArray(data.timeDeltas)) for (const delta of data.timeDeltas) if (typeof delta === "number") profile.timeDeltas.push(delta);
    const endTime = typeof data.endTime === "number" ? data.endTime : cpuProfile.endTime;
    if (typeof endTime === "number") profile.endUs = endTime;
  }

  /**
   * A Chrome 65/66 timeline's CPU profile: one instant event whose args.data.cpuProfile is a whole
   * .cpuprofile (nodes, samples, timeDeltas, startTime and endTime on the trace's clock).
   */
  private cpuProfileEvent(args: JsonObject | null, pid: string | null, tid: string | null, offset: number): void {
    const data = args && isJsonObject(args.data) ? args.data : null;
    const cpuProfile = data && isJsonObject(data.cpuProfile) ? data.cpuProfile : null;
    if (!cpuProfile) {
      this.builder.limit("CPU_PROFILE_WITHOUT_DATA", "Some CpuProfile events carry no args.data.cpuProfile; they were skipped.");
      return;
    }
    const profile: ProfileState = { trackId: this.threadTrack(pid, tid), startUs: null, endUs: null, tree: new V8NodeTree(this.builder, FORMAT, this.maxDepth), nodeIds: new NumberColumn(), timeDeltas: new NumberColumn() };
    this.profiles.set(`CpuProfile\u0000${this.profiles.size}`, profile);
    if (Array.isArray(cpuProfile.nodes)) for (const node of cpuProfile.nodes) profile.tree.add(node, offset);
    if (Array.isArray(cpuProfile.samples)) for (const id of cpuProfile.samples) if (typeof id === "number") profile.nodeIds.push(id);
    const deltas = Array.isArray(cpuProfile.timeDeltas) ? cpuProfile.timeDeltas : Array.isArray(data!.timeDeltas) ? data!.timeDeltas : [];
    for (const delta of deltas) if (typeof delta === "number") profile.timeDeltas.push(delta);
    if (typeof cpuProfile.startTime === "number") {
      profile.startUs = cpuProfile.startTime;
      this.noteTime(cpuProfile.startTime);
    }
    if (typeof cpuProfile.endTime === "number") profile.endUs = cpuProfile.endTime;
  }

  private metadataEvent(event: JsonObject, pid: string | null, tid: string | null): void {
    const args = isJsonObject(event.args) ? event.args : {};
    if (event.name === "process_name" && typeof args.name === "string") this.processNames.set(pid, args.name);
    else if (event.name === "thread_name" && typeof args.name === "string") this.threadNames.set(`${pid}\u0000${tid}`, args.name);
    else if (event.name === "thread_sort_index" && typeof args.sort_index === "number") {
      // No column holds a sort order; keep it where a viewer can find it.
      this.builder.metadata[`thread_sort_index.${pid}.${tid}`] = String(args.sort_index);
    }
  }

  /** Nests and places the slices in one pass over the spans file's order, then writes flow edges, counters and profile samples. */
  async finish(): Promise<void> {
    const { builder, slices } = this;
    if (this.events === 0) builder.limit("NO_EVENTS", "The trace holds no events.");
    const origin = Number.isFinite(this.minTs) ? this.minTs : 0;
    // Every time is placed in ns from the earliest: the latest (an end, too) must still fit.
    if (Number.isFinite(this.maxTs)) int64((this.maxTs - origin) * 1000, FORMAT, "ts");
    builder.metadata.time_origin_us = String(origin);
    this.finishOpenSlices();

    const n = slices.length;
    const track = slices.track.view();
    const start = slices.start.view();
    const dur = slices.dur.view();
    // Per track by start; the longer of two slices starting together encloses the shorter. Grouped
    // by track first; within a track, traces are written in about start order, which the sort uses.
    const order = groupedByTrack(track, n, builder.trackCount);
    sortNearlySorted(order, (a, b) => track[a] - track[b] || start[a] - start[b] || dur[b] - dur[a] || a - b);

    // Each slice is nested and placed in one pass over the spans file's order (see FileOrder), so
    // the writer gets places while the rest are nested. A track's slices come in its run's order,
    // as nesting needs them: an enclosing slice comes before those it encloses. A track's stack of
    // open slices is the parent chain of the last slice placed on it (`innermost`), so no track
    // keeps an array (a trace may have millions of async tracks). Span ids are given in the
    // file's order too: they rise through it.
    const parent = new Int32Array(n).fill(-1);
    const depth = new Int32Array(n);
    const spanIds = new Float64Array(n);
    const innermost = new Int32Array(builder.trackCount).fill(-1);
    const merge = new FileOrder(order, track, start, origin);
    for (let p = 0; p < n; p++) {
      const index = merge.next();
      const s = start[index];
      const end = s + dur[index];
      // Slices that ended by this one's start are done; the innermost one still open encloses it.
      let top = innermost[track[index]];
      while (top >= 0 && start[top] + dur[top] <= s) top = parent[top];
      if (top >= 0) {
        if (end > start[top] + dur[top]) {
          builder.limit("OVERLAPPING_SLICES", "Some slices on a track overlap without nesting; each was placed under the slice it starts in.");
        }
        parent[index] = top;
        depth[index] = depth[top] + 1;
      }
      innermost[track[index]] = index;
      spanIds[index] = builder.allocateSpanId();
      builder.placeSpan(index, {
        spanId: spanIds[index],
        trackId: track[index],
        parentSpanId: parent[index] < 0 ? null : spanIds[parent[index]],
        startNs: (s - origin) * 1000,
        durNs: dur[index] * 1000,
        depth: depth[index],
      });
      if (p % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await builder.checkpoint();
    }

    this.writeFlows(order, parent, spanIds);
    await this.writeCounters(origin);
    for (const profile of this.profiles.values()) {
      await writeV8Samples(builder, {
        format: FORMAT,
        tree: profile.tree,
        nodeIds: profile.nodeIds,
        timeDeltas: profile.timeDeltas,
        startUs: profile.startUs ?? origin,
        endUs: profile.endUs,
        originUs: origin,
        trackId: profile.trackId,
      });
    }
    await this.traceSamples.write(builder, origin, this.maxDepth);
    this.nameTracks();
  }

  /** B and b events never ended run to the end of the trace, marked unfinished. */
  private finishOpenSlices(): void {
    const end = Number.isFinite(this.maxTs) ? this.maxTs : 0;
    const stacks = [...this.openByTrack.values(), ...this.openAsync.values()];
    for (const stack of stacks) {
      for (const open of stack) {
        this.builder.limit("UNFINISHED_SLICE", "Some B or async b events never end; they run to the end of the trace, with status unfinished.");
        this.close(open, Math.max(end, this.slices.start.get(open.index)), null, "unfinished");
      }
    }
  }

  private writeFlows(order: Int32Array, parent: Int32Array, spanIds: Float64Array): void {
    const { builder, slices } = this;
    if (this.flowTs.length === 0 && this.bindSlice.length === 0) return;
    // Where each track's slices sit in `order`.
    const trackFrom = new Map<number, number>();
    const trackTo = new Map<number, number>();
    for (let p = 0; p < order.length; p++) {
      const t = slices.track.get(order[p]);
      if (!trackFrom.has(t)) trackFrom.set(t, p);
      trackTo.set(t, p + 1);
    }
    const enclosingSlice = (t: number, ts: number): number => {
      let lo = trackFrom.get(t) ?? 0;
      let hi = trackTo.get(t) ?? 0;
      // Last slice starting at or before ts; it or one of its ancestors encloses ts, if any does.
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (slices.start.get(order[mid]) <= ts) lo = mid + 1;
        else hi = mid;
      }
      for (let index = lo > (trackFrom.get(t) ?? 0) ? order[lo - 1] : -1; index >= 0; index = parent[index]) {
        if (slices.start.get(index) + slices.dur.get(index) >= ts) return index;
      }
      return -1;
    };
    const nextSlice = (t: number, ts: number): number => {
      let lo = trackFrom.get(t) ?? 0;
      let hi = trackTo.get(t) ?? 0;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (slices.start.get(order[mid]) < ts) lo = mid + 1;
        else hi = mid;
      }
      return lo < (trackTo.get(t) ?? 0) ? order[lo] : -1;
    };

    const points = Array.from({ length: this.flowTs.length }, (_, k) => k);
    points.sort((a, b) => this.flowKey.get(a) - this.flowKey.get(b) || this.flowTs.get(a) - this.flowTs.get(b) || a - b);
    let key = -1;
    let previous = -1;
    for (const k of points) {
      if (this.flowKey.get(k) !== key) {
        key = this.flowKey.get(k);
        previous = -1;
      }
      const t = this.flowTrack.get(k);
      const ts = this.flowTs.get(k);
      let slice = this.flowEnclosing.get(k) ? enclosingSlice(t, ts) : nextSlice(t, ts);
      if (slice < 0) slice = enclosingSlice(t, ts);
      const phase = this.flowPhase.get(k);
      if (slice < 0) {
        builder.limit("FLOW_WITHOUT_SLICE", "Some flow events are not inside (or before) any slice on their thread; their flow was cut there.");
        if (phase === FLOW_START) previous = -1;
        continue;
      }
      if (phase !== FLOW_START && previous >= 0 && previous !== slice) builder.edge(spanIds[previous], spanIds[slice], "flow");
      previous = phase === FLOW_END ? -1 : slice;
    }

    const bindings = Array.from({ length: this.bindSlice.length }, (_, k) => k);
    bindings.sort((a, b) => this.bindKey.get(a) - this.bindKey.get(b) || slices.start.get(this.bindSlice.get(a)) - slices.start.get(this.bindSlice.get(b)) || a - b);
    const lastOut = new Map<number, number>();
    for (const k of bindings) {
      const slice = this.bindSlice.get(k);
      const flags = this.bindFlags.get(k);
      const from = lastOut.get(this.bindKey.get(k));
      if (flags & FLOW_IN) {
        if (from !== undefined && from !== slice) builder.edge(spanIds[from], spanIds[slice], "flow");
        else if (from === undefined) builder.limit("FLOW_WITHOUT_SOURCE", "Some slices take a flow (flow_in) that no earlier slice sends (flow_out).");
      }
      if (flags & FLOW_OUT) lastOut.set(this.bindKey.get(k), slice);
    }
  }

  private async writeCounters(origin: number): Promise<void> {
    for (let k = 0; k < this.counterTs.length; k++) {
      const pid = this.counterPid.get(k);
      this.builder.measurement({
        name: this.strings.values[this.counterName.get(k)],
        value: this.counterValue.get(k),
        aggregation: "sample",
        dimensions: {
          time_ns: Math.round((this.counterTs.get(k) - origin) * 1000),
          pid: pid < 0 ? null : this.strings.values[pid],
          series: this.strings.values[this.counterSeries.get(k)],
        },
      });
      if (k % CHECKPOINT_EVERY === CHECKPOINT_EVERY - 1) await this.builder.checkpoint();
    }
  }

  /** Process and thread names (M events) apply to every track of that process or thread. */
  private nameTracks(): void {
    this.trackOwners.forEach((owner, trackId) => {
      this.builder.nameTrack(trackId, {
        processName: this.processNames.get(owner.pid) ?? null,
        threadName: owner.thread ? (this.threadNames.get(`${owner.pid}\u0000${owner.tid}`) ?? null) : null,
      });
    });
  }
}

function selectTraceEvents(path: JsonPath): JsonSelection {
  if (path.length === 0) return "stream";
  if (typeof path[0] === "number") return "materialize";
  if (path[0] === "traceEvents" || path[0] === "samples" || path[0] === "stackFrames") return path.length === 1 ? "stream" : "materialize";
  return "skip";
}

/**
 * `scan`: whether simple events are read from their bytes (chrome-trace-scan.ts): "adaptive" while
 * the scanner takes most of them (ScanBudget); "always" and "never" only to test that it changes nothing.
 */
export async function parseChromeTrace(ctx: ImportContext, scan: "adaptive" | "always" | "never" = "adaptive"): Promise<void> {
  const collector = new TraceCollector(ctx.builder, ctx.limits.maxDepth);
  const scanner = new TraceEventScanner();
  const budget = new ScanBudget();
  const seen = { array: false, object: false, traceEvents: false };
  await parseJsonStream(
    // The parser copies what it carries from one chunk to the next, the scanner what it keeps.
    ctx.source.chunks({ reuse: true }),
    {
      format: FORMAT,
      maxDepth: ctx.limits.maxDepth,
      // Chrome writes traces whose closing bracket never comes when tracing stops abruptly.
      allowUnterminatedArray: true,
      select: (path) => {
        if (path.length === 1) {
          if (typeof path[0] === "number") seen.array = true;
          else seen.object = true;
          if (path[0] === "traceEvents") seen.traceEvents = true;
        }
        return selectTraceEvents(path);
      },
      onValue: (path, value, offset) => {
        if (path.length === 0) throw new EvidenceParseError(FORMAT, "the top-level value is neither an array of events nor an object", { offset });
        const top = path[0];
        if (typeof top === "string" && path.length === 1) throw new EvidenceParseError(FORMAT, `${top} is not ${top === "stackFrames" ? "an object" : "an array"}`, { offset });
        if (top === "samples") collector.sampleEntry(value);
        else if (top === "stackFrames") collector.traceSamples.stackFrame(ctx.builder, String(path[1]), value);
        else collector.event(value, offset);
      },
      // Offered the elements of the top-level array, of traceEvents and of samples: events only are scanned.
      rawElement:
        scan === "never"
          ? undefined
          : (path, bytes, start, limit, maxNesting) => {
              if (path[0] === "samples" || (scan === "adaptive" && !budget.shouldScan())) return -1;
              const end = scanner.scan(bytes, start, limit, maxNesting);
              if (end >= 0) collector.scannedEvent(scanner.event);
              if (scan === "adaptive") budget.record(end >= 0);
              return end;
            },
    },
    () => {
      // The next chunk may come in the same buffer, rewritten: the scanner must not reuse its text.
      scanner.newChunk();
      return ctx.builder.checkpoint();
    },
  );
  if (seen.object && !seen.traceEvents) throw new EvidenceParseError(FORMAT, "the object has no traceEvents array", { offset: 0 });
  await collector.finish();
}

export const chromeTraceImporter: FormatImporter = {
  id: "chrome-trace",
  title: "Chrome Trace Event Format (JSON)",
  extensions: ["json", "trace", "log"],
  version: "3",
  sniff(_head, headText, fileName) {
    const text = headText.trimStart();
    const named = fileName !== null && /\.(json|trace|log)$/i.test(fileName);
    if (text.startsWith("{")) {
      if (/^\{\s*"traceEvents"\s*:/.test(text) || /"traceEvents"\s*:\s*\[/.test(text)) return 0.95;
      return 0;
    }
    if (text.startsWith("[")) {
      const event = /"ph"\s*:\s*"[A-Za-z]"/.test(text);
      if (event && /"(ts|pid|name)"\s*:/.test(text)) return named ? 0.9 : 0.85;
      // Chrome's unterminated form can start with an empty line of events.
      return /^\[\s*$/.test(text) && named ? 0.3 : 0;
    }
    return 0;
  },
  parse: (ctx) => parseChromeTrace(ctx),
};

/** Slice indices grouped by track (a counting sort), in index order within each track. */
function groupedByTrack(track: ArrayLike<number>, n: number, tracks: number): Int32Array {
  const firsts = new Int32Array(tracks + 1);
  for (let k = 0; k < n; k++) firsts[track[k] + 1]++;
  for (let t = 0; t < tracks; t++) firsts[t + 1] += firsts[t];
  const order = new Int32Array(n);
  for (let k = 0; k < n; k++) order[firsts[track[k]]++] = k;
  return order;
}

/**
 * The slices of `order` (one run per track, each by start) in the spans file's order: by start as
 * placed (whole nanoseconds from `origin`), then track, then position in the run. Placed in that
 * order, with span ids given in it, the spans need no sort when written (the writer checks the
 * order it gets). A merge of the tracks' runs by their heads, kept in a binary heap; `next` gives
 * one slice at a time.
 */
export class FileOrder {
  // Each run's next position in `order`, its end, its track, and its head's start; in typed arrays,
  // as the merge reads them twice per slice or more.
  private readonly positions: Int32Array;
  private readonly ends: Int32Array;
  private readonly runTrack: Int32Array;
  private readonly headStart: Float64Array;
  private readonly heap: Int32Array;
  private size: number;

  constructor(
    private readonly order: Int32Array,
    track: ArrayLike<number>,
    private readonly start: ArrayLike<number>,
    private readonly origin: number,
  ) {
    const n = order.length;
    let runs = 0;
    for (let p = 0; p < n; p++) if (p === 0 || track[order[p]] !== track[order[p - 1]]) runs++;
    this.positions = new Int32Array(runs);
    this.ends = new Int32Array(runs);
    this.runTrack = new Int32Array(runs);
    this.headStart = new Float64Array(runs);
    for (let p = 0, run = -1; p < n; p++) {
      if (p === 0 || track[order[p]] !== track[order[p - 1]]) {
        this.positions[++run] = p;
        this.runTrack[run] = track[order[p]];
        this.headStart[run] = this.startNs(order[p]);
      }
      this.ends[run] = p + 1;
    }
    this.heap = Int32Array.from({ length: runs }, (_, run) => run);
    this.size = runs;
    for (let at = (runs >> 1) - 1; at >= 0; at--) this.down(at);
  }

  /** The next slice in the file's order; -1 after the last. */
  next(): number {
    if (this.size === 0) return -1;
    const run = this.heap[0];
    const index = this.order[this.positions[run]++];
    if (this.positions[run] < this.ends[run]) this.headStart[run] = this.startNs(this.order[this.positions[run]]);
    else this.heap[0] = this.heap[--this.size];
    this.down(0);
    return index;
  }

  private startNs(index: number): number {
    return Math.round((this.start[index] - this.origin) * 1000);
  }

  private before(a: number, b: number): boolean {
    const { headStart } = this;
    return headStart[a] < headStart[b] || (headStart[a] === headStart[b] && this.runTrack[a] < this.runTrack[b]);
  }

  private down(at: number): void {
    const { heap, size } = this;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= size) return;
      const child = left + 1 < size && this.before(heap[left + 1], heap[left]) ? left + 1 : left;
      if (!this.before(heap[child], heap[at])) return;
      const swapped = heap[at];
      heap[at] = heap[child];
      heap[child] = swapped;
      at = child;
    }
  }
}

/**
 * Sorts `order` by `compare`: by insertion while the input is nearly in order (as trace events
 * are), with a general sort once that has moved more than a few elements per element.
 */
export function sortNearlySorted(order: Int32Array, compare: (a: number, b: number) => number): void {
  let budget = 4 * order.length + 1024;
  for (let i = 1; i < order.length; i++) {
    const item = order[i];
    let at = i;
    while (at > 0 && compare(order[at - 1], item) > 0) {
      order[at] = order[at - 1];
      at--;
      if (--budget === 0) {
        order[at] = item;
        order.sort(compare);
        return;
      }
    }
    order[at] = item;
  }
}
