/**
 * Linux `perf script` text: per sample a header line `comm pid/tid [cpu] time: period event:`
 * then its call chain leaf first (`\taddr symbol+off (dso)`), then a blank line. Each sample is a
 * timed sample (time relative to the first) on a track per thread, weighted in one metric per
 * event (its period, or 1) plus `samples` (1 each); stacks are root-first. Kernel frames are
 * `kernel`, perf-<pid>.map JIT frames `js`, the rest `native`; modules are the dso paths.
 */
import type { EvidenceBuilder, FrameInput } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { int64 } from "../evidence/int64";
import { headText as decodeHead, lineBatches } from "../io/text";
import { demangledFrame } from "../symbols/demangle";
import { EvidenceParseError } from "./errors";
import { lowerSnake } from "./metric-names";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "perf-script";
const FIRST_INVALID_LINES_SHOWN = 5;

/**
 * `comm pid/tid [cpu] secs.frac: period event: rest`: comm may hold spaces and, in older perf,
 * is right-aligned; pid/, [cpu], the time and the period are each optional (perf script -F).
 */
const SAMPLE_HEADER = /^\s*(\S.*?)\s+(?:(\d+)\/)?(\d+)\s+(?:\[(\d+)\]\s+)?(?:(\d+)\.(\d+):\s+)?(?:(\d+)\s+)?(\S+):(?:\s+(.*))?$/;
const FRAME = /^\s*([0-9a-fA-F]+)(?:\s+(.*))?$/;
/** perf script -F +srcline prints `  file.c:123` under a frame. */
const SRCLINE = /^\s+(\S.*):(\d+)$/;
/** Event modifiers (cycles:u, cpu-clock:ppp, cpu/cycles/k), not part of the event's name. */
const MODIFIERS = /[:/]([ukhHGIpPSDWeb]+)$/;
const JIT_DSO = /(^|\/)perf-\d+\.map$|(^|\/)jitted-\d+-\d+\.so$|^\[JIT\]/;
/** Time-based software events count nanoseconds in their period. */
const NANOSECOND_EVENTS = new Set(["cpu-clock", "task-clock"]);

interface PendingSample {
  comm: string;
  pid: string | null;
  tid: string;
  timeNs: number | null;
  period: number | null;
  event: string;
  /** The header's line. */
  line: number;
  /** Call-chain entry keys, leaf first, as printed. */
  frames: string[];
  /** Source files perf printed under entries (-F +srcline), by index. */
  files: Map<number, string> | null;
}

/** perf's event name without modifiers: cpu-clock:ppp → cpu-clock; tracepoints keep their group. */
export function eventName(event: string): string {
  let name = event;
  const modifiers = MODIFIERS.exec(name);
  if (modifiers && modifiers.index > 0) name = name.slice(0, name[modifiers.index] === "/" ? modifiers.index + 1 : modifiers.index);
  return name;
}

function isKernelAddress(address: string): boolean {
  // 0xffff800000000000 and above: the kernel half of x86-64 and arm64 address spaces.
  return address.length === 16 && parseInt(address.slice(0, 5), 16) >= 0xffff8;
}

/** The last balanced `(…)` group at the end of `text`, or -1: the dso, whose path may itself hold parentheses. */
function dsoStart(text: string): number {
  if (!text.endsWith(")")) return -1;
  let depth = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text[i];
    if (c === ")") depth++;
    else if (c === "(" && --depth === 0) return i;
  }
  return -1;
}

function timeNs(seconds: string, fraction: string): number {
  // Micro- (default) or nanosecond (--ns) fractions; both fit a double exactly at boot-relative scales.
  return Number(seconds) * 1e9 + Number(fraction.padEnd(9, "0").slice(0, 9));
}

/**
 * Call-chain entries to frames. An entry is first described (parsed once per distinct text) and
 * turned into a frame when its sample ends, so a source file printed under it can still join it.
 */
class PerfFrames {
  /** Whole call-chain lines seen before → their key: most lines repeat verbatim. */
  private readonly byLine = new Map<string, string>();
  private readonly described = new Map<string, FrameInput>();
  private readonly ids = new Map<string, number>();
  constructor(private readonly builder: EvidenceBuilder) {}

  /** The key of one call-chain entry `addr symbol+off (dso)`; null when the text is not one. */
  describe(text: string): string | null {
    const seen = this.byLine.get(text);
    if (seen !== undefined) return seen;
    const key = this.describeNew(text);
    // Bounded: distinct lines are bounded by the program's call sites, but a cap keeps a pathological input in check.
    if (key !== null && this.byLine.size < 1_000_000) this.byLine.set(text, key);
    return key;
  }

  private describeNew(text: string): string | null {
    const match = FRAME.exec(text);
    if (!match) return null;
    const rest = (match[2] ?? "").trim();
    const key = `${isKernelAddress(match[1].toLowerCase()) ? "k" : "u"}${rest}`;
    if (this.described.has(key)) return key;
    let symbol = rest;
    let dso: string | null = null;
    const open = dsoStart(rest);
    if (open >= 0) {
      dso = rest.slice(open + 1, -1);
      symbol = rest.slice(0, open).trim();
    }
    symbol = symbol.replace(/\+0x[0-9a-f]+$/i, "") || "[unknown]";
    let kind: FrameKind = "native";
    if (key[0] === "k" || (dso !== null && dso.startsWith("[kernel"))) kind = "kernel";
    else if (dso !== null && JIT_DSO.test(dso)) kind = "js";
    const module = dso === null || dso === "[unknown]" || dso === "inlined" ? null : dso;
    this.described.set(key, demangledFrame({ name: symbol, module, kind }));
    return key;
  }

  id(key: string, file: string | null): number {
    const idKey = file === null ? key : `${key}\u0000${file}`;
    let id = this.ids.get(idKey);
    if (id === undefined) {
      id = this.builder.frame({ ...this.described.get(key)!, file });
      this.ids.set(idKey, id);
    }
    return id;
  }
}

export const perfScriptImporter: FormatImporter = {
  id: "perf-script",
  title: "Linux perf script output",
  extensions: ["perf-script", "perf", "perfscript", "perf.txt"],
  version: "2",

  sniff(head, headText, fileName) {
    try {
      const text = head[0] === 0xff || head[0] === 0xfe ? decodeHead(head) : headText;
      if (text.includes("\u0000")) return 0;
      const named = /\.(perf|perf-script|perfscript)(\.txt)?$|(^|\/)perf\.(script|txt)$|(^|\/)out\.perf$/i.test(fileName ?? "");
      const lines = text.split("\n");
      if (head.length >= 64 * 1024) lines.pop();
      let headers = 0;
      let frames = 0;
      let other = 0;
      let perfHeaderBlock = false;
      for (const raw of lines.slice(0, 400)) {
        const line = raw.replace(/\r$/, "");
        if (line.trim() === "") continue;
        if (line.startsWith("#")) {
          if (/^# (captured on|perf version|event) *:/.test(line)) perfHeaderBlock = true;
          continue;
        }
        if (line.startsWith("\t") && FRAME.test(line)) frames++;
        else if (SAMPLE_HEADER.test(line)) headers++;
        else other++;
      }
      if (headers === 0) return perfHeaderBlock ? 0.5 : 0;
      if (other > (headers + frames) / 10) return named ? 0.3 : 0;
      if (frames > 0) return perfHeaderBlock || named ? 0.95 : 0.85;
      return perfHeaderBlock || named ? 0.8 : 0.4;
    } catch {
      return 0;
    }
  },

  async parse({ source, builder, limits }: ImportContext) {
    const frames = new PerfFrames(builder);
    let samplesMetric = -1;
    const eventMetrics = new Map<string, number>();
    let origin: number | null = null;
    let lineNo = 0;
    let sampleCount = 0;
    let current: PendingSample | null = null;
    let sawCallChain = false;
    let emptyStack: number | null = null;
    let truncatedStacks = 0;
    let outOfOrder = 0;
    let lastTime = -Infinity;
    let invalidLines = 0;
    const firstInvalid: number[] = [];
    // A file cut mid-line (no final newline) is how truncation shows.
    let endsWithNewline = true;
    let lastTrack = { pid: null as string | null, tid: "", comm: "", id: -1 };
    let lastLineKind: "blank" | "frame" | "header" | "other" = "blank";

    const metricFor = (event: string, hasPeriod: boolean): number => {
      let id = eventMetrics.get(event);
      if (id === undefined) {
        const base = eventName(event);
        const unit = hasPeriod ? (NANOSECOND_EVENTS.has(base) ? "ns" : "events") : "events";
        id = builder.metric({ name: lowerSnake(base, "event"), unit, kind: "sampled" });
        eventMetrics.set(event, id);
      }
      return id;
    };

    const flush = () => {
      const sample = current;
      current = null;
      if (!sample) return;
      let leaf: number | null = null;
      const depth = Math.min(sample.frames.length, limits.maxDepth);
      if (sample.frames.length > limits.maxDepth) truncatedStacks++;
      // Printed leaf first; the stack tree is root first. Deep stacks keep their root-most frames.
      for (let i = sample.frames.length - 1; i >= sample.frames.length - depth; i--) {
        leaf = builder.stack(leaf, frames.id(sample.frames[i], sample.files?.get(i) ?? null));
      }
      if (leaf === null) {
        builder.limit("PERF_SCRIPT_SAMPLE_WITHOUT_STACK", "Some samples had no call chain; they are drawn under a frame named (no stack).");
        emptyStack ??= builder.stack(null, builder.frame({ name: "(no stack)", kind: "other" }));
        leaf = emptyStack;
      }
      if (sample.tid !== lastTrack.tid || sample.pid !== lastTrack.pid || sample.comm !== lastTrack.comm) {
        lastTrack = { pid: sample.pid, tid: sample.tid, comm: sample.comm, id: builder.track({ processId: sample.pid, processName: sample.comm, threadId: sample.tid, threadName: sample.comm, kind: "thread" }) };
      }
      const track = lastTrack.id;
      let time: number | null = null;
      if (sample.timeNs !== null) {
        origin ??= sample.timeNs;
        time = int64(sample.timeNs - origin, FORMAT, "time", { line: sample.line });
        if (sample.timeNs < lastTime) outOfOrder++;
        lastTime = sample.timeNs;
      }
      if (samplesMetric < 0) samplesMetric = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
      builder.sample(leaf, track, time, samplesMetric, 1);
      builder.sample(leaf, track, time, metricFor(sample.event, sample.period !== null), int64(sample.period ?? 1, FORMAT, "period", { line: sample.line }));
      sampleCount++;
    };

    const invalid = () => {
      invalidLines++;
      if (firstInvalid.length < FIRST_INVALID_LINES_SHOWN) firstInvalid.push(lineNo);
    };

    // Decoded a batch at a time: a decode per line costs more than the parsing.
    for await (const batch of lineBatches(source.chunks(), limits.maxLineLength)) {
      const lines = batch.texts();
      endsWithNewline = batch.endsWithNewline;
      if (batch.bytes.includes(0)) {
        const at = lines.findIndex((l) => l.includes("\u0000"));
        throw new EvidenceParseError(FORMAT, "the text holds NUL bytes: not perf script output, or corrupted", { line: batch.firstLine + at });
      }
      for (const line of lines) {
        lineNo++;
        if (line.length === 0 || line.trim() === "") {
          if (lastLineKind === "frame") sawCallChain = true;
          flush();
          lastLineKind = "blank";
          continue;
        }
        if (line.startsWith("#") && current === null) {
          const header = /^# (perf version|arch|sample duration|time of first sample|time of last sample) *: *(.*)$/.exec(line);
          if (header) builder.metadata[`perf.${header[1].replace(/ /g, "_")}`] = builder.bound(header[2].trim(), "other");
          continue;
        }
        if (current !== null && line.startsWith("\t")) {
          const frame = frames.describe(line);
          if (frame !== null) {
            current.frames.push(frame);
            lastLineKind = "frame";
            continue;
          }
        }
        const header = SAMPLE_HEADER.exec(line);
        if (header) {
          flush();
          const [, comm, pid, tid, , seconds, fraction, period, event, rest] = header;
          current = {
            comm: comm.trim(),
            pid: pid ?? null,
            tid,
            timeNs: seconds !== undefined ? timeNs(seconds, fraction) : null,
            period: period !== undefined ? Number(period) : null,
            event,
            line: lineNo,
            frames: [],
            files: null,
          };
          // Without a call chain (perf record without -g, or script -G) the sampled ip follows the event.
          if (rest) {
            const frame = frames.describe(rest);
            if (frame !== null) current.frames.push(frame);
          }
          lastLineKind = "header";
          continue;
        }
        if (current !== null) {
          const frame = frames.describe(line);
          if (frame !== null) {
            current.frames.push(frame);
            lastLineKind = "frame";
            continue;
          }
          const srcline = SRCLINE.exec(line);
          if (srcline && current.frames.length > 0) {
            (current.files ??= new Map()).set(current.frames.length - 1, srcline[1]);
            continue;
          }
        }
        if (sampleCount === 0 && current === null) {
          throw new EvidenceParseError(FORMAT, "expected a sample line `comm pid time: period event:`", { line: lineNo });
        }
        lastLineKind = "other";
        invalid();
      }
      await builder.checkpoint();
    }
    if (!endsWithNewline && sawCallChain && lastLineKind !== "blank") {
      throw new EvidenceParseError(FORMAT, "the input ends in the middle of a sample: truncated", { line: lineNo });
    }
    flush();

    if (sampleCount === 0) throw new EvidenceParseError(FORMAT, "empty input: no samples", { line: Math.max(1, lineNo), offset: 0 });
    if (invalidLines > 0) {
      const message = `${invalidLines} line(s) were neither sample headers nor call-chain entries and were skipped: line ${firstInvalid.join(", ")}${invalidLines > firstInvalid.length ? ", …" : ""}.`;
      for (let i = 0; i < invalidLines; i++) builder.limit("PERF_SCRIPT_INVALID_LINES", message);
    }
    if (truncatedStacks > 0) {
      builder.limit("STACK_TRUNCATED", `${truncatedStacks} stack(s) were deeper than ${limits.maxDepth} frames; their leaf-most frames were dropped.`);
    }
    if (outOfOrder > 0) {
      builder.limit("PERF_SCRIPT_OUT_OF_ORDER", `${outOfOrder} sample(s) were earlier than the sample before them; times are kept as printed.`);
    }
    builder.metadata.source_format = FORMAT;
    builder.metadata["perf.samples"] = String(sampleCount);
    if (origin !== null) {
      builder.metadata.time_origin_ns = String(origin);
      builder.metadata.time_origin_clock = "perf_clock";
    }
  },
};
