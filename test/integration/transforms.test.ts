import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { hotspotsQuery } from "../../analysis/queries";
import type { FlameNode } from "../../analysis/queries/flame-tree";
import { formatTransforms, moduleFrameKey, parseTransforms, transformedFlameTreeQuery, transformedHotspotsQuery, type Transform } from "../../analysis/queries/transforms";
import { openEvidence, type EvidenceReader } from "../../server/evidence/engine";
import { analyzeHotspots, callService, flameTree, frameCallees, frameCallers, frameNeighbours, importArtifact, stackExamples, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { rng } from "../bench/generators";
import { tempProject, withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";

/**
 * A small real folded file (dtrace's module`function names a module). Its call tree, by hand:
 * main 3 · main;parse;lex 30 · main;parse;malloc;brk 10 (libc) · main;run 7 · main;run;malloc 20
 * · main;run;loop;step 5 · main;run;loop;step;loop;step 25 · main;fib;fib;fib 8 — 108 samples.
 */
const FOLDED = `main 3
main;parse;lex 30
main;parse;libc\`malloc;libc\`brk 10
main;run 7
main;run;libc\`malloc 20
main;run;loop;step 5
main;run;loop;step;loop;step 25
main;fib;fib;fib 8
`;

/** A tree's samples as folded lines ("a;b;c value", root first, sorted): each node's self value on its path. */
function fold(nodes: readonly FlameNode[]): string[] {
  const byId = new Map(nodes.map((n) => [n.node_id, n]));
  const pathOf = (n: FlameNode): string => (n.parent_id === null ? n.name : `${pathOf(byId.get(n.parent_id)!)};${n.name}`);
  return nodes
    .filter((n) => n.self !== 0)
    .map((n) => `${pathOf(n)} ${n.self}`)
    .sort();
}

/** Every node's total is its self plus its children's totals (nothing lost or counted twice). */
function expectConsistent(nodes: readonly FlameNode[]) {
  const children = new Map<string, number>();
  for (const n of nodes) if (n.parent_id !== null) children.set(n.parent_id, (children.get(n.parent_id) ?? 0) + n.total);
  for (const n of nodes) expect(n.total, n.name).toBeCloseTo(n.self + (children.get(n.node_id) ?? 0), 9);
}

async function importFolded(text: string) {
  const dir = tempProject();
  initWorkspace(dir).close();
  const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "test" };
  writeFileSync(path.join(dir, "small.folded"), text);
  const imported = await callService(importArtifact, ctx, { path: "small.folded" });
  return { ctx, runId: imported.run_id };
}

async function keysOf(ev: EvidenceReader, generations: string[]): Promise<Record<string, string>> {
  const rows = await ev.run(hotspotsQuery, { generations, metric: "samples", limit: 100 });
  return Object.fromEntries(rows.map((r) => [r.name, r.frame_key]));
}

describe("call-tree transforms over a real folded import (hand-computed folds)", () => {
  it("each transform gives the fold worked out by hand, on the server's engine and through evidence.flame_tree", async () => {
    const { ctx, runId } = await importFolded(FOLDED);
    const plain = await callService(flameTree, ctx, { run_id: runId });
    const k = Object.fromEntries(plain.nodes.map((n) => [n.name, n.frame_key]));
    const tree = async (transforms: Transform[], inverted = false) => {
      const r = await callService(flameTree, ctx, { run_id: runId, transforms, inverted });
      expect(r.status.state).toBe(r.nodes.length ? "available" : "empty");
      expect(r.pruned_total).toBe(0);
      expectConsistent(r.nodes);
      return fold(r.nodes);
    };
    expect(fold(plain.nodes)).toEqual(["main 3", "main;fib;fib;fib 8", "main;parse;lex 30", "main;parse;malloc;brk 10", "main;run 7", "main;run;loop;step 5", "main;run;loop;step;loop;step 25", "main;run;malloc 20"]);

    // Merge `run`: gone from every stack, its self (7) charged to its caller main (3 → 10).
    expect(await tree([{ type: "merge-function", frame_key: k.run }])).toEqual(["main 10", "main;fib;fib;fib 8", "main;loop;step 5", "main;loop;step;loop;step 25", "main;malloc 20", "main;parse;lex 30", "main;parse;malloc;brk 10"]);
    // Merge `malloc` (two call paths): brk moves up under parse; run's self grows by 20.
    expect(await tree([{ type: "merge-function", frame_key: k.malloc }])).toEqual(["main 3", "main;fib;fib;fib 8", "main;parse;brk 10", "main;parse;lex 30", "main;run 27", "main;run;loop;step 5", "main;run;loop;step;loop;step 25"]);
    // Drop the samples with `malloc`: 30 of 108 gone.
    expect(await tree([{ type: "drop-function", frame_key: k.malloc }])).toEqual(["main 3", "main;fib;fib;fib 8", "main;parse;lex 30", "main;run 7", "main;run;loop;step 5", "main;run;loop;step;loop;step 25"]);
    // Focus on `loop`: only its samples, each stack from its outermost call.
    expect(await tree([{ type: "focus-function", frame_key: k.loop }])).toEqual(["loop;step 5", "loop;step;loop;step 25"]);
    expect(await tree([{ type: "focus-function", frame_key: k.malloc }])).toEqual(["malloc 20", "malloc;brk 10"]);
    // Focus on the subtree main › run.
    expect(await tree([{ type: "focus-subtree", path: [k.main, k.run] }])).toEqual(["run 7", "run;loop;step 5", "run;loop;step;loop;step 25", "run;malloc 20"]);
    expect(await tree([{ type: "focus-subtree", path: [k.main, k.loop] }])).toEqual([]);
    expect((await callService(flameTree, ctx, { run_id: runId, transforms: [{ type: "focus-subtree", path: [k.main, k.loop] }] })).status.reason).toMatch(/No samples are left after the transforms/);
    // Collapse recursion of `loop` (through step) and of `step` (through loop): one call each.
    expect(await tree([{ type: "collapse-recursion", frame_key: k.loop }])).toEqual(["main 3", "main;fib;fib;fib 8", "main;parse;lex 30", "main;parse;malloc;brk 10", "main;run 7", "main;run;loop;step 30", "main;run;malloc 20"]);
    expect(await tree([{ type: "collapse-recursion", frame_key: k.step }])).toEqual(["main 3", "main;fib;fib;fib 8", "main;parse;lex 30", "main;parse;malloc;brk 10", "main;run 7", "main;run;loop;step 30", "main;run;malloc 20"]);
    // Direct recursion only: fib;fib;fib folds to fib, loop;step;loop stays.
    expect(await tree([{ type: "collapse-direct-recursion", frame_key: k.fib }])).toEqual(["main 3", "main;fib 8", "main;parse;lex 30", "main;parse;malloc;brk 10", "main;run 7", "main;run;loop;step 5", "main;run;loop;step;loop;step 25", "main;run;malloc 20"]);
    expect(await tree([{ type: "collapse-direct-recursion", frame_key: k.loop }])).toEqual(fold(plain.nodes));
    // Collapse the module libc: malloc;brk becomes one frame named libc.
    expect(await tree([{ type: "collapse-module", module: "libc" }])).toEqual(["main 3", "main;fib;fib;fib 8", "main;parse;lex 30", "main;parse;libc 10", "main;run 7", "main;run;libc 20", "main;run;loop;step 5", "main;run;loop;step;loop;step 25"]);
    // Stacked, in order: merge run, then focus on loop, then collapse its recursion.
    const stack: Transform[] = [{ type: "merge-function", frame_key: k.run }, { type: "focus-function", frame_key: k.loop }, { type: "collapse-recursion", frame_key: k.loop }];
    expect(await tree(stack.slice(0, 2))).toEqual(["loop;step 5", "loop;step;loop;step 25"]);
    expect(await tree(stack)).toEqual(["loop;step 30"]);
    // The collapsed module is a frame later transforms can name: merge it.
    expect(await tree([{ type: "collapse-module", module: "libc" }, { type: "merge-function", frame_key: moduleFrameKey("libc") }])).toEqual(["main 3", "main;fib;fib;fib 8", "main;parse 10", "main;parse;lex 30", "main;run 27", "main;run;loop;step 5", "main;run;loop;step;loop;step 25"]);
    // Inverted: leaf functions at the root, their callers below.
    expect(await tree([], true)).toEqual(["brk;malloc;parse;main 10", "fib;fib;fib;main 8", "lex;parse;main 30", "main 3", "malloc;run;main 20", "run;main 7", "step;loop;run;main 5", "step;loop;step;loop;run;main 25"]);
    expect(await tree([{ type: "merge-function", frame_key: k.run }], true)).toEqual(["brk;malloc;parse;main 10", "fib;fib;fib;main 8", "lex;parse;main 30", "main 10", "malloc;main 20", "step;loop;main 5", "step;loop;step;loop;main 25"]);

    // Hotspots through the same transforms: run gone, main's self 10; totals once per sample.
    const hot = await callService(analyzeHotspots, ctx, { run_id: runId, transforms: [{ type: "merge-function", frame_key: k.run }], limit: 20 });
    const byName = Object.fromEntries(hot.rows.map((r) => [r.name, [r.self, r.total]]));
    expect(byName).toEqual({ lex: [30, 30], step: [30, 30], malloc: [20, 30], brk: [10, 10], main: [10, 108], fib: [8, 8], parse: [0, 40], loop: [0, 30] });
    expect(hot.grand_total).toBe(108);
    const dropped = await callService(analyzeHotspots, ctx, { run_id: runId, transforms: [{ type: "drop-function", frame_key: k.malloc }], limit: 2 });
    expect(dropped.grand_total).toBe(78);
    expect(dropped.rows.map((r) => r.name)).toEqual(["lex", "step"]);
    const next = await callService(analyzeHotspots, ctx, { run_id: runId, transforms: [{ type: "drop-function", frame_key: k.malloc }], limit: 10, cursor: dropped.next_cursor! });
    expect(next.rows.map((r) => [r.name, r.self])).toEqual([["fib", 8], ["run", 7], ["main", 3], ["loop", 0], ["parse", 0]]);
    // A cursor of the untransformed ranking is not one of the transformed ranking.
    const plainPage = await callService(analyzeHotspots, ctx, { run_id: runId, limit: 2 });
    await expect(callService(analyzeHotspots, ctx, { run_id: runId, transforms: [{ type: "drop-function", frame_key: k.malloc }], limit: 2, cursor: plainPage.next_cursor! })).rejects.toMatchObject({ code: "STALE_CURSOR" });
   }, 120_000);

  it("callers, callees and stack examples read the transformed tree (the sandwich's lists, get_frame_neighbours, `stacks` commands)", async () => {
    const { ctx, runId } = await importFolded(FOLDED);
    const k = Object.fromEntries((await callService(flameTree, ctx, { run_id: runId })).nodes.map((n) => [n.name, n.frame_key]));
    const pairs = (rows: { name: string; value: number }[]) => rows.map((r) => `${r.name} ${r.value}`);
    const ask = async (frame: string, transforms: Transform[]) => {
      const input = { run_id: runId, frame_key: frame, transforms };
      return { callers: pairs((await callService(frameCallers, ctx, input)).rows), callees: pairs((await callService(frameCallees, ctx, input)).rows) };
    };
    const mergeRun: Transform[] = [{ type: "merge-function", frame_key: k.run }];
    // As stored: malloc is called by run (20) and parse (10); main calls parse, run and fib.
    expect(await ask(k.malloc, [])).toEqual({ callers: ["run 20", "parse 10"], callees: ["brk 10"] });
    // Merge run (hand fold above): malloc's caller run becomes main; main now calls malloc and loop itself (98 = 108 - its self 10).
    expect(await ask(k.malloc, mergeRun)).toEqual({ callers: ["main 20", "parse 10"], callees: ["brk 10"] });
    expect(await ask(k.main, [])).toEqual({ callers: ["(root) 108"], callees: ["run 57", "parse 40", "fib 8"] });
    expect(await ask(k.main, mergeRun)).toEqual({ callers: ["(root) 108"], callees: ["parse 40", "loop 30", "malloc 20", "fib 8"] });
    // Focus on loop: its stacks start at its outermost call (so its caller is the root), and its innermost call calls step.
    expect(await ask(k.loop, [{ type: "focus-function", frame_key: k.loop }])).toEqual({ callers: ["(root) 30"], callees: ["step 30"] });
    // Drop the samples with malloc: run calls only loop.
    expect(await ask(k.run, [{ type: "drop-function", frame_key: k.malloc }])).toEqual({ callers: ["main 37"], callees: ["loop 30"] });
    // A collapsed module is a frame of its own, with its callers.
    expect(await ask(moduleFrameKey("libc"), [{ type: "collapse-module", module: "libc" }])).toEqual({ callers: ["run 20", "parse 10"], callees: [] });
    const examples = await callService(stackExamples, ctx, { run_id: runId, frame_key: k.malloc, transforms: mergeRun, limit: 5 });
    expect(examples.rows).toEqual([{ value: 20, frames: ["main", "malloc"] }, { value: 10, frames: ["main", "parse", "malloc", "brk"] }]);
    // get_frame_neighbours' service passes the stack to all three.
    const near = await callService(frameNeighbours, ctx, { run_id: runId, frame_key: k.malloc, transforms: mergeRun, stacks: 1 });
    expect({ callers: pairs(near.callers), callees: pairs(near.callees), stacks: near.stacks }).toEqual({ callers: ["main 20", "parse 10"], callees: ["brk 10"], stacks: [{ value: 20, frames: ["main", "malloc"] }] });
  }, 120_000);

  it("refuses malformed transforms with a typed error", async () => {
    const { ctx, runId } = await importFolded(FOLDED);
    const bad = [
      [{ type: "merge-function", frame_key: "main" }],
      [{ type: "explode", frame_key: "0123456789abcdef" }],
      [{ type: "focus-subtree", path: [] }],
      [{ type: "merge-function", frame_key: "0123456789abcdef", extra: 1 }],
      Array.from({ length: 33 }, () => ({ type: "merge-function", frame_key: "0123456789abcdef" })),
      [{ type: "collapse-module", module: "x".repeat(2000) }],
    ];
    for (const transforms of bad) {
      await expect(callService(flameTree, ctx, { run_id: runId, transforms } as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    }
    // Transforms apply to the whole run: with a time range they are refused, not ignored.
    await expect(callService(flameTree, ctx, { run_id: runId, start_ns: 0, end_ns: 10, transforms: [{ type: "merge-function", frame_key: "0123456789abcdef" }] })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    // Hostile text in a module name is a value, not SQL; a frame that is not there changes nothing.
    const hostile = await callService(flameTree, ctx, { run_id: runId, transforms: [{ type: "collapse-module", module: "x'); DROP TABLE frames; --" }] });
    expect(hostile.nodes.reduce((s, n) => s + n.self, 0)).toBe(108);
    const absent = await callService(flameTree, ctx, { run_id: runId, transforms: [{ type: "merge-function", frame_key: "0123456789abcdef" }] });
    expect(fold(absent.nodes)).toEqual(fold((await callService(flameTree, ctx, { run_id: runId })).nodes));
  }, 60_000);

  it("the URL form round-trips and leaves out what does not parse", () => {
    const list: Transform[] = [
      { type: "merge-function", frame_key: "0123456789abcdef" },
      { type: "focus-subtree", path: ["0123456789abcdef", "fedcba9876543210"] },
      { type: "collapse-module", module: "lib~odd name/é.so" },
      { type: "collapse-direct-recursion", frame_key: "00000000000000ff" },
    ];
    const text = formatTransforms(list)!;
    expect(text).toBe("mf-0123456789abcdef~fs-0123456789abcdef.fedcba9876543210~cm-lib%7Eodd%20name%2F%C3%A9.so~drec-00000000000000ff");
    expect(parseTransforms(text)).toEqual(list);
    expect(parseTransforms("mf-zz~nope-0123456789abcdef~cm-%E0%A4%A~df-0123456789abcdef")).toEqual([{ type: "drop-function", frame_key: "0123456789abcdef" }]);
    expect(formatTransforms([])).toBeNull();
  });
});

/** An independent reader: each sample's stack rewritten by the transform, as Firefox Profiler describes them. */
function rewrite(frames: string[], t: Transform, keyOf: (name: string) => string, moduleOf: (name: string) => string | null): string[] | null {
  const k = (f: string) => (f.startsWith("[") ? moduleFrameKey(f.slice(1, -1)) : keyOf(f));
  switch (t.type) {
    case "merge-function": {
      const out = frames.filter((f) => k(f) !== t.frame_key);
      return out.length ? out : null;
    }
    case "drop-function":
      return frames.some((f) => k(f) === t.frame_key) ? null : frames;
    case "focus-function": {
      const i = frames.findIndex((f) => k(f) === t.frame_key);
      return i < 0 ? null : frames.slice(i);
    }
    case "focus-subtree":
      return frames.length >= t.path.length && t.path.every((key, i) => k(frames[i]) === key) ? frames.slice(t.path.length - 1) : null;
    case "collapse-recursion": {
      const first = frames.findIndex((f) => k(f) === t.frame_key);
      const last = frames.findLastIndex((f) => k(f) === t.frame_key);
      return first < last ? [...frames.slice(0, first + 1), ...frames.slice(last + 1)] : frames;
    }
    case "collapse-direct-recursion":
      return frames.filter((f, i) => !(i > 0 && k(f) === t.frame_key && k(frames[i - 1]) === t.frame_key));
    case "collapse-module":
      return frames.flatMap((f, i) => {
        const inModule = !f.startsWith("[") && moduleOf(f) === t.module;
        if (!inModule) return [f];
        return i > 0 && !frames[i - 1].startsWith("[") && moduleOf(frames[i - 1]) === t.module ? [] : [`[${t.module}]`];
      });
  }
}

describe("transforms against an independent reader of each sample's stack", () => {
  it("random recursive stacks, random stacks of transforms: the fold equals the rewritten samples' fold", async () => {
    await withWorkspace(async (ws) => {
      const random = rng(7);
      const names = ["main", "a", "b", "c", "d", "e", "f"];
      const moduleOf = (name: string) => (name === "c" || name === "d" ? "libx" : name === "e" ? "liby" : null);
      const samples = Array.from({ length: 500 }, () => {
        const depth = 1 + Math.floor(random() * 8);
        const frames = ["main"];
        for (let d = 1; d < depth; d++) frames.push(random() < 0.25 ? frames[Math.floor(random() * d)] : names[1 + Math.floor(random() * 6)]);
        return { frames, value: 1 + Math.floor(random() * 5) };
      });
      const { generation_id } = await publishEvidence(ws, "random", (b: EvidenceBuilder) => {
        const metric = b.metric({ name: "samples", unit: "count", kind: "sampled" });
        const track = b.track({ threadId: 1, kind: "thread" });
        samples.forEach(({ frames, value }, i) => b.sample(b.stackOf(frames.map((name) => b.frame({ name, file: `${name}.js`, line: 1, module: moduleOf(name), kind: "js" })))!, track, i, metric, value));
      });
      const ev = await openEvidence(ws, "HEAD");
      const generations = [generation_id];
      const keys = await keysOf(ev, generations);
      const keyOf = (name: string) => keys[name];
      const pick = <T,>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
      const randomTransform = (): Transform => {
        const kind = pick(["merge-function", "drop-function", "focus-function", "focus-subtree", "collapse-recursion", "collapse-direct-recursion", "collapse-module"] as const);
        if (kind === "collapse-module") return { type: kind, module: pick(["libx", "liby"]) };
        if (kind === "focus-subtree") return { type: kind, path: ["main", ...(random() < 0.7 ? [pick(names.slice(1))] : [])].map(keyOf) };
        return { type: kind, frame_key: keyOf(pick(names)) };
      };
      for (let round = 0; round < 24; round++) {
        const list = Array.from({ length: 1 + Math.floor(random() * 3) }, randomTransform);
        const inverted = round % 4 === 3;
        const expected = new Map<string, number>();
        for (const s of samples) {
          let frames: string[] | null = s.frames;
          for (const t of list) frames = frames && rewrite(frames, t, keyOf, moduleOf);
          if (!frames) continue;
          const shown = frames.map((f) => (f.startsWith("[") ? f.slice(1, -1) : f));
          const line = (inverted ? shown.reverse() : shown).join(";");
          expected.set(line, (expected.get(line) ?? 0) + s.value);
        }
        const rows = await ev.run(transformedFlameTreeQuery(list, inverted), { generations, metric: "samples", budget: 100_000 });
        expectConsistent(rows);
        const at = `round ${round}: ${formatTransforms(list)}${inverted ? " inverted" : ""}`;
        expect(fold(rows), at).toEqual([...expected].map(([line, v]) => `${line} ${v}`).sort());
        if (!inverted) {
          // Hotspots: a function's total counts each sample once, from the rewritten stacks.
          const hot = await ev.run(transformedHotspotsQuery(list), { generations, metric: "samples", limit: 100 });
          const totals = new Map<string, number>();
          for (const s of samples) {
            let frames: string[] | null = s.frames;
            for (const t of list) frames = frames && rewrite(frames, t, keyOf, moduleOf);
            for (const f of new Set(frames ?? [])) totals.set(f.startsWith("[") ? f.slice(1, -1) : f, (totals.get(f.startsWith("[") ? f.slice(1, -1) : f) ?? 0) + s.value);
          }
          expect(Object.fromEntries(hot.map((r) => [r.name, r.total])), at).toEqual(Object.fromEntries(totals));
        }
      }
    });
  }, 300_000);
});
