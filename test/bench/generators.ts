import { createWriteStream } from "node:fs";
import { once } from "node:events";

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
