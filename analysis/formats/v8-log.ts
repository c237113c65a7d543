/**
 * V8 `--prof` logs (`isolate-0x…-v8.log`, what `node --prof` and `d8 --prof` write): one CSV event a
 * line. `shared-library` lines give the address ranges of native libraries, `code-creation` lines
 * the address, size and name of each piece of generated code (JavaScript functions at each tier,
 * builtins, bytecode handlers, stubs), `code-move`/`code-delete` move or drop them, and each
 * `tick` line is a sample: the program counter, time (µs since start), VM state and the return
 * addresses on the stack. Ticks are symbolized by the log's own entries, as V8's tick processor
 * (`node --prof-process`) does: an address is looked up in the libraries, then in the code alive
 * at that point of the log.
 *
 * Each tick is one `samples` sample on the isolate's track, stack root first. A JavaScript
 * function is one frame whatever its tier (name, script, line and column from its code's name);
 * other code is named `Type: name` as the tick processor names it. Addresses in a native library
 * are drawn as the library (the log holds no symbols for them; the tick processor asks `nm`), a run
 * of them as one frame; an unknown leaf address is `(unknown)`, unknown callers are left out.
 * Strings come quoted (V8 before 7) or with `\x2C`-style escapes (later).
 */
import type { FrameKind } from "../evidence/schema";
import { lineBatches } from "../io/text";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "v8-log";
const FIRST_INVALID_LINES_SHOWN = 5;
const TICKS_PER_CHECKPOINT = 8192;
/** Code types whose entries are JavaScript functions (V8 ≥ 9 says JS; older versions the compile reason). */
const JS_CODE_TYPES = new Set(["JS", "LazyCompile", "Function", "Script", "Eval"]);
const EVENTS = new Set(["code-creation", "tick", "shared-library", "code-move", "code-delete", "v8-version", "profiler"]);
/** VM states of tick lines (V8's StateTag): before V8 6.3 there were no parser and bytecode-compiler states. */
const VM_STATES_BEFORE_6_3 = ["js", "gc", "compiler", "other", "external", "idle"];
const VM_STATES = ["js", "gc", "parser", "bytecode_compiler", "compiler", "other", "external", "atomics_wait", "idle", "logging"];

/** One CSV field of a V8 log line, unescaped: `\xHH`, `\uHHHH`, `\n`, `\\` and (quoted fields) `\"`. */
function unescapeField(text: string): string {
  if (!text.includes("\\")) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "\\" || i + 1 >= text.length) {
      out += c;
      continue;
    }
    const next = text[++i];
    if (next === "n") out += "\n";
    else if (next === "x" && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) {
      out += String.fromCharCode(parseInt(text.slice(i + 1, i + 5), 16));
      i += 4;
    } else out += next;
  }
  return out;
}

/** A V8 log line's fields: split at commas, but not inside a double-quoted field (V8 before 7 quoted strings). */
export function v8LogFields(line: string): string[] {
  if (!line.includes('"')) return line.split(",").map(unescapeField);
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === "\\" ? 2 : 1;
      fields.push(unescapeField(line.slice(i + 1, j)));
      i = line.indexOf(",", j);
      if (i < 0) break;
      i++;
    } else {
      const comma = line.indexOf(",", i);
      fields.push(unescapeField(line.slice(i, comma < 0 ? line.length : comma)));
      if (comma < 0) break;
      i = comma + 1;
    }
  }
  return fields;
}

/** `0x…` as a number (NaN when it is none); Number() reads hexadecimal, faster than a pattern and parseInt. */
function address(text: string | undefined): number {
  return text !== undefined && text.charCodeAt(0) === 48 && text.charCodeAt(1) === 120 ? Number(text) : NaN;
}

interface CodeEntry {
  start: number;
  end: number;
  type: string;
  name: string;
  /** Builder frame id, made at the first tick that lands in it; -1 before. */
  frame: number;
  dead: boolean;
}

/**
 * The code alive at the current point of the log: non-overlapping address ranges (a new entry
 * replaces any it overlaps, as V8's CodeMap does). A large sorted array and a small one new
 * entries go into, merged when the small one outgrows about √n, so that both an insert and a
 * lookup stay cheap for logs of hundreds of thousands of entries.
 */
class CodeMap {
  private big: CodeEntry[] = [];
  private small: CodeEntry[] = [];

  add(entry: CodeEntry): void {
    this.dropOverlapping(entry.start, entry.end);
    this.small.splice(lastAtOrBefore(this.small, entry.start) + 1, 0, entry);
    if (this.small.length > 64 && this.small.length * this.small.length > 4 * this.big.length) this.merge();
  }

  find(addr: number): CodeEntry | null {
    for (const list of [this.small, this.big]) {
      const i = lastAtOrBefore(list, addr);
      if (i >= 0 && !list[i].dead && addr < list[i].end) return list[i];
    }
    return null;
  }

  /** The live entry that starts exactly at `start`. */
  at(start: number): CodeEntry | null {
    for (const list of [this.small, this.big]) {
      const i = lastAtOrBefore(list, start);
      if (i >= 0 && !list[i].dead && list[i].start === start) return list[i];
    }
    return null;
  }

  remove(entry: CodeEntry): void {
    entry.dead = true;
    const i = this.small.indexOf(entry);
    if (i >= 0) this.small.splice(i, 1);
  }

  private dropOverlapping(start: number, end: number): void {
    for (const list of [this.small, this.big]) {
      for (let i = Math.max(0, lastAtOrBefore(list, start)); i < list.length && list[i].start < end; i++) {
        if (list[i].end > start) list[i].dead = true;
      }
    }
    if (this.small.some((e) => e.dead)) this.small = this.small.filter((e) => !e.dead);
  }

  private merge(): void {
    const big = this.big.filter((e) => !e.dead);
    const merged: CodeEntry[] = [];
    let i = 0;
    let j = 0;
    while (i < big.length || j < this.small.length) {
      if (j >= this.small.length || (i < big.length && big[i].start < this.small[j].start)) merged.push(big[i++]);
      else merged.push(this.small[j++]);
    }
    this.big = merged;
    this.small = [];
  }
}

/** Index of the last entry starting at or before `addr`, or -1. */
function lastAtOrBefore(list: CodeEntry[], addr: number): number {
  let lo = 0;
  let hi = list.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid].start <= addr) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** `fib /srv/app.js:1:13` → name, file, line, column; a name without a position is the whole text. */
export function jsFunctionName(text: string): { name: string; file: string | null; line: number | null; col: number | null } {
  // Before V8 5.x the tier was a prefix of the name.
  const clean = text.replace(/^[~*^+]/, "");
  const space = clean.lastIndexOf(" ");
  const where = clean.slice(space + 1);
  const position = /^(.*):(\d+):(\d+)$/.exec(where);
  if (!position) {
    // A script's top-level code is named by its file alone.
    const file = space < 0 && /[./]/.test(clean) ? clean : null;
    return { name: (file === null && clean.trim()) || "(anonymous)", file, line: null, col: null };
  }
  const name = space >= 0 ? clean.slice(0, space).trim() : "";
  return { name: name || "(anonymous)", file: position[1] || null, line: Number(position[2]), col: Number(position[3]) };
}

interface Library {
  start: number;
  end: number;
  path: string;
  frame: number;
}

export const v8LogImporter: FormatImporter = {
  id: "v8-log",
  title: "V8 --prof log (isolate-*.log)",
  extensions: ["log"],
  version: "1",

  sniff(head, headText, fileName) {
    if (head.includes(0)) return 0;
    const named = /(^|\/)isolate-0x[0-9a-f]+(-\d+)?(-v8)?\.log$/i.test(fileName ?? "");
    const lines = headText.split("\n").slice(0, 200);
    if (/^v8-version,\d+,\d+,/.test(lines[0] ?? "")) return 0.97;
    let known = 0;
    let other = 0;
    for (const line of lines) {
      if (line.trim() === "") continue;
      const event = line.slice(0, line.indexOf(","));
      if (EVENTS.has(event) || /^[a-z]+(-[a-z]+)*$/.test(event)) known += EVENTS.has(event) ? 1 : 0;
      else other++;
    }
    if (known === 0 || other > known) return 0;
    return named ? 0.9 : 0.6;
  },

  async parse({ source, builder, limits }: ImportContext) {
    const codes = new CodeMap();
    const libraries: Library[] = [];
    const samples = builder.metric({ name: "samples", unit: "count", kind: "sampled" });
    const isolate = /(?:^|\/)isolate-(0x[0-9a-f]+)(?:-(\d+))?/i.exec(source.fileName ?? "");
    const track = builder.track({ processId: isolate?.[2] ?? null, threadId: isolate?.[1] ?? null, threadName: isolate ? `isolate ${isolate[1]}` : "isolate", kind: "thread" });
    let vmStates = VM_STATES;
    const stateCounts = new Map<string, number>();
    let ticks = 0;
    let codeEntries = 0;
    let lineNo = 0;
    let invalidLines = 0;
    const firstInvalid: number[] = [];
    let droppedCallers = 0;
    let libraryTicks = 0;
    let deepStacks = 0;
    let sawV8Event = false;
    let unknownFrame = -1;
    const stack: number[] = [];

    const invalid = () => {
      invalidLines++;
      if (firstInvalid.length < FIRST_INVALID_LINES_SHOWN) firstInvalid.push(lineNo);
    };
    const library = (addr: number): Library | null => {
      // Later entries for the same start replace earlier ones (Node logs its binary's range as it grows).
      for (let i = libraries.length - 1; i >= 0; i--) if (addr >= libraries[i].start && addr < libraries[i].end) return libraries[i];
      return null;
    };
    const codeFrame = (entry: CodeEntry): number => {
      if (entry.frame >= 0) return entry.frame;
      let kind: FrameKind = "native";
      let frame;
      if (JS_CODE_TYPES.has(entry.type)) {
        const js = jsFunctionName(entry.name);
        kind = "js";
        frame = builder.frame({ name: js.name, file: js.file, line: js.line, col: js.col, kind });
      } else frame = builder.frame({ name: `${entry.type}: ${entry.name || "(anonymous)"}`, kind });
      entry.frame = frame;
      return frame;
    };
    const libraryFrame = (lib: Library): number => {
      if (lib.frame < 0) lib.frame = builder.frame({ name: lib.path.slice(lib.path.lastIndexOf("/") + 1) || lib.path, module: lib.path, kind: "native" });
      return lib.frame;
    };

    // Ticks hit the same few thousand addresses again and again: each is resolved once until the code changes.
    const resolved = new Map<number, number>();
    const LIBRARY = -1;
    const UNKNOWN = -2;
    const libraryOf = new Map<number, Library>();
    const resolve = (addr: number): number => {
      const known = resolved.get(addr);
      if (known !== undefined) return known;
      let result: number;
      const lib = library(addr);
      if (lib) {
        result = LIBRARY;
        libraryOf.set(addr, lib);
      } else {
        const entry = codes.find(addr);
        result = entry ? codeFrame(entry) : UNKNOWN;
      }
      if (resolved.size >= 1 << 20) resolved.clear();
      resolved.set(addr, result);
      return result;
    };
    // The same address texts recur in tick after tick: each is read as a number once.
    const addressOfText = new Map<string, number>();
    const addressOf = (text: string | undefined): number => {
      if (text === undefined) return NaN;
      let value = addressOfText.get(text);
      if (value === undefined) {
        value = address(text);
        if (addressOfText.size < 1 << 20) addressOfText.set(text, value);
      }
      return value;
    };
    const codeChanged = () => {
      if (resolved.size > 0) resolved.clear();
    };

    const tick = (fields: string[]) => {
      // tick, pc, time (µs), is_external_callback, tos_or_external_callback, vm_state, stack…
      let pc = addressOf(fields[1]);
      const time = Number(fields[2]);
      let tos = addressOf(fields[4]);
      const state = Number(fields[5]);
      if (!Number.isFinite(pc) || !Number.isFinite(time) || !Number.isFinite(tos) || !Number.isInteger(state)) return invalid();
      if (fields[3] !== "0") {
        // In an external callback the pc may point inside it: the tick processor uses the callback's address.
        pc = tos;
        tos = 0;
      } else if (tos !== 0) {
        // A frameless call leaves its caller's address at the top of the stack, when it is JavaScript.
        const entry = library(tos) ? null : codes.find(tos);
        if (!entry || !JS_CODE_TYPES.has(entry.type)) tos = 0;
      }
      const addresses: number[] = tos !== 0 ? [pc, tos] : [pc];
      let previous = pc;
      for (let i = 6; i < fields.length; i++) {
        const text = fields[i];
        if (text[0] === "+" || text[0] === "-") {
          previous += (text[0] === "-" ? -1 : 1) * parseInt(text.slice(1), 16);
          addresses.push(previous);
        } else if (text !== "" && text[0] !== "o") {
          previous = addressOf(text);
          if (Number.isFinite(previous)) addresses.push(previous);
        }
      }
      // Leaf first in the log.
      stack.length = 0;
      let lastLibrary: Library | null = null;
      for (let i = 0; i < addresses.length; i++) {
        const frame = resolve(addresses[i]);
        if (frame === LIBRARY) {
          const lib = libraryOf.get(addresses[i])!;
          if (i === 0) libraryTicks++;
          if (lib !== lastLibrary) stack.push(libraryFrame(lib));
          lastLibrary = lib;
          continue;
        }
        lastLibrary = null;
        if (frame >= 0) stack.push(frame);
        else if (i === 0) {
          if (unknownFrame < 0) unknownFrame = builder.frame({ name: "(unknown)", kind: "other" });
          stack.push(unknownFrame);
        } else droppedCallers++;
      }
      let leaf: number | null = null;
      const depth = Math.min(stack.length, limits.maxDepth);
      if (stack.length > limits.maxDepth) deepStacks++;
      for (let i = stack.length - 1; i >= stack.length - depth; i--) leaf = builder.stack(leaf, stack[i]);
      builder.sample(leaf!, track, time * 1000, samples, 1);
      const stateName = vmStates[state] ?? `state_${state}`;
      stateCounts.set(stateName, (stateCounts.get(stateName) ?? 0) + 1);
      ticks++;
    };

    const line = (text: string) => {
      const comma = text.indexOf(",");
      const event = comma < 0 ? text : text.slice(0, comma);
      if (event === "tick") {
        sawV8Event = true;
        return tick(text.split(","));
      }
      if (!EVENTS.has(event)) return;
      sawV8Event = true;
      const fields = v8LogFields(text);
      switch (event) {
        case "code-creation": {
          // code-creation, type, kind, [timestamp,] address, size, name[, sfi address, tier]
          const at = fields[4]?.startsWith("0x") ? 4 : 3;
          const start = address(fields[at]);
          const size = Number(fields[at + 1]);
          if (!Number.isFinite(start) || !Number.isInteger(size) || size < 0 || fields.length < at + 3) return invalid();
          codes.add({ start, end: start + size, type: fields[1], name: fields[at + 2], frame: -1, dead: false });
          codeChanged();
          codeEntries++;
          return;
        }
        case "code-move": {
          const from = address(fields[1]);
          const to = address(fields[2]);
          if (!Number.isFinite(from) || !Number.isFinite(to)) return invalid();
          const entry = codes.at(from);
          if (!entry) return;
          codes.remove(entry);
          codes.add({ ...entry, start: to, end: to + (entry.end - entry.start), dead: false });
          codeChanged();
          return;
        }
        case "code-delete": {
          const entry = codes.at(address(fields[1]));
          if (entry) codes.remove(entry);
          codeChanged();
          return;
        }
        case "shared-library": {
          const start = address(fields[2]);
          const end = address(fields[3]);
          if (!fields[1] || !Number.isFinite(start) || !Number.isFinite(end) || end < start) return invalid();
          const known = libraries.find((l) => l.path === fields[1] && l.start === start);
          if (known) known.end = Math.max(known.end, end);
          else libraries.push({ start, end, path: fields[1], frame: -1 });
          codeChanged();
          return;
        }
        case "v8-version": {
          const [major, minor] = [Number(fields[1]), Number(fields[2])];
          builder.metadata["v8.version"] = fields.slice(1, 5).join(".");
          if (major < 6 || (major === 6 && minor < 3)) vmStates = VM_STATES_BEFORE_6_3;
          return;
        }
        case "profiler":
          if (fields[1] === "begin" && fields[2]) builder.metadata["v8.sampling_interval_us"] = fields[2];
          return;
      }
    };

    let checkpointed = 0;
    let endsWithNewline = true;
    let lastLine = "";
    for await (const batch of lineBatches(source.chunks(), limits.maxLineLength)) {
      if (batch.bytes.includes(0)) throw new EvidenceParseError(FORMAT, "the text holds NUL bytes: not a V8 log, or corrupted", { line: batch.firstLine, offset: batch.offset });
      endsWithNewline = batch.endsWithNewline;
      const texts = batch.texts();
      for (let i = 0; i < texts.length; i++) {
        lineNo++;
        if (lineNo === 1 && !/^[a-z][a-z0-9-]*,/.test(texts[0])) throw new EvidenceParseError(FORMAT, "expected a V8 log event line (`v8-version,…`, `code-creation,…`, `tick,…`)", { line: 1, offset: 0 });
        lastLine = texts[i];
        line(texts[i]);
        if (ticks - checkpointed >= TICKS_PER_CHECKPOINT) {
          await builder.checkpoint();
          checkpointed = ticks;
        }
      }
      await builder.checkpoint();
    }
    if (lineNo === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0 });
    if (!sawV8Event) throw new EvidenceParseError(FORMAT, "no V8 log events (code-creation, tick, shared-library) in the input", { line: 1, offset: 0 });
    if (ticks === 0) throw new EvidenceParseError(FORMAT, "the log holds no tick events: was the program run with --prof?", { line: lineNo });
    if (!endsWithNewline && lastLine !== "" && invalidLines > 0 && firstInvalid.includes(lineNo)) {
      builder.limit("V8_LOG_TRUNCATED", "The log ends in the middle of a line (the process was likely killed while writing it); the cut line was skipped.");
      invalidLines--;
      firstInvalid.splice(firstInvalid.indexOf(lineNo), 1);
    }
    if (invalidLines > 0) {
      builder.limit("V8_LOG_INVALID_LINES", `${invalidLines} event line(s) had fields of the wrong shape and were skipped: line ${firstInvalid.join(", ")}${invalidLines > firstInvalid.length ? ", …" : ""}.`, invalidLines);
    }
    if (libraryTicks > 0) {
      builder.limit("V8_LOG_LIBRARY_UNSYMBOLIZED", `${libraryTicks} tick(s) landed in native libraries (V8 and Node's own C++, libc, …): the log holds no symbols for them, so those frames are named after the library.`, libraryTicks);
    }
    if (droppedCallers > 0) {
      builder.limit("V8_LOG_UNKNOWN_CALLERS", `${droppedCallers} return address(es) on sampled stacks matched no code in the log and were left out of their stacks, as the tick processor does.`, droppedCallers);
    }
    if (deepStacks > 0) builder.limit("STACK_TRUNCATED", `${deepStacks} stack(s) were deeper than ${limits.maxDepth} frames; their leaf-most frames were dropped.`, deepStacks);
    const meta = builder.metadata;
    meta.source_format = FORMAT;
    meta["v8.ticks"] = String(ticks);
    meta["v8.code_entries"] = String(codeEntries);
    meta["v8.vm_states"] = [...stateCounts].map(([name, count]) => `${name}=${count}`).join(",");
    meta.time_origin_clock = "v8_log_start";
  },
};
