import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { CLI, runProcess } from "../helpers/cli";
import { startServer, type RunningServer } from "../helpers/server";
import { cpuprofileFile } from "./generators";
import { hotspotPagesOf, load, percentiles } from "./mcp.bench";

/** One checkout's server over its own workspace holding the same profile. */
interface Side {
  name: "base" | "this";
  cli: string;
  server: RunningServer;
  token: string;
  latencies: number[];
  serverCpuMs: number[];
}

async function cli(cliPath: string, dir: string, args: string[]) {
  const r = await runProcess(process.execPath, [cliPath, ...args, "--project-root", dir], { cwd: dir });
  if (r.code !== 0) throw new Error(`${path.basename(path.dirname(path.dirname(cliPath)))}: emberscope ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r;
}

async function sideOf(name: Side["name"], cliPath: string, profile: string): Promise<Side & { dir: string; runId: string; metrics: string[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), `emberscope-bench-mcp-ab-${name}-`));
  await cli(cliPath, dir, ["init"]);
  copyFileSync(profile, path.join(dir, "big.cpuprofile"));
  const imported = (await cli(cliPath, dir, ["import", "big.cpuprofile", "--json"])).json as { run_id: string };
  const summary = (await cli(cliPath, dir, ["analyze", "summary", imported.run_id, "--json"])).json as { metrics: { name: string }[] };
  const token = (await cli(cliPath, dir, ["mcp", "token"])).stdout.trim().split("\n").at(-1)!;
  const server = await startServer(dir, ["--workers", "0"], cliPath);
  await cli(cliPath, dir, ["agent-access", "on"]);
  return { name, cli: cliPath, server, token, latencies: [], serverCpuMs: [], dir, runId: imported.run_id, metrics: summary.metrics.map((m) => m.name) };
}

/**
 * Issue 18's regression line, measured as an A/B: "MCP p50/p99 from the existing benchmark must not
 * regress by more than 10 %". The MCP benchmark's primary load (8 lean clients walking hotspot
 * pages of a 1.2 M-sample cpuprofile, 40 calls each) against two servers at once: this checkout's
 * and another checkout's (`EMBERSCOPE_BENCH_BASE_TREE`, built with `npm run build`), each over its
 * own workspace holding the same profile, imported by its own CLI. Blocks alternate between the two
 * (ABBA), so load from elsewhere on the machine falls on both alike; the figures pool every block.
 */
export async function mcpAbBenchmark(): Promise<Record<string, unknown>> {
  const baseTree = process.env.EMBERSCOPE_BENCH_BASE_TREE;
  if (!baseTree || !existsSync(path.join(baseTree, ".next"))) {
    return { skipped: "set EMBERSCOPE_BENCH_BASE_TREE to another checkout of emberscope, built (`npm ci && npm run build` there)" };
  }
  const blocks = Number(process.env.EMBERSCOPE_BENCH_AB_BLOCKS ?? 40);
  const scratch = mkdtempSync(path.join(tmpdir(), "emberscope-bench-mcp-ab-"));
  const sides: Awaited<ReturnType<typeof sideOf>>[] = [];
  try {
    const profile = path.join(scratch, "big.cpuprofile");
    await cpuprofileFile(profile, 1_200_000, 20_000);
    sides.push(await sideOf("base", path.join(baseTree, "bin", "emberscope.js"), profile));
    sides.push(await sideOf("this", CLI, profile));
    const questions = new Map(sides.map((s) => [s, hotspotPagesOf(s.runId, s.metrics)]));
    // Warm each server's readers and JIT as the MCP benchmark does.
    for (const side of sides) for (let i = 0; i < 5; i++) await load(side.server, side.token, "lean", 8, 40, "analyze_hotspots", questions.get(side)!);
    const loads: number[] = [];
    for (let b = 0; b < blocks; b++) {
      const order = b % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        const r = await load(side.server, side.token, "lean", 8, 40, "analyze_hotspots", questions.get(side)!, true);
        if (r.errors > 0) throw new Error(`${side.name}: ${r.errors} calls failed`);
        side.latencies.push(...r.latencies!);
        if (r.server_cpu_ms_per_call !== null) side.serverCpuMs.push(r.server_cpu_ms_per_call);
        loads.push(r.load_average_1m);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const figuresOf = (s: Side) => ({ tree: path.dirname(path.dirname(s.cli)), ...percentiles(s.latencies), server_cpu_ms_per_call_median_block: median(s.serverCpuMs) });
    const figures = { base: figuresOf(sides[0]), this: figuresOf(sides[1]) };
    const ratio = (k: "p50_ms" | "p99_ms" | "server_cpu_ms_per_call_median_block") => Math.round((figures.this[k] / figures.base[k]) * 1000) / 1000;
    return {
      load: "analyze_hotspots pages (the MCP benchmark's primary load): 8 lean clients x 40 calls per block, blocks alternating ABBA between the two servers",
      blocks,
      goal: "this/base <= 1.10 for p50 and p99 (issue 18)",
      ...figures,
      this_over_base: { p50: ratio("p50_ms"), p99: ratio("p99_ms"), server_cpu_per_call: ratio("server_cpu_ms_per_call_median_block") },
      load_average_1m: { min: Math.min(...loads), max: Math.max(...loads) },
      cores: os.cpus().length,
    };
  } finally {
    await Promise.all(sides.map((s) => s.server.stop()));
    for (const s of sides) rmSync(s.dir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}
