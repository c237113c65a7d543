import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { seeded } from "../../analysis/critical-path/fixture.test-helpers";
import { checkpointEvent, event as jfrEvent, jstring, metadataEvent, SAMPLE_CLASSES, varint } from "../helpers/jfr-writer";

/** Deterministic pseudo-random numbers (benchmarks must be repeatable). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

async function writeLines(file: string, lines: Iterable<string>): Promise<number> {
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  let bytes = 0;
  let buffer = "";
  for (const line of lines) {
    buffer += line;
    if (buffer.length > 1 << 20) {
      bytes += Buffer.byteLength(buffer);
      if (!out.write(buffer)) await once(out, "drain");
      buffer = "";
    }
  }
  bytes += Buffer.byteLength(buffer);
  out.end(buffer);
  await once(out, "finish");
  return bytes;
}

const FUNCTIONS = Array.from({ length: 400 }, (_, i) => `module${i % 17}.function_${i}`);

/** A Chrome trace (array form) of complete events nested on several threads, about `targetBytes` long. */
export function chromeTraceFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(1);
  function* lines() {
    yield "[\n";
    let written = 2;
    let ts = 0;
    let first = true;
    while (written < targetBytes) {
      const tid = 1 + Math.floor(random() * 8);
      const dur = 1 + Math.floor(random() * 500);
      const name = FUNCTIONS[Math.floor(random() * FUNCTIONS.length)];
      const line = `${first ? "" : ",\n"}{"name":"${name}","cat":"bench","ph":"X","ts":${ts},"dur":${dur},"pid":1,"tid":${tid},"args":{"i":${written}}}`;
      first = false;
      ts += Math.floor(random() * 50);
      written += line.length;
      yield line;
    }
    yield "\n]\n";
  }
  return writeLines(file, lines());
}

/**
 * Folded stacks shaped like a real program's: a call tree where each function calls one of a few
 * callees (branching 3), stacks 5–30 deep, so lines share prefixes the way stackcollapse output does.
 */
export function foldedFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(2);
  function* lines() {
    let written = 0;
    while (written < targetBytes) {
      const depth = 5 + Math.floor(random() * 25);
      const frames = ["main"];
      let at = 0;
      for (let d = 0; d < depth; d++) {
        at = (at * 7 + 1 + Math.floor(random() ** 2 * 3) * 131) % FUNCTIONS.length;
        frames.push(FUNCTIONS[at]);
      }
      const line = `${frames.join(";")} ${1 + Math.floor(random() * 1000)}\n`;
      written += line.length;
      yield line;
    }
  }
  return writeLines(file, lines());
}

/**
 * A V8 .cpuprofile with `samples` samples over a call tree of about `nodes` nodes, one hot
 * function (`hotFunction`) taking about a third of the samples.
 */
export function cpuprofileFile(file: string, samples: number, nodes: number): Promise<number> {
  const random = rng(3);
  const parent = [0];
  const names = ["(root)"];
  for (let id = 1; id < nodes; id++) {
    parent.push(Math.floor(random() * id));
    names.push(id === nodes - 1 ? "hotFunction" : FUNCTIONS[id % FUNCTIONS.length]);
  }
  const children: number[][] = names.map(() => []);
  for (let id = 1; id < nodes; id++) children[parent[id]].push(id);
  function* lines() {
    yield '{"nodes":[';
    for (let id = 0; id < nodes; id++) {
      const callFrame = { functionName: names[id], scriptId: "1", url: id === 0 ? "" : `file:///app/${names[id].split(".")[0]}.js`, lineNumber: id % 300, columnNumber: 4 };
      yield `${id ? "," : ""}${JSON.stringify({ id: id + 1, callFrame, hitCount: 0, children: children[id].map((c) => c + 1) })}`;
    }
    yield '],"startTime":1000000,"endTime":' + (1000000 + samples * 100) + ',"samples":[';
    let chunk: string[] = [];
    for (let i = 0; i < samples; i++) {
      const id = random() < 0.33 ? nodes : 2 + Math.floor(random() * (nodes - 2));
      chunk.push(String(id));
      if (chunk.length === 100_000) {
        yield (i >= 100_000 ? "," : "") + chunk.join(",");
        chunk = [];
      }
    }
    if (chunk.length) yield (samples > 100_000 ? "," : "") + chunk.join(",");
    yield '],"timeDeltas":[';
    chunk = [];
    for (let i = 0; i < samples; i++) {
      chunk.push(String(80 + Math.floor(random() * 40)));
      if (chunk.length === 100_000) {
        yield (i >= 100_000 ? "," : "") + chunk.join(",");
        chunk = [];
      }
    }
    if (chunk.length) yield (samples > 100_000 ? "," : "") + chunk.join(",");
    yield "]}\n";
  }
  return writeLines(file, lines());
}

// Firefox Profiler (Gecko, processed), stackprof, Instruments deep copy and Safari recordings
// (issue 19, item 11): each about `targetBytes` long, shaped as its tool writes it.

/** Frame names of the new formats' generated files: JS, native and label frames. */
const LOCATIONS = FUNCTIONS.map((name, i) =>
  i % 3 === 0 ? `${name} (https://app.example/${name.split(".")[0]}.js:${1 + (i % 300)}:${1 + (i % 40)})` : i % 3 === 1 ? `${name} (in libxul.so)` : `0x${(0x100000 + i * 64).toString(16)}`,
);

/** A random prefix tree of `count` stacks over `frames` frames (each stack's prefix comes before it). */
function stackTree(random: () => number, count: number, frames: number): [number | null, number][] {
  const stacks: [number | null, number][] = [];
  for (let s = 0; s < count; s++) stacks.push([s === 0 ? null : Math.floor(random() ** 0.5 * s), Math.floor(random() * frames)]);
  return stacks;
}

/** A Gecko profile (version 27) of 8 threads sampled every ms, with CPU deltas, about `targetBytes` long. */
export function geckoProfileFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(11);
  const threads = 8;
  function* lines() {
    const meta = { version: 27, interval: 1, startTime: 1_700_000_000_000, shutdownTime: null, processType: 0, product: "Firefox", stackwalk: 1, categories: [{ name: "Other", color: "grey", subcategories: ["Other"] }], sampleUnits: { time: "ms", eventDelay: "ms", threadCPUDelta: "µs" }, markerSchema: [] };
    yield `{"meta":${JSON.stringify(meta)},"libs":[{"start":1048576,"end":2097152,"offset":0,"name":"libxul.so","path":"/opt/firefox/libxul.so","debugName":"libxul.so","debugPath":"","breakpadId":"AB","arch":"x86_64"}],"threads":[`;
    for (let t = 0; t < threads; t++) {
      const stacks = stackTree(random, 20_000, LOCATIONS.length);
      yield `${t ? "," : ""}{"name":"Thread ${t}","processType":"default","pid":1,"tid":${100 + t},"registerTime":0,"unregisterTime":null,"samples":{"schema":{"stack":0,"time":1,"eventDelay":2,"threadCPUDelta":3},"data":[`;
      let written = 0;
      let time = 0;
      for (let k = 0; written < targetBytes / threads; k++) {
        time += 0.9 + random() * 0.2;
        const row = `${k ? "," : ""}[${Math.floor(random() * stacks.length)},${time.toFixed(3)},0,${Math.floor(random() * 1000)}]`;
        written += row.length;
        yield row;
      }
      yield `]},"markers":{"schema":{"name":0,"startTime":1,"endTime":2,"phase":3,"category":4,"data":5},"data":[]},"stackTable":{"schema":{"prefix":0,"frame":1},"data":${JSON.stringify(stacks)}},`;
      const frameRows = LOCATIONS.map((_, i) => [i, false, 0, null, null, null, 0, 0]);
      yield `"frameTable":{"schema":{"location":0,"relevantForJS":1,"innerWindowID":2,"implementation":3,"line":4,"column":5,"category":6,"subcategory":7},"data":${JSON.stringify(frameRows)}},"stringTable":${JSON.stringify(LOCATIONS)}}`;
    }
    yield `],"processes":[],"pausedRanges":[]}\n`;
  }
  return writeLines(file, lines());
}

/** A processed profile (version 49, as samply writes it) of 8 threads, about `targetBytes` long. */
export function processedProfileFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(12);
  const threads = 8;
  function* lines() {
    const meta = { interval: 1, startTime: 1_700_000_000_000, processType: 0, product: "samply", stackwalk: 1, version: 24, preprocessedProfileVersion: 49, categories: [{ name: "Other", color: "grey", subcategories: ["Other"] }], sampleUnits: { time: "ms", eventDelay: "ms", threadCPUDelta: "µs" }, markerSchema: [] };
    yield `{"meta":${JSON.stringify(meta)},"libs":[],"threads":[`;
    const funcs = FUNCTIONS.length;
    for (let t = 0; t < threads; t++) {
      const stacks = stackTree(random, 20_000, funcs);
      const count = Math.floor(targetBytes / threads / 20);
      const column = (value: (k: number) => string) => {
        const parts: string[] = [];
        for (let k = 0; k < count; k++) parts.push(value(k));
        return parts.join(",");
      };
      let time = 0;
      yield `${t ? "," : ""}{"name":"Thread ${t}","isMainThread":${t === 0},"pid":"1","tid":"${100 + t}","processName":"app","processType":"default","samples":{"length":${count},"weightType":"samples","weight":null,`;
      yield `"stack":[${column(() => String(Math.floor(random() * stacks.length)))}],`;
      yield `"time":[${column(() => (time += 0.9 + random() * 0.2).toFixed(3))}],`;
      yield `"threadCPUDelta":[${column(() => String(Math.floor(random() * 1000)))}]},`;
      yield `"stackTable":{"length":${stacks.length},"prefix":${JSON.stringify(stacks.map((s) => s[0]))},"frame":${JSON.stringify(stacks.map((s) => s[1]))}},`;
      const ids = FUNCTIONS.map((_, i) => i);
      yield `"frameTable":{"length":${funcs},"address":${JSON.stringify(ids.map(() => -1))},"inlineDepth":${JSON.stringify(ids.map(() => 0))},"category":${JSON.stringify(ids.map(() => 0))},"subcategory":${JSON.stringify(ids.map(() => 0))},"func":${JSON.stringify(ids)},"nativeSymbol":${JSON.stringify(ids.map(() => null))},"innerWindowID":${JSON.stringify(ids.map(() => null))},"line":${JSON.stringify(ids.map(() => null))},"column":${JSON.stringify(ids.map(() => null))}},`;
      yield `"funcTable":{"length":${funcs},"name":${JSON.stringify(ids)},"isJS":${JSON.stringify(ids.map((i) => i % 2 === 0))},"relevantForJS":${JSON.stringify(ids.map(() => false))},"resource":${JSON.stringify(ids.map((i) => (i % 2 ? 0 : -1)))},"fileName":${JSON.stringify(ids.map((i) => (i % 2 === 0 ? funcs + 1 : null)))},"lineNumber":${JSON.stringify(ids.map((i) => (i % 2 === 0 ? i : null)))},"columnNumber":${JSON.stringify(ids.map(() => null))}},`;
      yield `"resourceTable":{"length":1,"lib":[0],"name":[${funcs}],"host":[null],"type":[1]},"nativeSymbols":{"length":0,"libIndex":[],"address":[],"name":[],"functionSize":[]},"markers":{"length":0,"category":[],"data":[],"endTime":[],"name":[],"phase":[],"startTime":[]},`;
      yield `"stringArray":${JSON.stringify([...FUNCTIONS, "libapp.so", "https://app.example/app.js"])}}`;
    }
    yield `]}\n`;
  }
  return writeLines(file, lines());
}

/** stackprof results (wall mode, raw: true) of stacks 5–30 deep over 400 methods, about `targetBytes` long. */
export function stackprofFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(13);
  const address = (i: number) => 140_000_000_000 + i * 40;
  function* lines() {
    const frames = Object.fromEntries(FUNCTIONS.map((name, i) => [String(address(i)), { name, file: `/srv/app/lib/${name.split(".")[0]}.rb`, line: 1 + (i % 300), total_samples: 0, samples: 0 }]));
    yield `{"version":1.2,"mode":"wall","interval":1000,"samples":0,"gc_samples":0,"missed_samples":0,"metadata":{},"frames":${JSON.stringify(frames)},"raw":[`;
    let written = 0;
    let samples = 0;
    while (written < targetBytes * 0.8) {
      const depth = 5 + Math.floor(random() * 25);
      const stack = [address(0)];
      let at = 0;
      for (let d = 1; d < depth; d++) stack.push(address((at = (at * 7 + 1 + Math.floor(random() ** 2 * 3) * 131) % FUNCTIONS.length)));
      const count = 1 + Math.floor(random() * 3);
      const entry = `${samples ? "," : ""}${depth},${stack.join(",")},${count}`;
      samples += count;
      written += entry.length;
      yield entry;
    }
    yield `],"raw_timestamp_deltas":[`;
    const deltas: string[] = [];
    for (let k = 0; k < samples; k++) {
      deltas.push(String(950 + Math.floor(random() * 100)));
      if (deltas.length === 100_000 || k === samples - 1) {
        yield (k >= deltas.length ? "," : "") + deltas.join(",");
        deltas.length = 0;
      }
    }
    yield "]}\n";
  }
  return writeLines(file, lines());
}

/** An Instruments deep copy (Weight, Self Weight, Symbol Name) of a call tree about `targetBytes` long, in subtrees of consistent weights. */
export function instrumentsDeepCopyFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(14);
  const quantity = (ns: number) => (ns >= 1e9 ? `${(ns / 1e9).toFixed(2)} s` : ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} µs`);
  function* lines() {
    yield "Weight\tSelf Weight\t\tSymbol Name\n";
    let written = 0;
    while (written < targetBytes) {
      // A subtree of about a thousand nodes: selves in whole µs, weights summed from them.
      interface Node { name: string; self: number; children: Node[] }
      const grow = (depth: number): Node => {
        const children: Node[] = [];
        const fanout = depth > 12 ? 0 : Math.floor(random() * 4);
        for (let c = 0; c < fanout; c++) children.push(grow(depth + 1));
        return { name: FUNCTIONS[Math.floor(random() * FUNCTIONS.length)], self: 1000 * Math.floor(random() * 5000), children };
      };
      const weigh = (node: Node): number => node.self + node.children.reduce((sum, child) => sum + weigh(child), 0);
      const rows: string[] = [];
      const emit = (node: Node, depth: number) => {
        rows.push(`${quantity(weigh(node))}  1.0%\t${quantity(node.self)}\t \t${" ".repeat(depth)}${node.name}\n`);
        for (const child of node.children) emit(child, depth + 1);
      };
      emit({ name: "main", self: 0, children: Array.from({ length: 20 }, () => grow(1)) }, 0);
      for (const row of rows) {
        written += row.length;
        yield row;
      }
    }
  }
  return writeLines(file, lines());
}

/** A Safari timeline recording: sampled stacks 5–20 deep with their durations, and script records, about `targetBytes` long. */
export function safariRecordingFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(15);
  const frames = FUNCTIONS.map((name, i) => JSON.stringify({ sourceID: String(1 + (i % 17)), name, line: 1 + (i % 300), column: 1 + (i % 40), url: `https://app.example/${name.split(".")[0]}.js`, expressionLocation: { line: 2 + (i % 300), column: 3 } }));
  function* lines() {
    yield `{"version":1,"recording":{"displayName":"Timeline Recording 1","startTime":1,"endTime":2,"discontinuities":[],"instrumentTypes":["timeline-record-type-script"],"records":[`;
    let written = 0;
    for (let r = 0; r < 10_000; r++) {
      const start = 1 + r * 0.001;
      const record = `${r ? "," : ""}{"type":"timeline-record-type-script","eventType":"timer-fired","startTime":${start.toFixed(6)},"endTime":${(start + 0.0005).toFixed(6)},"details":${r % 50},"extraDetails":null}`;
      written += record.length;
      yield record;
    }
    yield `],"markers":[],"memoryPressureEvents":[],"sampleStackTraces":[`;
    let samples = 0;
    let time = 1;
    while (written < targetBytes * 0.97) {
      const depth = 5 + Math.floor(random() * 15);
      const stack: string[] = [];
      for (let d = 0; d < depth; d++) stack.push(frames[Math.floor(random() * frames.length)]);
      time += 0.001;
      const trace = `${samples ? "," : ""}{"timestamp":${time.toFixed(6)},"stackFrames":[${stack.join(",")}]}`;
      samples++;
      written += trace.length;
      yield trace;
    }
    yield `],"sampleDurations":[`;
    const durations: string[] = [];
    for (let k = 0; k < samples; k++) {
      durations.push((0.0009 + random() * 0.0002).toFixed(6));
      if (durations.length === 100_000 || k === samples - 1) {
        yield (k >= durations.length ? "," : "") + durations.join(",");
        durations.length = 0;
      }
    }
    yield "]},\"overview\":{}}\n";
  }
  return writeLines(file, lines());
}

/**
 * A V8 .cpuprofile whose samples move through the call tree as a program's do: each sample stays
 * on the stack before it, or calls into a child, or returns to the parent, now and then jumping
 * elsewhere (a new task); so consecutive samples share long stack prefixes, as time order merges
 * them. The tree has about `nodes` nodes, 5–40 deep.
 */
export function walkingCpuprofileFile(file: string, samples: number, nodes: number): Promise<number> {
  const random = rng(4);
  const parent = [-1];
  const depth = [0];
  for (let id = 1; id < nodes; id++) {
    // Mostly a child of a recent node (deep chains), sometimes of any (new branches).
    let p = random() < 0.7 ? id - 1 - Math.floor(random() * Math.min(id, 6)) : Math.floor(random() * id);
    while (depth[p] >= 40) p = parent[p];
    parent.push(p);
    depth.push(depth[p] + 1);
  }
  const children: number[][] = parent.map(() => []);
  for (let id = 1; id < nodes; id++) children[parent[id]].push(id);
  function* lines() {
    yield '{"nodes":[';
    for (let id = 0; id < nodes; id++) {
      const name = id === 0 ? "(root)" : FUNCTIONS[(id * 7) % FUNCTIONS.length];
      const callFrame = { functionName: name, scriptId: "1", url: id === 0 ? "" : `file:///app/${name.split(".")[0]}.js`, lineNumber: id % 300, columnNumber: 4 };
      yield `${id ? "," : ""}${JSON.stringify({ id: id + 1, callFrame, hitCount: 0, children: children[id].map((c) => c + 1) })}`;
    }
    yield '],"startTime":1000000,"endTime":' + (1000000 + samples * 100) + ',"samples":[';
    let at = 1;
    let chunk: string[] = [];
    const flush = (i: number) => {
      const text = (i > chunk.length ? "," : "") + chunk.join(",");
      chunk = [];
      return text;
    };
    for (let i = 0; i < samples; i++) {
      const r = random();
      if (r < 0.01) at = 1 + Math.floor(random() * (nodes - 1));
      else if (r < 0.25 && children[at].length) at = children[at][Math.floor(random() * children[at].length)];
      else if (r < 0.45 && parent[at] > 0) at = parent[at];
      chunk.push(String(at + 1));
      if (chunk.length === 100_000) yield flush(i + 1);
    }
    if (chunk.length) yield flush(samples);
    yield '],"timeDeltas":[';
    for (let i = 0; i < samples; i++) {
      chunk.push(String(80 + Math.floor(random() * 40)));
      if (chunk.length === 100_000) yield flush(i + 1);
    }
    if (chunk.length) yield flush(samples);
    yield "]}\n";
  }
  return writeLines(file, lines());
}

/**
 * A trace v1 session of `calls` tool calls, as an agent makes them: batches of 1–4 parallel calls,
 * each following the previous batch; a third list things (results with ids and paths), the rest
 * read or change what an earlier result named (nested and whole references), a few repeat a read
 * exactly, a few fail. Seeded: the first k events are the same whatever `calls` is.
 */
export function agentSessionTrace(calls: number, seed = 11): { format: "emberscope.trace"; version: 1; events: Record<string, unknown>[] } {
  const random = seeded(seed);
  const events: Record<string, unknown>[] = [];
  let clock = 0;
  let previous: string[] = [];
  const produced: { id: string; items: string[] }[] = [];
  while (events.length < calls) {
    const batch: string[] = [];
    const size = Math.min(1 + Math.floor(random() * 4), calls - events.length);
    for (let b = 0; b < size; b++) {
      const id = `c${events.length}`;
      const kind = random();
      const source = produced.length ? produced[Math.floor(random() * produced.length)] : null;
      const dur = 5 + Math.floor(random() * 200);
      let event: Record<string, unknown>;
      if (kind < 0.33 || !source) {
        const items = Array.from({ length: 3 }, (_, k) => `/repo/src/module_${events.length}_${k}.ts`);
        produced.push({ id, items });
        event = { tool: "list_files", side_effect: "read", arguments: { dir: `/repo/src/d${events.length % 50}` }, result: { files: items.map((p, k) => ({ path: p, size: 1000 + k })) } };
      } else if (kind < 0.8) {
        event = { tool: "read_file", side_effect: "read", arguments: { path: source.items[Math.floor(random() * source.items.length)] }, result: `contents of ${id}` };
      } else if (kind < 0.85) {
        event = { tool: "read_file", side_effect: "read", arguments: { path: source.items[0] }, result: `contents of ${source.items[0]}` };
      } else if (kind < 0.97) {
        event = { tool: "edit_file", side_effect: "write", arguments: { path: source.items[0], patch: { hunks: [{ at: 3, text: "fix" }] } }, result: "applied" };
      } else {
        event = { tool: "run_tests", side_effect: "write", arguments: { filter: source.items[1] }, status: "error", error: "exit 1" };
      }
      events.push({ id, status: "ok", ...event, start: clock, duration_ms: dur, after: previous });
      batch.push(id);
    }
    clock += 250;
    previous = batch;
  }
  return { format: "emberscope.trace", version: 1, events };
}

// Formats that had no generator for the scaling benchmark (issue 19, item 13): perf script,
// callgrind, speedscope, OTLP JSON, Jaeger JSON and pprof, each about `targetBytes` long, written
// as it streams, in the shape of the format's public description (and this project's importer tests).

/** A call path of the folded generator's shape: `main` then 4–29 callees, each one of three a function calls. */
function callPath(random: () => number): number[] {
  const depth = 5 + Math.floor(random() * 25);
  const path = [0];
  let at = 0;
  for (let d = 1; d < depth; d++) path.push((at = (at * 7 + 1 + Math.floor(random() ** 2 * 3) * 131) % FUNCTIONS.length));
  return path;
}

/**
 * Where a generator's call paths come from: "random", a new callPath a sample (nearly every sample
 * a new stack: millions of distinct stack nodes, the worst case for the stack tree), or "pool",
 * a pathPool of 5,000 paths sharing their tops (a few tens of thousands of nodes, as real profiles have).
 */
export type CallPaths = "random" | "pool";

function callPaths(random: () => number, paths: CallPaths): () => number[] {
  if (paths === "random") return () => callPath(random);
  const pool = pathPool(random, 5_000);
  return () => pool.paths[pool.pick()];
}

/** `perf script` output (perf record -g, cycles at 4 kHz) of 8 threads of two processes, call chains leaf first. */
export function perfScriptFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(21);
  const address = (f: number) => (0x401000 + f * 0x40).toString(16);
  const dso = (f: number) => (f % 5 === 0 ? "/usr/lib/x86_64-linux-gnu/libc.so.6" : "/opt/app/bin/server");
  const frameLine = (f: number) => `\t${address(f).padStart(16)} ${FUNCTIONS[f].replace(".", "::")}+0x${(f % 64).toString(16)} (${dso(f)})\n`;
  function* lines() {
    yield "# ========\n# captured on    : Wed Dec  2 16:00:00 2026\n# cmdline : /usr/bin/perf record -g -F 4000 -p 4100,4200\n# ========\n#\n";
    let written = 0;
    let ns = 1_000_000_000;
    while (written < targetBytes) {
      const thread = Math.floor(random() * 8);
      const pid = thread < 4 ? 4100 : 4200;
      ns += 20_000 + Math.floor(random() * 40_000);
      const seconds = `${Math.floor(ns / 1e9)}.${String(ns % 1e9).padStart(9, "0")}`;
      const path = callPath(random);
      let sample = `${pid < 4200 ? "server" : "worker"} ${pid}/${pid + thread} [00${thread % 2}] ${seconds}: ${String(200_000 + Math.floor(random() * 100_000)).padStart(10)} cycles:u: \n`;
      for (let d = path.length - 1; d >= 0; d--) sample += frameLine(path[d]);
      sample += "\n";
      written += sample.length;
      yield sample;
    }
  }
  return writeLines(file, lines());
}

/**
 * A callgrind profile (events Ir Dr, positions line, name compression) of a call tree: function i
 * calls functions 4i+1 … 4i+4, each function a block of self cost lines and its calls with their
 * inclusive cost, so that the call graph has one path per function as a tree-shaped program's would.
 */
export function callgrindFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(22);
  // About 380 bytes per function: the count follows from the size wanted.
  const functions = Math.max(8, Math.floor(targetBytes / 380));
  const selfCost = (f: number) => 1000 + ((f * 7919) % 5000);
  const costLines = 24;
  // Inclusive cost of each function, leaves first (children of f are 4f+1 … 4f+4).
  const inclusive = new Float64Array(functions);
  for (let f = functions - 1; f >= 0; f--) {
    inclusive[f] = selfCost(f) * costLines;
    for (let c = 4 * f + 1; c <= 4 * f + 4 && c < functions; c++) inclusive[f] += inclusive[c];
  }
  const named = new Uint8Array(functions);
  const fn = (f: number) => {
    if (named[f]) return `(${f + 1})`;
    named[f] = 1;
    return `(${f + 1}) ${FUNCTIONS[f % FUNCTIONS.length]}_${f}`;
  };
  function* lines() {
    yield `# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 4100\ncmd: ./server --bench\npart: 1\n\npositions: line\nevents: Ir Dr\nsummary: ${inclusive[0]} ${Math.round(inclusive[0] / 4)}\n\nob=(1) /opt/app/bin/server\n`;
    for (let f = 0; f < functions; f++) {
      let block = `fl=(${(f % 97) + 1})${f < 97 ? ` /src/app/module${f % 97}.c` : ""}\nfn=${fn(f)}\n`;
      const line = 10 + (f % 500);
      for (let l = 0; l < costLines; l++) block += `${l === 0 ? line : "+1"} ${selfCost(f)} ${Math.round(selfCost(f) / 4)}\n`;
      for (let c = 4 * f + 1; c <= 4 * f + 4 && c < functions; c++) {
        block += `cfn=${fn(c)}\ncalls=${1 + Math.floor(random() * 9)} ${10 + (c % 500)}\n+${c - 4 * f} ${inclusive[c]} ${Math.round(inclusive[c] / 4)}\n`;
      }
      yield `${block}\n`;
    }
    yield `totals: ${inclusive[0]} ${Math.round(inclusive[0] / 4)}\n`;
  }
  return writeLines(file, lines());
}

/** A speedscope file: shared frames and one sampled profile per thread (4), stacks of indices root first, weights in µs. */
export function speedscopeFile(file: string, targetBytes: number, paths: CallPaths = "random"): Promise<number> {
  const random = rng(23);
  const nextPath = callPaths(random, paths);
  function* lines() {
    const frames = FUNCTIONS.map((name, i) => ({ name, file: `/app/${name.split(".")[0]}.js`, line: 1 + (i % 300), col: 1 + (i % 40) }));
    yield `{"$schema":"https://www.speedscope.app/file-format-schema.json","exporter":"emberscope-bench","name":"bench","activeProfileIndex":0,"shared":{"frames":${JSON.stringify(frames)}},"profiles":[`;
    const threads = 4;
    for (let t = 0; t < threads; t++) {
      // Samples first (about 90% of a profile's bytes), their weights after.
      yield `${t ? "," : ""}{"type":"sampled","name":"Thread ${t}","unit":"microseconds","startValue":0,"samples":[`;
      let written = 0;
      let count = 0;
      const chunk: string[] = [];
      while (written < (targetBytes * 0.9) / threads) {
        const entry = `[${nextPath().join(",")}]`;
        chunk.push(entry);
        written += entry.length + 1;
        count++;
        if (chunk.length === 10_000) {
          yield (count > chunk.length ? "," : "") + chunk.join(",");
          chunk.length = 0;
        }
      }
      if (chunk.length) yield (count > chunk.length ? "," : "") + chunk.join(",");
      yield `],"weights":[`;
      let end = 0;
      for (let k = 0; k < count; k += 10_000) {
        const weights: number[] = [];
        for (let j = k; j < Math.min(count, k + 10_000); j++) weights.push(200 + Math.floor(random() * 100));
        for (const w of weights) end += w;
        yield (k ? "," : "") + weights.join(",");
      }
      // endValue is known once the weights are: it comes last (a JSON object's keys have no order).
      yield `],"endValue":${end}}`;
    }
    yield "]}\n";
  }
  return writeLines(file, lines());
}

const SERVICES = ["frontend", "cartservice", "checkout", "payment", "shipping", "email", "recommendation", "ad"];
const hex = (random: () => number, digits: number) => {
  let text = "";
  while (text.length < digits) text += Math.floor(random() * 2 ** 32).toString(16).padStart(8, "0");
  return text.slice(0, digits);
};

/** A trace of 8–40 spans across services: a root, then each span a child of an earlier one, starting within it. */
function traceSpans(random: () => number) {
  const traceId = hex(random, 32);
  const count = 8 + Math.floor(random() * 33);
  const spans: { id: string; parent: number; service: number; name: string; kind: number; startUs: number; durUs: number; error: boolean }[] = [];
  const origin = 1_764_680_000_000_000 + Math.floor(random() * 3_600_000_000);
  for (let s = 0; s < count; s++) {
    const parent = s === 0 ? -1 : Math.floor(random() * s);
    const p = parent < 0 ? null : spans[parent];
    const startUs = p ? p.startUs + Math.floor(random() * p.durUs * 0.5) : origin;
    const durUs = p ? Math.max(1, Math.floor(p.durUs * (0.1 + random() * 0.4))) : 50_000 + Math.floor(random() * 200_000);
    const service = p && random() < 0.7 ? p.service : Math.floor(random() * SERVICES.length);
    spans.push({ id: hex(random, 16), parent, service, name: `${["GET", "POST", "query", "call"][s % 4]} ${FUNCTIONS[Math.floor(random() * FUNCTIONS.length)]}`, kind: 1 + (s % 5), startUs, durUs, error: random() < 0.02 });
  }
  return { traceId, spans };
}

/** OTLP/JSON as the Collector's file exporter writes it: one ExportTraceServiceRequest per line, each of 20 traces grouped by service. */
export function otlpJsonFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(24);
  const str = (value: string) => ({ stringValue: value });
  function* lines() {
    let written = 0;
    while (written < targetBytes) {
      const byService = SERVICES.map(() => [] as unknown[]);
      for (let t = 0; t < 20; t++) {
        const { traceId, spans } = traceSpans(random);
        for (const s of spans) {
          byService[s.service].push({
            traceId,
            spanId: s.id,
            ...(s.parent >= 0 ? { parentSpanId: spans[s.parent].id } : {}),
            name: s.name,
            kind: s.kind,
            startTimeUnixNano: String(s.startUs * 1000),
            endTimeUnixNano: String((s.startUs + s.durUs) * 1000),
            attributes: [{ key: "http.method", value: str("GET") }, { key: "http.route", value: str(`/api/${s.name.split(" ")[1]}`) }, { key: "net.peer.port", value: { intValue: "8080" } }],
            status: s.error ? { code: 2, message: "deadline exceeded" } : { code: 0 },
          });
        }
      }
      const request = {
        resourceSpans: SERVICES.map((service, i) => ({ resource: { attributes: [{ key: "service.name", value: str(service) }, { key: "host.name", value: str(`node-${i}`) }] }, scopeSpans: [{ scope: { name: "io.opentelemetry.http", version: "1.30.0" }, spans: byService[i] }] })).filter((r) => r.scopeSpans[0].spans.length > 0),
      };
      const line = `${JSON.stringify(request)}\n`;
      written += line.length;
      yield line;
    }
  }
  return writeLines(file, lines());
}

/** A Jaeger query-API answer ({"data": [trace…]}): traces of 8–40 spans over services, CHILD_OF references, tags and a log on errors. */
export function jaegerJsonFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(25);
  function* lines() {
    yield '{"data":[';
    let written = 0;
    let traces = 0;
    while (written < targetBytes) {
      const { traceId, spans } = traceSpans(random);
      const used = new Set(spans.map((s) => s.service));
      const trace = {
        traceID: traceId,
        spans: spans.map((s) => ({
          traceID: traceId,
          spanID: s.id,
          operationName: s.name,
          references: s.parent >= 0 ? [{ refType: "CHILD_OF", traceID: traceId, spanID: spans[s.parent].id }] : [],
          startTime: s.startUs,
          duration: s.durUs,
          tags: [{ key: "span.kind", type: "string", value: ["internal", "server", "client", "producer", "consumer"][s.kind - 1] }, { key: "http.status_code", type: "int64", value: s.error ? 500 : 200 }, ...(s.error ? [{ key: "error", type: "bool", value: true }] : [])],
          logs: s.error ? [{ timestamp: s.startUs + 1, fields: [{ key: "event", type: "string", value: "error" }, { key: "message", type: "string", value: "deadline exceeded" }] }] : [],
          processID: `p${s.service + 1}`,
          warnings: null,
        })),
        processes: Object.fromEntries([...used].map((i) => [`p${i + 1}`, { serviceName: SERVICES[i], tags: [{ key: "hostname", type: "string", value: `node-${i}` }] }])),
        warnings: null,
      };
      const text = `${traces++ ? "," : ""}${JSON.stringify(trace)}\n`;
      written += text.length;
      yield text;
    }
    yield '],"total":0,"limit":0,"offset":0,"errors":null}\n';
  }
  return writeLines(file, lines());
}

/** Protobuf wire encoding, for the pprof generator: varints and length-delimited fields. */
class Protobuf {
  private bytes: number[] = [];
  varint(value: number): this {
    let v = value;
    while (v >= 0x80) {
      this.bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.bytes.push(v);
    return this;
  }
  uint(field: number, value: number): this {
    return this.varint(field * 8).varint(value);
  }
  message(field: number, body: Protobuf | Uint8Array): this {
    const content = body instanceof Protobuf ? body.done() : body;
    this.varint(field * 8 + 2).varint(content.length);
    for (const byte of content) this.bytes.push(byte);
    return this;
  }
  packed(field: number, values: number[]): this {
    const body = new Protobuf();
    for (const value of values) body.varint(value);
    return this.message(field, body);
  }
  done(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

/**
 * A pprof profile (profile.proto, as Go's runtime/pprof writes a CPU profile, not gzipped): sample
 * types samples/count and cpu/nanoseconds, samples of the folded generator's call paths (locations
 * leaf first), then mapping, locations, functions and the string table, about `targetBytes` long.
 */
export async function pprofFile(file: string, targetBytes: number, paths: CallPaths = "random"): Promise<number> {
  const random = rng(26);
  const nextPath = callPaths(random, paths);
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  let bytes = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const put = async (chunk: Uint8Array) => {
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (pendingBytes >= 1 << 20) {
      if (!out.write(Buffer.concat(pending))) await once(out, "drain");
      bytes += pendingBytes;
      pending = [];
      pendingBytes = 0;
    }
  };
  const strings = ["", "samples", "count", "cpu", "nanoseconds", "/opt/app/bin/server", ...FUNCTIONS, ...FUNCTIONS.map((name) => `/src/app/${name.split(".")[0]}.go`)];
  const name = (f: number) => 6 + f;
  const fileName = (f: number) => 6 + FUNCTIONS.length + f;
  await put(new Protobuf().message(1, new Protobuf().uint(1, 1).uint(2, 2)).message(1, new Protobuf().uint(1, 3).uint(2, 4)).done());
  let written = 0;
  while (written < targetBytes * 0.99) {
    const path = [...nextPath()].reverse().map((f) => f + 1);
    const count = 1 + Math.floor(random() * 3);
    const sample = new Protobuf().message(2, new Protobuf().packed(1, path).packed(2, [count, count * 10_000_000])).done();
    written += sample.length;
    await put(sample);
  }
  const tail = new Protobuf().message(3, new Protobuf().uint(1, 1).uint(2, 0x400000).uint(3, 0x800000).uint(5, 5));
  FUNCTIONS.forEach((_, f) => tail.message(4, new Protobuf().uint(1, f + 1).uint(2, 1).uint(3, 0x401000 + f * 0x40).message(4, new Protobuf().uint(1, f + 1).uint(2, 10 + (f % 300)))));
  FUNCTIONS.forEach((_, f) => tail.message(5, new Protobuf().uint(1, f + 1).uint(2, name(f)).uint(3, name(f)).uint(4, fileName(f)).uint(5, 5 + (f % 300))));
  const encoder = new TextEncoder();
  for (const text of strings) tail.message(6, encoder.encode(text));
  tail.uint(9, 1_764_680_000_000_000_000).uint(10, 30_000_000_000).message(11, new Protobuf().uint(1, 3).uint(2, 4)).uint(12, 10_000_000);
  await put(tail.done());
  bytes += pendingBytes;
  out.end(Buffer.concat(pending));
  await once(out, "finish");
  return bytes;
}

// Formats still without a generator for the scaling benchmark (issue 19, item 13): V8 `--prof`
// logs, Java Flight Recorder recordings and Claude Code session logs. Real profiles repeat a
// modest set of call paths (a program has only so many): these draw theirs from a fixed pool,
// the hot ones far more often, instead of a new random path a sample as the generators above do.

/**
 * `count` distinct call paths (root first, from `main`), grown as a program's are: each a prefix of
 * an earlier one and 1–8 calls more (a callee of callPath's kind at each), so that they share their
 * tops and make a tree of about 4.5 nodes a path; and a skewed pick among them (a few hot, a long tail).
 */
function pathPool(random: () => number, count: number): { paths: number[][]; pick: () => number } {
  const seen = new Set<string>();
  const paths: number[][] = [[0]];
  while (paths.length < count) {
    const from = paths[Math.floor(random() * paths.length)];
    const path = from.slice(0, 1 + Math.floor(random() * from.length));
    for (let extra = 1 + Math.floor(random() * 8); extra > 0 && path.length < 40; extra--) path.push((path[path.length - 1] * 7 + 1 + Math.floor(random() * 12) * 131) % FUNCTIONS.length);
    const key = path.join(",");
    if (seen.has(key)) continue;
    seen.add(key);
    paths.push(path);
  }
  return { paths, pick: () => Math.floor(random() ** 3 * count) };
}

/**
 * A V8 `--prof` log (`isolate-0x…-v8.log`) of the shape Node 20 writes (see test/fixtures/v8-log):
 * version, the binary and libc as shared libraries, builtins and a JavaScript function per
 * FUNCTIONS entry as `code-creation` lines (bytecode first, `~`), then ticks every ~1 ms whose
 * pc and return addresses fall inside those functions (a few in libc or a builtin), from a pool
 * of 5,000 call paths; now and then a hot function is optimized (a new `*` entry at a new
 * address) and its old code deleted, as V8 does while it runs. `samplesOut` gets the tick count.
 */
export function v8LogFile(file: string, targetBytes: number, samplesOut?: { samples?: number }): Promise<number> {
  const random = rng(31);
  const pool = pathPool(random, 5_000);
  const CODE_BASE = 0x1f0a00000000;
  const codeSize = 0x200;
  const addressOf = new Array<number>(FUNCTIONS.length);
  let nextCode = CODE_BASE;
  const hex = (n: number) => `0x${n.toString(16)}`;
  const jsName = (f: number) => `${FUNCTIONS[f].replace(".", "_")} file:///srv/app/${FUNCTIONS[f].split(".")[0]}.js:${10 + (f % 300)}:${1 + (f % 40)}`;
  const create = (f: number, us: number, tier: string) => {
    addressOf[f] = nextCode;
    nextCode += codeSize;
    return `code-creation,JS,${tier === "*" ? 14 : 10},${us},${hex(addressOf[f])},${codeSize},${jsName(f)},${hex(0x2a0000000000 + f * 0x58)},${tier}\n`;
  };
  const BUILTINS = ["ArrayPrototypePush", "StringPrototypeIndexOf", "CallFunction_ReceiverIsAny", "JSEntry", "InterpreterEntryTrampoline"];
  function* lines() {
    let header = "v8-version,11,3,244,8,-node.38,0\nv8-platform,linux,linux\n";
    header += "shared-library,/usr/bin/node,0x400000,0x25fe000,0\nshared-library,/usr/lib/x86_64-linux-gnu/libc.so.6,0x7f5243c1e000,0x7f5243d9a000,0\nshared-library-end\nprofiler,begin,1000\n";
    BUILTINS.forEach((name, i) => (header += `code-creation,Builtin,2,${1000 + i},${hex(0x18c4000 + i * 0x400)},${0x400},${name}\n`));
    FUNCTIONS.forEach((_, f) => (header += create(f, 2000 + f, "~")));
    let written = header.length;
    yield header;
    let us = 40_000;
    let ticks = 0;
    let chunk = "";
    while (written < targetBytes) {
      us += 900 + Math.floor(random() * 200);
      const path = pool.paths[pool.pick()];
      const leaf = random();
      // The pc: in the leaf function, or (one tick in ten) in libc or a builtin it called.
      const pc = leaf < 0.05 ? 0x7f5243c94b02 + Math.floor(random() * 0x1000) : leaf < 0.1 ? 0x18c4000 + Math.floor(random() * 5) * 0x400 + 0x40 : addressOf[path[path.length - 1]] + 0x10 + Math.floor(random() * 0x1e0);
      let line = `tick,${hex(pc)},${us},0,0x0,${leaf < 0.05 ? 5 : 0}`;
      for (let d = leaf < 0.1 ? path.length - 1 : path.length - 2; d >= 0; d--) line += `,${hex(addressOf[path[d]] + 0x40 + ((d * 37) % 0x180))}`;
      chunk += `${line}\n`;
      if (++ticks % 5000 === 0) {
        // A hot function tiers up: new code at a new address, the old deleted.
        const f = pool.paths[pool.pick()][0 | (random() * 5)] ?? 0;
        const old = addressOf[f];
        chunk += create(f, us, "*") + `code-delete,${hex(old)}\n`;
      }
      if (chunk.length >= 1 << 16) {
        written += chunk.length;
        yield chunk;
        chunk = "";
      }
    }
    yield chunk;
    if (samplesOut) samplesOut.samples = ticks;
  }
  return writeLines(file, lines());
}

/** A growable byte buffer with JFR's LEB128 integers. */
class Bytes {
  data: Uint8Array;
  length = 0;
  constructor(capacity = 1 << 16) {
    this.data = new Uint8Array(capacity);
  }
  private room(n: number): void {
    if (this.length + n <= this.data.length) return;
    const grown = new Uint8Array(Math.max(this.data.length * 2, this.length + n));
    grown.set(this.data.subarray(0, this.length));
    this.data = grown;
  }
  byte(b: number): this {
    this.room(1);
    this.data[this.length++] = b;
    return this;
  }
  bytes(values: ArrayLike<number>): this {
    this.room(values.length);
    this.data.set(values, this.length);
    this.length += values.length;
    return this;
  }
  varint(value: number): this {
    // Values here stay below 2^53 and non-negative.
    while (value >= 0x80) {
      this.byte((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    return this.byte(value);
  }
  take(): Uint8Array {
    return this.data.slice(0, this.length);
  }
}

/**
 * A Java Flight Recorder recording (format 2.1, as JDK 17 writes with the default settings) of
 * `jdk.ExecutionSample` events: a run of chunks of about 12 MB each (the JDK's default chunk size),
 * each with its events, one checkpoint of its constant pools (the stack traces, methods, classes,
 * packages and symbols its samples use, and 16 threads) and its metadata (test/helpers/jfr-writer.ts
 * writes those two). Samples every 20 ms a thread, stacks leaf first from a pool of 5,000 call
 * paths (pathPool) of FUNCTIONS as Java methods. Returns the bytes written; `samplesOut` gets the sample count.
 */
export async function jfrFile(file: string, targetBytes: number, samplesOut?: { samples?: number }): Promise<number> {
  const random = rng(32);
  const pool = pathPool(random, 5_000);
  const CHUNK_BYTES = 12 << 20;
  const TICKS_PER_SECOND = 1_000_000_000;
  const THREADS = 16;
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const bigEndian = (view: DataView, at: number, value: number) => view.setBigUint64(at, BigInt(value));
  let bytes = 0;
  let ticks = 1_000_000;
  let samples = 0;
  const classOf = (f: number) => f % 17;
  const packageOf = (f: number) => f % 5;
  while (bytes < targetBytes) {
    const events = new Bytes();
    const usedTraces = new Set<number>();
    const startTicks = ticks;
    const body = new Bytes(64);
    while (events.length < CHUNK_BYTES && bytes + events.length < targetBytes) {
      ticks += Math.floor((20_000_000 + random() * 1_000_000) / THREADS);
      const trace = pool.pick();
      usedTraces.add(trace);
      const thread = 1 + Math.floor(random() * THREADS);
      // size (4 bytes, padded as the JDK writes it), type 100 (jdk.ExecutionSample), startTime, sampledThread, stackTrace.
      body.length = 0;
      body.varint(100).varint(ticks).varint(thread).varint(trace + 1);
      const size = body.length + 4;
      events.byte((size & 0x7f) | 0x80).byte(((size >> 7) & 0x7f) | 0x80).byte(((size >> 14) & 0x7f) | 0x80).byte((size >> 21) & 0x7f).bytes(body.data.subarray(0, body.length));
      samples++;
    }
    // Constant pools: symbols (method and class names, descriptors, packages), then the rest by key.
    const symbols: [number, number[]][] = [];
    FUNCTIONS.forEach((name, f) => symbols.push([1 + f, jstring(name.split(".")[1])]));
    for (let c = 0; c < 17; c++) symbols.push([1000 + c, jstring(`com/example/app/pkg${c % 5}/Module${c}`)]);
    for (let p = 0; p < 5; p++) symbols.push([2000 + p, jstring(`com/example/app/pkg${p}`)]);
    symbols.push([3000, jstring("(Ljava/lang/Object;I)V")]);
    const traces: [number, number[]][] = [];
    for (const t of [...usedTraces].sort((a, b) => a - b)) {
      const path = pool.paths[t];
      const trace = new Bytes().byte(0).varint(path.length);
      for (let d = path.length - 1; d >= 0; d--) trace.varint(1 + path[d]).varint(10 + (path[d] % 300)).varint(d === path.length - 1 ? 1 : 2);
      traces.push([t + 1, [...trace.take()]]);
    }
    const pools: [number, [number, number[]][]][] = [
      [22, symbols],
      [23, Array.from({ length: 5 }, (_, p) => [1 + p, varint(2000 + p)] as [number, number[]])],
      [24, Array.from({ length: 17 }, (_, c) => [1 + c, [...varint(1000 + c), ...varint(1 + packageOf(c))]] as [number, number[]])],
      [25, FUNCTIONS.map((_, f) => [1 + f, [...varint(1 + classOf(f)), ...varint(1 + f), ...varint(3000)]] as [number, number[]])],
      [26, [[1, jstring("JIT compiled")], [2, jstring("Inlined")]]],
      [28, traces],
      [21, Array.from({ length: THREADS }, (_, t) => [1 + t, [...jstring(`worker-${t}`), ...varint(4000 + t), ...jstring(`pool-1-thread-${t + 1}`), ...varint(20 + t)]] as [number, number[]])],
    ];
    const checkpoint = Uint8Array.from(jfrEvent(1, checkpointEvent(pools)));
    const metadata = Uint8Array.from(jfrEvent(0, metadataEvent(SAMPLE_CLASSES)));
    const header = new Uint8Array(68);
    const view = new DataView(header.buffer);
    header.set([0x46, 0x4c, 0x52, 0x00]);
    view.setUint16(4, 2);
    view.setUint16(6, 1);
    const checkpointAt = 68 + events.length;
    const metadataAt = checkpointAt + checkpoint.length;
    const size = metadataAt + metadata.length;
    bigEndian(view, 8, size);
    bigEndian(view, 16, checkpointAt);
    bigEndian(view, 24, metadataAt);
    view.setBigUint64(32, 1_764_680_000_000_000_000n + BigInt(startTicks));
    bigEndian(view, 40, ticks - startTicks);
    bigEndian(view, 48, startTicks);
    bigEndian(view, 56, TICKS_PER_SECOND);
    view.setUint32(64, 3);
    for (const part of [header, events.take(), checkpoint, metadata]) if (!out.write(part)) await once(out, "drain");
    bytes += size;
  }
  out.end();
  await once(out, "finish");
  if (samplesOut) samplesOut.samples = samples;
  return bytes;
}

/**
 * A Claude Code session log (JSONL, see analysis/formats/claude-code.ts and
 * test/fixtures/agent-traces): user prompts now and then, assistant messages of 1–4 tool_use
 * blocks (each block on its own line, as Claude Code writes them) and a user line per tool_result,
 * with file contents and command output of 0.2–4 KB (a few errors), a Task call now and then.
 * Every line carries the session's fields (cwd, sessionId, version, gitBranch, uuid chain).
 */
export function claudeCodeSessionFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(33);
  const session = "7d1c3b9e-2f4a-4e1b-9c55-0a8b2d6e4f10";
  const TOOLS = ["Read", "Grep", "Bash", "Edit", "Glob", "Read", "Read", "Bash"];
  let uuidCount = 0;
  let parent: string | null = null;
  let ms = Date.parse("2026-07-14T09:30:00.000Z");
  const uuid = () => `${(++uuidCount).toString(16).padStart(8, "0")}-0000-4000-8000-${uuidCount.toString(16).padStart(12, "0")}`;
  const line = (type: "user" | "assistant", message: unknown, extra: Record<string, unknown> = {}) => {
    const id = uuid();
    ms += 50 + Math.floor(random() * 1500);
    const text = `${JSON.stringify({ parentUuid: parent, isSidechain: false, userType: "external", cwd: "/home/dev/app", sessionId: session, version: "1.0.51", gitBranch: "main", type, message, uuid: id, timestamp: new Date(ms).toISOString(), ...extra })}\n`;
    parent = id;
    return text;
  };
  const filler = (bytes: number) => {
    let text = "";
    for (let n = 1; text.length < bytes; n++) text += `${String(n).padStart(6)}\t${FUNCTIONS[Math.floor(random() * FUNCTIONS.length)]}(value, options); // step ${n}\n`;
    return text;
  };
  const input = (tool: string, k: number) =>
    tool === "Read" || tool === "Edit" ? { file_path: `/home/dev/app/src/module_${k % 997}.ts`, ...(tool === "Edit" ? { old_string: "a", new_string: "b" } : {}) } : tool === "Bash" ? { command: `npm test -- module_${k % 97}`, description: "Run the tests" } : { pattern: `function_${k % 400}`, path: "/home/dev/app/src" };
  function* lines() {
    let written = 0;
    let calls = 0;
    let messages = 0;
    while (written < targetBytes) {
      let text = "";
      if (messages % 40 === 0) text += line("user", { role: "user", content: `Next: make module_${messages % 997} pass its tests.` });
      const message = `msg_${(++messages).toString(36)}`;
      const batch = 1 + Math.floor(random() * 4);
      const ids: string[] = [];
      for (let b = 0; b < batch; b++) {
        const tool = random() < 0.02 ? "Task" : TOOLS[Math.floor(random() * TOOLS.length)];
        const id = `toolu_${(++calls).toString(36).padStart(8, "0")}`;
        ids.push(id);
        const content = [{ type: "tool_use", id, name: tool, input: tool === "Task" ? { description: "Search the code", prompt: "Find where sums are computed." } : input(tool, calls) }];
        text += line("assistant", { id: message, type: "message", role: "assistant", model: "claude-sonnet-4-20250514", content, stop_reason: "tool_use", usage: { input_tokens: 4, cache_read_input_tokens: 13_800, output_tokens: 96 } }, { requestId: `req_${message}` });
      }
      for (const id of ids) text += line("user", { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: filler(200 + Math.floor(random() ** 2 * 4000)), ...(random() < 0.03 ? { is_error: true } : {}) }] });
      written += text.length;
      yield text;
    }
  }
  return writeLines(file, lines());
}

/**
 * A Codex CLI rollout (~/.codex/sessions/…/rollout-*.jsonl) as codex-rs writes it, about
 * `targetBytes` long: session_meta and turn_context, then turns of a user message, reasoning,
 * batches of 1–4 parallel `shell` function calls (now and then an `apply_patch` custom tool call),
 * their outputs ("Exit code: N / Wall time / Output:" text, or the older JSON with metadata) with
 * an exec_command_end event each, token counts, and an assistant message closing the turn.
 */
export function codexRolloutFile(file: string, targetBytes: number): Promise<number> {
  const random = rng(41);
  let ms = Date.parse("2025-09-18T14:02:00.000Z");
  const line = (type: string, payload: unknown) => {
    ms += 10 + Math.floor(random() * 400);
    return `${JSON.stringify({ timestamp: new Date(ms).toISOString(), type, payload })}\n`;
  };
  const filler = (bytes: number) => {
    let text = "";
    for (let n = 1; text.length < bytes; n++) text += `src/module_${n % 97}.ts:${n}:  ${FUNCTIONS[Math.floor(random() * FUNCTIONS.length)]}(value, options);\n`;
    return text;
  };
  const COMMANDS = ["sed -n '1,80p' src/module_K.ts", "rg -n \"function_K\" src", "npm test -- module_K", "ls src", "git diff --stat"];
  function* lines() {
    let written = 0;
    let calls = 0;
    let turns = 0;
    let text = line("session_meta", { id: "0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b", timestamp: new Date(ms).toISOString(), cwd: "/home/dev/app", originator: "codex_cli_rs", cli_version: "0.36.0", instructions: null, git: { commit_hash: "a1b2c3d", branch: "main" } });
    text += line("turn_context", { cwd: "/home/dev/app", approval_policy: "on-request", sandbox_policy: { mode: "workspace-write" }, model: "gpt-5-codex", summary: "auto" });
    while (written < targetBytes) {
      const turn = ++turns;
      if (turn % 20 === 1) {
        const ask = `Make module_${turn % 997} pass its tests.`;
        text += line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: ask }] });
        text += line("event_msg", { type: "user_message", message: ask, kind: "plain" });
      }
      text += line("response_item", { type: "reasoning", summary: [{ type: "summary_text", text: `**Looking at module_${turn % 997}**` }], content: null, encrypted_content: "gAAAAABo" + "x".repeat(200) });
      const batch = 1 + Math.floor(random() * 4);
      const ids: [string, boolean][] = [];
      for (let b = 0; b < batch; b++) {
        const id = `call_${(++calls).toString(36).padStart(8, "0")}`;
        const patch = random() < 0.05;
        ids.push([id, patch]);
        if (patch) text += line("response_item", { type: "custom_tool_call", status: "completed", call_id: id, name: "apply_patch", input: `*** Begin Patch\n*** Update File: src/module_${calls % 97}.ts\n@@\n-  return a - b;\n+  return a + b;\n*** End Patch\n` });
        else {
          const command = COMMANDS[Math.floor(random() * COMMANDS.length)].replace("K", String(calls % 97));
          text += line("response_item", { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", command], workdir: "/home/dev/app", timeout_ms: 120000 }), call_id: id });
        }
      }
      for (const [id, patch] of ids) {
        const exit = random() < 0.04 ? 1 : 0;
        const body = filler(200 + Math.floor(random() ** 2 * 4000));
        if (!patch) text += line("event_msg", { type: "exec_command_end", call_id: id, stdout: "", stderr: "", aggregated_output: "", exit_code: exit, duration: { secs: 0, nanos: 200_000_000 }, formatted_output: "" });
        const output = patch ? JSON.stringify({ output: "Success. Updated the following files:\nM src/module.ts\n", metadata: { exit_code: 0, duration_seconds: 0.0 } }) : random() < 0.5 ? `Exit code: ${exit}\nWall time: 0.2 seconds\nOutput:\n${body}` : JSON.stringify({ output: body, metadata: { exit_code: exit, duration_seconds: 0.2 } });
        text += line("response_item", { type: patch ? "custom_tool_call_output" : "function_call_output", call_id: id, output });
      }
      text += line("event_msg", { type: "token_count", info: { total_token_usage: { input_tokens: 5120 * turn, output_tokens: 180 * turn, total_tokens: 5300 * turn } } });
      if (turn % 5 === 0) text += line("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: `Checked module_${turn % 997}; running the tests next.` }] });
      written += text.length;
      yield text;
      text = "";
    }
  }
  return writeLines(file, lines());
}
