import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { analyzeHotspots, callService, flameTree, frameCallers, summarizeRun, type ServiceContext } from "../../server/services";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { publishEvidence } from "../helpers/seed";
import { rng } from "./generators";
import { summarize } from "./stats";

const ROUNDS = 5;
const THREADS = 8;
const NODES = 20_000;

/**
 * What a track filter costs: a run of 1 M timed samples over 8 threads (the first thread busiest,
 * a quarter of them) on a call tree of ~20 k nodes, as a multi-threaded capture is. The whole run
 * reads the totals derived at extraction; a track selection (the run page's default: the busiest)
 * recomputes them from the chosen samples (analysis/queries/tracks.ts). Warm calls: the engine
 * keeps small answers per commit, so each round asks a different budget / limit.
 */
export async function tracksBenchmark(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-tracks-"));
  try {
    initWorkspace(dir).close();
    const ws = openWorkspace({ cwd: dir, projectRoot: dir });
    const samples = 1_000_000;
    const random = rng(21);
    const published = await publishEvidence(ws, "threads", (b) => {
      const metric = b.metric({ name: "samples", unit: "count", kind: "sampled" });
      const tracks = Array.from({ length: THREADS }, (_, t) => b.track({ processId: 1, processName: "app", threadId: 100 + t, threadName: `worker-${t}`, kind: "thread" }));
      // A random call tree: each node a child of a recent one (deep chains) or of any.
      const stacks: number[] = [];
      const parents: number[] = [-1];
      stacks.push(b.stackOf([b.frame({ name: "main", kind: "native" })])!);
      for (let id = 1; id < NODES; id++) {
        const p = random() < 0.7 ? Math.max(0, id - 1 - Math.floor(random() * 6)) : Math.floor(random() * id);
        parents.push(p);
        stacks.push(b.stack(stacks[p], b.frame({ name: `fn${(id * 7) % 900}`, file: `src/m${id % 40}.c`, kind: "native" })));
      }
      for (let i = 0; i < samples; i++) {
        const t = random() < 0.25 ? 0 : 1 + Math.floor(random() * (THREADS - 1));
        b.sample(stacks[Math.floor(random() * NODES)], tracks[t], i * 1000, metric, 1);
      }
    });
    ws.close();
    const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "test" };
    const runId = published.run_id;
    const summary = await callService(summarizeRun, ctx, { run_id: runId });
    const busiest = summary.sampled_tracks[0];
    const frame = summary.top_frames[0].frame_key;
    const figures: Record<string, unknown> = { samples, threads: THREADS, stack_nodes: NODES, busiest_track_samples: busiest.samples };
    const cases: [string, (round: number, tracks: "all" | "busiest" | string[]) => Promise<unknown>][] = [
      ["flame_tree", (r, tracks) => callService(flameTree, ctx, { run_id: runId, tracks, budget: 20_000 - r })],
      ["hotspots", (r, tracks) => callService(analyzeHotspots, ctx, { run_id: runId, tracks, limit: 1000 - r })],
      ["callers", (r, tracks) => callService(frameCallers, ctx, { run_id: runId, frame_key: frame, tracks, limit: 100 - r })],
    ];
    for (const [name, call] of cases) {
      for (const [label, tracks] of [["all", "all"], ["busiest", "busiest"], ["two_tracks", summary.sampled_tracks.slice(0, 2).map((t) => t.track_key)]] as const) {
        const times: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const start = performance.now();
          await call(r, tracks as never);
          times.push(performance.now() - start);
        }
        figures[`${name}_${label}_ms`] = summarize(times);
      }
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
