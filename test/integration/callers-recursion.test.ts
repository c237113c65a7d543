import { copyFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { callersTree, calleesTree } from "../../analysis/flame/sandwich";
import { buildFlameTree } from "../../analysis/flame/tree";
import { calleesQuery, callersQuery, flameTreeQuery, hotspotsQuery } from "../../analysis/queries";
import { openEvidence } from "../../server/evidence/engine";
import { analyzeHotspots, callService, frameCallees, frameCallers, flameTree, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { rng } from "../bench/generators";
import { tempProject, withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";

/** A sample as an independent reader sees it: its frames root first, and its weight. */
interface Sample {
  frames: string[];
  value: number;
}

/**
 * What the sandwich should say about `frame`, worked out from each sample's own stack: the
 * frame's total (samples with it anywhere) and self (samples ending in it), and, as Firefox
 * Profiler's "collapse recursion" keeps a stack, the caller of its first (outermost) call and
 * the callee of its last (innermost) call. Also, per caller → frame and frame → callee pair,
 * the weight of the samples in which that pair occurs at least once.
 */
function bruteForce(samples: readonly Sample[], frame: string) {
  let total = 0;
  let self = 0;
  const callers = new Map<string, number>();
  const callees = new Map<string, number>();
  const callerPairs = new Map<string, number>();
  const calleePairs = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const { frames, value } of samples) {
    const first = frames.indexOf(frame);
    if (first < 0) continue;
    const last = frames.lastIndexOf(frame);
    total += value;
    if (last === frames.length - 1) self += value;
    add(callers, first === 0 ? "(root)" : frames[first - 1], value);
    if (last < frames.length - 1) add(callees, frames[last + 1], value);
    const above = new Set<string>();
    const below = new Set<string>();
    frames.forEach((f, i) => {
      if (f !== frame) return;
      above.add(i === 0 ? "(root)" : frames[i - 1]);
      if (i + 1 < frames.length) below.add(frames[i + 1]);
    });
    for (const k of above) add(callerPairs, k, value);
    for (const k of below) add(calleePairs, k, value);
  }
  return { total, self, callers, callees, callerPairs, calleePairs };
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);
const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => a[0].localeCompare(b[0]));

/** Random stacks over few frames, so that most stacks recurse, directly or through others. */
function randomSamples(seed: number, count: number): Sample[] {
  const random = rng(seed);
  const names = ["main", "a", "b", "c", "d", "e"];
  const out: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const depth = 1 + Math.floor(random() * 9);
    const frames = [random() < 0.8 ? "main" : names[1 + Math.floor(random() * 5)]];
    for (let d = 1; d < depth; d++) {
      // Often the frame itself again, or one seen earlier on the stack (indirect recursion).
      const r = random();
      frames.push(r < 0.2 ? frames[d - 1] : r < 0.45 ? frames[Math.floor(random() * d)] : names[1 + Math.floor(random() * 5)]);
    }
    out.push({ frames, value: 1 + Math.floor(random() * 7) });
  }
  return out;
}

function publishSamples(samples: readonly Sample[]) {
  return (b: EvidenceBuilder) => {
    const metric = b.metric({ name: "samples", unit: "count", kind: "sampled" });
    const track = b.track({ threadId: 1, kind: "thread" });
    samples.forEach(({ frames, value }, i) => {
      const leaf = b.stackOf(frames.map((name) => b.frame({ name, file: `${name}.js`, line: 1, kind: "js" })))!;
      b.sample(leaf, track, i * 10, metric, value);
    });
  };
}

type Row = { frame_key: string; name: string; value: number };
const byName = (rows: readonly Row[]) => new Map(rows.map((r) => [r.frame_key === "(root)" ? "(root)" : r.name, r.value]));

describe("callers and callees under recursion count each sample once", () => {
  it("over random recursive stacks: callers add up to the frame's total, callees to its total minus self, as each sample's stack says", async () => {
    await withWorkspace(async (ws) => {
      let checked = 0;
      for (let seed = 1; seed <= 5; seed++) {
        const samples = randomSamples(seed, 400);
        const { generation_id } = await publishEvidence(ws, `random-${seed}`, publishSamples(samples));
        const ev = await openEvidence(ws, "HEAD");
        const generations = [generation_id];
        const frames = await ev.run(hotspotsQuery, { generations, metric: "samples", limit: 100 });
        // The browser's sandwich works from the flame tree; unpruned here, it must agree exactly.
        const tree = buildFlameTree(await ev.run(flameTreeQuery, { generations, metric: "samples", budget: 100_000 }));
        for (const f of frames) {
          const expected = bruteForce(samples, f.name);
          const at = `seed ${seed}, frame ${f.name}`;
          expect([f.total, f.self], at).toEqual([expected.total, expected.self]);
          const callers = await ev.run(callersQuery, { generations, metric: "samples", frame_key: f.frame_key, limit: 100 });
          const callees = await ev.run(calleesQuery, { generations, metric: "samples", frame_key: f.frame_key, limit: 100 });
          // The properties, against the independent reader's total and self...
          for (const c of callers) expect(c.value, `${at}: caller ${c.name}`).toBeLessThanOrEqual(expected.total);
          expect(sum(callers.map((c) => c.value)), at).toBe(expected.total);
          for (const c of callees) expect(c.value, `${at}: callee ${c.name}`).toBeLessThanOrEqual(expected.total - expected.self);
          expect(sum(callees.map((c) => c.value)), at).toBe(expected.total - expected.self);
          // ...never more than the samples in which the pair occurs at all, however often it recurs...
          for (const [name, value] of byName(callers)) expect(value, `${at}: caller ${name}`).toBeLessThanOrEqual(expected.callerPairs.get(name)!);
          for (const [name, value] of byName(callees)) expect(value, `${at}: callee ${name}`).toBeLessThanOrEqual(expected.calleePairs.get(name)!);
          // ...and exactly the outermost call's caller and the innermost call's callee of each sample.
          expect(sorted(byName(callers)), at).toEqual(sorted(expected.callers));
          expect(sorted(byName(callees)), at).toEqual(sorted(expected.callees));

          // The browser's sandwich graphs: their first level is the same, and their roots are the frame's total.
          const up = callersTree(tree, f.frame_key);
          const down = calleesTree(tree, f.frame_key);
          const upRoot = up.find((n) => n.parent_id === null)!;
          const downRoot = down.find((n) => n.parent_id === null)!;
          expect([upRoot.total, downRoot.total, downRoot.self], at).toEqual([expected.total, expected.total, expected.self]);
          const level = (nodes: typeof up, root: string) => new Map(nodes.filter((n) => n.parent_id === root).map((n) => [n.name, n.total]));
          const rootCalls = upRoot.self; // calls of the frame at a root: "called from no frame"
          expect(sorted(level(up, upRoot.node_id)), at).toEqual(sorted(new Map([...expected.callers].filter(([k]) => k !== "(root)"))));
          expect(rootCalls, at).toBe(expected.callers.get("(root)") ?? 0);
          expect(sorted(level(down, downRoot.node_id)), at).toEqual(sorted(expected.callees));
          checked++;
        }
      }
      expect(checked).toBeGreaterThanOrEqual(25);
    });
  }, 120_000);
});

const SUCRASE = path.resolve(import.meta.dirname, "../fixtures/peer/Chrome/65/sucrase.cpuprofile");

/** The profile's samples read straight from its JSON: each sample's frames from the root down, "(root)" left out. */
function cpuprofileSamples(file: string): Sample[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
    samples: number[];
  };
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const pathOf = new Map<number, string[]>();
  const framesOf = (id: number): string[] => {
    const known = pathOf.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    const up = parent.has(id) ? framesOf(parent.get(id)!) : [];
    const own = node.callFrame.functionName === "(root)" && !parent.has(id) ? up : [...up, `${node.callFrame.functionName || "(anonymous)"}|${node.callFrame.url}|${node.callFrame.lineNumber + 1}`];
    pathOf.set(id, own);
    return own;
  };
  return profile.samples.map((id) => ({ frames: framesOf(id), value: 1 }));
}

describe("callers and callees on a real V8 profile with recursion (sucrase, Chrome 65)", () => {
  it("processRegion's callers add up to its total and its callees to its total minus self, as the file's samples say", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    copyFileSync(SUCRASE, path.join(root, "sucrase.cpuprofile"));
    const { run_id } = await callService(importArtifact, ctx, { path: path.join(root, "sucrase.cpuprofile") });
    const samples = cpuprofileSamples(SUCRASE);
    const hot = await callService(analyzeHotspots, ctx, { run_id, metric: "samples", limit: 1000 });
    const keyOf = (r: { name: string; file: string | null; line: number | null }) => `${r.name}|${r.file ?? ""}|${r.line ?? 0}`;
    const region = hot.rows.find((r) => r.name === "processRegion")!;
    const expected = bruteForce(samples, keyOf(region));
    // processRegion recurses through processToToken in most of its samples.
    const recursing = samples.filter((s) => s.frames.filter((f) => f === keyOf(region)).length > 1).length;
    expect(recursing).toBeGreaterThan(expected.total / 2);
    expect([region.total, region.self]).toEqual([expected.total, expected.self]);

    const callers = await callService(frameCallers, ctx, { run_id, metric: "samples", frame_key: region.frame_key, limit: 200 });
    const callees = await callService(frameCallees, ctx, { run_id, metric: "samples", frame_key: region.frame_key, limit: 200 });
    const keyed = (rows: readonly (Row & { file: string | null; line: number | null })[]) => new Map(rows.map((r) => [r.frame_key === "(root)" ? "(root)" : keyOf(r), r.value]));
    expect(sorted(keyed(callers.rows))).toEqual(sorted(expected.callers));
    expect(sorted(keyed(callees.rows))).toEqual(sorted(expected.callees));
    expect(sum(callers.rows.map((r) => r.value))).toBe(region.total);
    expect(sum(callees.rows.map((r) => r.value))).toBe(region.total - region.self);
    for (const r of [...callers.rows, ...callees.rows]) expect(r.value).toBeLessThanOrEqual(region.total);

    // The browser's sandwich over the run's flame tree agrees with the server.
    const flame = await callService(flameTree, ctx, { run_id, metric: "samples", budget: 200_000 });
    const tree = buildFlameTree(flame.nodes);
    const up = callersTree(tree, region.frame_key);
    const down = calleesTree(tree, region.frame_key);
    const upRoot = up.find((n) => n.parent_id === null)!;
    const downRoot = down.find((n) => n.parent_id === null)!;
    expect([upRoot.total, downRoot.total, downRoot.self]).toEqual([region.total, region.total, region.self]);
    const level = (nodes: typeof up, rootId: string) => new Map(nodes.filter((n) => n.parent_id === rootId).map((n) => [n.frame_key, n.total]));
    expect(sorted(level(up, upRoot.node_id))).toEqual(sorted(new Map(callers.rows.filter((r) => r.frame_key !== "(root)").map((r) => [r.frame_key, r.value]))));
    expect(sorted(level(down, downRoot.node_id))).toEqual(sorted(new Map(callees.rows.map((r) => [r.frame_key, r.value]))));
  }, 60_000);
});
