import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { callService, executeCapturePlan, listCapabilities, planCapture, runCapture, showOperation, startCapture, type ServiceContext } from "../../server/services";
import { getOperation } from "../../server/store/operations";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { REPO_ROOT } from "../helpers/cli";
import { summarize } from "./stats";

const FIXED = `
[workloads.fixed]
argv = ["node", "app.js", "--rounds", "40", "--mode", "primes"]
timeout = 120

[workloads.tiny]
argv = ["node", "-e", "let x = 0; for (let i = 0; i < 1e5; i++) x += i;"]
timeout = 30
`;

function median(values: number[]): number {
  return summarize(values).p50;
}

/** Overhead of each adapter against the bare workload, pool throughput and time to first progress. */
export async function captureBenchmark(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(path.join(tmpdir(), "emberscope-bench-capture-"));
  try {
    cpSync(path.join(REPO_ROOT, "examples", "demo"), root, { recursive: true });
    appendFileSync(path.join(root, "emberscope.toml"), FIXED);
    initWorkspace(root).close();
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };

    const bare = [0, 1, 2, 3, 4, 5].map(() => {
      const start = performance.now();
      spawnSync(process.execPath, ["app.js", "--rounds", "40", "--mode", "primes"], { cwd: root });
      return performance.now() - start;
    });
    const bareMs = median(bare.slice(1)); // the first run warms the page cache

    const available = (await callService(listCapabilities, ctx, {})).adapters.filter((a) => a.available).map((a) => a.adapter);
    const adapters: Record<string, unknown> = {};
    for (const adapter of ["node-cpuprofile", "node-heapprofile", "node-trace-events", "perf", "measure"].filter((a) => available.includes(a))) {
      const options = adapter === "measure" ? { repeat: 3, warmup: 1 } : {};
      const times = [];
      for (let i = 0; i < (adapter === "measure" ? 1 : 3); i++) {
        const start = performance.now();
        await callService(runCapture, ctx, { adapter, workload: "fixed", options });
        times.push(performance.now() - start);
      }
      const runs = adapter === "measure" ? 4 : 1;
      adapters[adapter] = { capture_ms: Math.round(median(times)), ratio_to_bare: Math.round((median(times) / (bareMs * runs)) * 100) / 100 };
    }

    // time from execute to the first progress event (the operation reaching its running phase)
    const firstProgress: number[] = [];
    for (let i = 0; i < 5; i++) {
      const plan = await callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "tiny" });
      const ws = openWorkspace({ cwd: root });
      const start = performance.now();
      let seen: number | null = null;
      const poll = setInterval(() => {
        const row = ws.db.prepare("SELECT id FROM operations ORDER BY created_at DESC LIMIT 1").get() as { id: string } | undefined;
        if (seen === null && row && getOperation(ws.db, row.id).phase === "running") seen = performance.now() - start;
      }, 1);
      await callService(executeCapturePlan, ctx, { plan_token: plan.plan_token });
      clearInterval(poll);
      ws.close();
      if (seen !== null) firstProgress.push(seen);
    }

    // pool throughput: 100 small captures queued at once, drained by the pool
    const COUNT = 100;
    const start = performance.now();
    const ops = [];
    for (let i = 0; i < COUNT; i++) ops.push((await callService(startCapture, ctx, { adapter: "node-cpuprofile", workload: "tiny", idempotency_key: `bench-${i}` })).operation_id);
    for (const id of ops) {
      for (;;) {
        const op = await callService(showOperation, ctx, { operation_id: id });
        if (["succeeded", "failed", "cancelled"].includes(op.state)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const poolSeconds = (performance.now() - start) / 1000;
    return {
      bare_workload_ms: Math.round(bareMs),
      adapters,
      execute_to_first_progress_ms: summarize(firstProgress),
      pool: { captures: COUNT, seconds: Math.round(poolSeconds * 10) / 10, operations_per_second: Math.round((COUNT / poolSeconds) * 100) / 100, workers: "1 detached (started on demand)" },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
