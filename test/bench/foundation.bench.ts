import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { callService, listRuns, workspaceStatus } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { CLI } from "../helpers/cli";
import { seedImport } from "../helpers/seed";
import { summarize } from "./stats";

/** CLI start-up, publish throughput and control-store read latency. */
export async function foundationBenchmark(): Promise<Record<string, unknown>> {
  const root = mkdtempSync(path.join(tmpdir(), "emberscope-bench-"));
  try {
    const time = (args: string[]) => {
      const start = performance.now();
      const result = spawnSync(process.execPath, [CLI, ...args], { cwd: root, encoding: "utf8" });
      if (result.status !== 0 && !args.includes("--help")) throw new Error(result.stderr);
      return performance.now() - start;
    };
    time(["--help"]); // builds the CLI bundle once if stale
    const help = Array.from({ length: 15 }, () => time(["--help"]));
    time(["init"]);
    const status = Array.from({ length: 15 }, () => time(["status", "--json"]));

    mkdirSync(path.join(root, "publish"));
    const ws = initWorkspace(path.join(root, "publish"));
    const PUBLISHES = 300;
    const publishStart = performance.now();
    for (let i = 0; i < PUBLISHES; i++) {
      await seedImport(ws, { title: `bench ${i}`, native: `main;f${i} ${i}` });
    }
    const publishMs = performance.now() - publishStart;
    ws.close();

    const ctx = { locator: { cwd: root, projectRoot: path.join(root, "publish") }, actor: "test" as const };
    const statusCalls = [];
    const listCalls = [];
    for (let i = 0; i < 50; i++) {
      let t = performance.now();
      await callService(workspaceStatus, ctx, {});
      statusCalls.push(performance.now() - t);
      t = performance.now();
      await callService(listRuns, ctx, { limit: 50 });
      listCalls.push(performance.now() - t);
    }
    return {
      cli_help_ms: summarize(help),
      cli_status_json_ms: summarize(status),
      cli_help_goal_ms: 500,
      publish: { publishes: PUBLISHES, total_ms: Math.round(publishMs), per_second: Math.round((PUBLISHES / publishMs) * 1000) },
      service_status_ms: summarize(statusCalls),
      service_runs_list_50_ms: summarize(listCalls),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
