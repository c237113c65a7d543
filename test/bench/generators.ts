import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { seeded } from "../../analysis/critical-path/fixture.test-helpers";

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
