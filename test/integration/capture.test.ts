import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  analyzeHotspots,
  callService,
  cancelOperation,
  executeCapturePlan,
  listArtifacts,
  listCapabilities,
  planCapture,
  runCapture,
  runSql,
  showOperation,
  showRun,
  startCapture,
  summarizeRun,
  type ServiceContext,
} from "../../server/services";
import { openWorkspace } from "../../server/store/workspace";
import { demoProject, groupAlive, waitFor } from "../helpers/demo";
import { failure } from "../helpers/failure";

const ctxFor = (root: string): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor: "test" });

async function available(root: string, adapter: string): Promise<boolean> {
  const caps = await callService(listCapabilities, ctxFor(root), {});
  return caps.adapters.find((a) => a.adapter === adapter)?.available ?? false;
}

const hasCc = spawnSync("cc", ["--version"]).status === 0;

describe("captures of declared workloads", () => {
  it("node-cpuprofile: the demo's hotspots name its hot function", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const result = await callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 1 } });
    expect(result).toMatchObject({ status: "succeeded", commit_id: expect.stringMatching(/^cmt_/) });
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: result.run_id, limit: 3 });
    expect(hotspots.rows[0].name).toBe("countPrimes");
    const run = await callService(showRun, ctx, { run_id: result.run_id });
    expect(run).toMatchObject({ kind: "capture", source: "node-cpuprofile", status: "succeeded", execution_state: "succeeded", capture_state: "succeeded", extraction_state: "succeeded", details: { exit_code: 0, workload: "demo" } });
    const artifacts = await callService(listArtifacts, ctx, { run_id: result.run_id });
    const kinds = artifacts.items.flatMap((a) => a.registrations.filter((r) => r.run_id === result.run_id).map((r) => [r.kind, r.sensitivity]));
    expect(kinds).toEqual(expect.arrayContaining([["cpuprofile", "normal"], ["stdout", "internal"]]));
  }, 60_000);

  it("node-heapprofile and node-trace-events produce allocation and span evidence", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    // The heap profile holds what is still live at exit: sampled every 4 KiB it always holds some of
    // it, whereas at the default 512 KiB a short run on a busy machine can leave none sampled.
    const heap = await callService(runCapture, ctx, { adapter: "node-heapprofile", workload: "demo", parameters: { seconds: 0.5, mode: "hash" }, options: { interval_bytes: 4096 } });
    const heapSummary = await callService(summarizeRun, ctx, { run_id: heap.run_id });
    expect(heapSummary.metrics.map((m) => m.name)).toContain("alloc_bytes");
    const trace = await callService(runCapture, ctx, { adapter: "node-trace-events", workload: "demo", parameters: { seconds: 0.5 } });
    const traceSummary = await callService(summarizeRun, ctx, { run_id: trace.run_id });
    expect(traceSummary.spans!.spans).toBeGreaterThan(0);
  }, 60_000);

  it("perf (where it works): samples name the hot JS function through Node's perf map", async (t) => {
    const root = demoProject();
    if (!(await available(root, "perf"))) t.skip();
    const ctx = ctxFor(root);
    const result = await callService(runCapture, ctx, { adapter: "perf", workload: "demo", parameters: { seconds: 1 } });
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: result.run_id, limit: 1 });
    expect(hotspots.rows[0].name).toContain("countPrimes");
  }, 60_000);

  it("callgrind counts instructions of a native program whose hot function is known", async (t) => {
    const root0 = demoProject();
    if (!hasCc || !(await available(root0, "callgrind"))) t.skip();
    const root = demoProject(`[workloads.native]\nargv = ["./hot"]\ntimeout = 120\n`);
    const program = [
      "#include <stdio.h>",
      "static long hot_function(long n) { long x = 0; for (long i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }",
      "static long cold_function(long n) { long x = 0; for (long i = 0; i < n; i++) x += i; return x; }",
      'int main(void) { printf("%ld\\n", hot_function(3000000) + cold_function(100000)); return 0; }',
    ];
    writeFileSync(path.join(root, "hot.c"), `${program.join("\n")}\n`);
    expect(spawnSync("cc", ["-O0", "-g", "-o", path.join(root, "hot"), path.join(root, "hot.c")]).status).toBe(0);
    const ctx = ctxFor(root);
    const result = await callService(runCapture, ctx, { adapter: "callgrind", workload: "native" });
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: result.run_id, metric: "Ir", limit: 1 });
    expect(hotspots).toMatchObject({ metric: "Ir", unit: "instructions" });
    expect(hotspots.rows[0].name).toBe("hot_function");
  }, 120_000);

  it("measure: repeated runs with warm-ups become wall/user/sys/RSS measurements", async (t) => {
    const root = demoProject();
    if (!(await available(root, "measure"))) t.skip();
    const ctx = ctxFor(root);
    const result = await callService(runCapture, ctx, { adapter: "measure", workload: "demo", parameters: { seconds: 0.2 }, options: { repeat: 3, warmup: 1 } });
    const summary = await callService(summarizeRun, ctx, { run_id: result.run_id });
    expect(summary.spans!.measurements).toBe(4 * 4);
    const run = await callService(showRun, ctx, { run_id: result.run_id });
    expect(run.details).toMatchObject({ runs: 4, warmups: 1 });
    // Wall time comes from a monotonic clock, not GNU time's hundredths of a second: each run took
    // at least the 0.2 s it was asked to spin, and not all are whole multiples of 10 ms.
    const walls = (await callService(runSql, ctx, { run_id: result.run_id, sql: "SELECT value FROM measurements WHERE name = 'wall_ns' ORDER BY value" })).rows.map((r) => Number(r.value));
    expect(walls).toHaveLength(4);
    expect(walls.every((ns) => ns >= 0.2e9 && ns < 30e9)).toBe(true);
    expect(walls.some((ns) => ns % 10_000_000 !== 0)).toBe(true);
  }, 60_000);
});

describe("plans", () => {
  it("execute consumes the token once; replay, mismatch, expiry and unknown tokens are refused", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const plan = await callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 0.3 } });
    expect(plan.plan).toMatchObject({ adapter: { name: "node-cpuprofile" }, workload: { name: "demo", parameters: { seconds: 0.3, mode: "primes" } }, cwd: ".", timeout_s: 60 });
    expect((await failure(callService(executeCapturePlan, ctx, { plan_token: plan.plan_token, expected_plan_id: "plan_other" }))).code).toBe("PLAN_MISMATCH");
    const done = await callService(executeCapturePlan, ctx, { plan_token: plan.plan_token, expected_plan_id: plan.plan_id });
    expect(done.status).toBe("succeeded");
    const replay = await failure(callService(executeCapturePlan, ctx, { plan_token: plan.plan_token }));
    expect(replay.toDocument()).toMatchObject({ code: "PLAN_CONSUMED", recovery: { operation: "captures.plan" } });
    expect((await failure(callService(executeCapturePlan, ctx, { plan_token: "ept_not-a-real-token" }))).code).toBe("PLAN_NOT_FOUND");

    const old = await callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "demo" });
    const ws = openWorkspace({ cwd: root });
    ws.db.prepare("UPDATE plans SET expires_at = ? WHERE id = ?").run(new Date(Date.now() - 1000).toISOString(), old.plan_id);
    ws.close();
    expect((await failure(callService(executeCapturePlan, ctx, { plan_token: old.plan_token }))).code).toBe("PLAN_EXPIRED");
  }, 60_000);

  it("a declaration changed after planning makes execute fail with STALE_INTENT before anything runs", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const plan = await callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "demo" });
    const toml = path.join(root, "emberscope.toml");
    writeFileSync(toml, readFileSync(toml, "utf8").replace('argv = ["node", "app.js", "--seconds", "{seconds}", "--mode", "{mode}"]', 'argv = ["node", "app.js", "--seconds", "9", "--mode", "{mode}"]'));
    const stale = await failure(callService(executeCapturePlan, ctx, { plan_token: plan.plan_token }));
    expect(stale.toDocument()).toMatchObject({ code: "STALE_INTENT", recovery: { operation: "captures.plan", arguments: { adapter: "node-cpuprofile", workload: "demo" } } });
    const ws = openWorkspace({ cwd: root });
    expect(ws.db.prepare("SELECT count(*) AS n FROM runs").get()).toEqual({ n: 0 });
    ws.close();
  });

  it("refuses undeclared workloads, unknown parameters, unknown adapters and a cwd outside the project", async () => {
    const root = demoProject(`[workloads.escape]\nargv = ["node", "-e", "0"]\ncwd = ".."\n`);
    const ctx = ctxFor(root);
    expect((await failure(callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "nope" }))).code).toBe("WORKLOAD_NOT_FOUND");
    expect((await failure(callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { speed: 3 } }))).toDocument()).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "param.speed" } });
    expect((await failure(callService(planCapture, ctx, { adapter: "dtrace", workload: "demo" }))).code).toBe("ADAPTER_NOT_FOUND");
    expect((await failure(callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "escape" }))).code).toBe("POLICY_DENIED");
    writeFileSync(path.join(root, "emberscope.toml"), '[workloads.demo]\nargv = ["node"]\ncolour = "red"\n');
    expect((await failure(callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "demo" }))).toDocument()).toMatchObject({ code: "CONFIG_INVALID", details: { path: "workloads.demo.colour" } });
  });
});

describe("process safety", () => {
  it("a workload that exits non-zero gives PROCESS_FAILED and its run is kept with stderr", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const error = await failure(callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "fail" }));
    expect(error.toDocument()).toMatchObject({ code: "PROCESS_FAILED", details: { exit_code: 3, run_id: expect.any(String) } });
    const run = await callService(showRun, ctx, { run_id: error.details.run_id as string });
    expect(run).toMatchObject({ status: "failed", execution_state: "failed" });
    const artifacts = await callService(listArtifacts, ctx, { run_id: run.run_id });
    const stderr = artifacts.items.find((a) => a.registrations.some((r) => r.kind === "stderr"))!;
    const ws = openWorkspace({ cwd: root });
    expect((await ws.objects.read(stderr.artifact_id as never, stderr.size_bytes)).toString()).toContain("failing on purpose");
    ws.close();
  });

  it("the child gets the allowlisted environment without credentials or loader variables", async () => {
    const root = demoProject(`[workloads.env]\nargv = ["node", "-e", "console.log(JSON.stringify(process.env))"]\nenv.allow = ["EMBERSCOPE_TEST_VISIBLE", "EMBERSCOPE_TEST_TOKEN"]\nenv.set = { DECLARED = "yes" }\n`);
    const ctx = ctxFor(root);
    process.env.EMBERSCOPE_TEST_VISIBLE = "shown";
    process.env.EMBERSCOPE_TEST_TOKEN = "hunter2";
    process.env.EMBERSCOPE_TEST_NOT_ALLOWED = "hidden";
    process.env.NODE_OPTIONS = "--max-old-space-size=100";
    try {
      const plan = await callService(planCapture, ctx, { adapter: "node-cpuprofile", workload: "env" });
      expect(plan.plan).toMatchObject({ environment: { withheld: ["EMBERSCOPE_TEST_TOKEN"], set: { DECLARED: "yes" } } });
      expect(JSON.stringify(plan.plan)).not.toContain("hunter2");
      const result = await callService(executeCapturePlan, ctx, { plan_token: plan.plan_token });
      const artifacts = await callService(listArtifacts, ctx, { run_id: result.run_id });
      const stdout = artifacts.items.find((a) => a.registrations.some((r) => r.kind === "stdout"))!;
      const ws = openWorkspace({ cwd: root });
      const env = JSON.parse((await ws.objects.read(stdout.artifact_id as never, stdout.size_bytes)).toString());
      ws.close();
      expect(env).toMatchObject({ EMBERSCOPE_TEST_VISIBLE: "shown", DECLARED: "yes" });
      expect(env.PATH).toBeTruthy();
      expect(env).not.toHaveProperty("EMBERSCOPE_TEST_TOKEN");
      expect(env).not.toHaveProperty("EMBERSCOPE_TEST_NOT_ALLOWED");
      expect(env).not.toHaveProperty("NODE_OPTIONS");
    } finally {
      delete process.env.EMBERSCOPE_TEST_VISIBLE;
      delete process.env.EMBERSCOPE_TEST_TOKEN;
      delete process.env.EMBERSCOPE_TEST_NOT_ALLOWED;
      delete process.env.NODE_OPTIONS;
    }
  });

  it("a timeout kills the workload's whole process group with PROCESS_TIMEOUT", async () => {
    const root = demoProject();
    const toml = path.join(root, "emberscope.toml");
    writeFileSync(toml, readFileSync(toml, "utf8").replace('argv = ["node", "slow.mjs"]\ntimeout = 30', 'argv = ["node", "slow.mjs"]\ntimeout = 1'));
    const ctx = ctxFor(root);
    const error = await failure(callService(runCapture, ctx, { adapter: "node-cpuprofile", workload: "slow" }));
    expect(error.code).toBe("PROCESS_TIMEOUT");
    const run = await callService(showRun, ctx, { run_id: error.details.run_id as string });
    const pid = run.details.pid as number;
    await waitFor(() => groupAlive(pid), (alive) => !alive, 5000);
  }, 30_000);
});

describe("operations and the worker pool", () => {
  it("start returns at once, a detached worker runs it, and the same idempotency key reconnects", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const started = await callService(startCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 0.3 }, idempotency_key: "k1" });
    expect(started).toMatchObject({ status: "queued", reconnected: false, worker_started: true });
    const again = await callService(startCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 0.3 }, idempotency_key: "k1" });
    expect(again).toMatchObject({ operation_id: started.operation_id, run_id: started.run_id, reconnected: true });
    const conflict = await failure(callService(startCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 0.4 }, idempotency_key: "k1" }));
    expect(conflict.code).toBe("IDEMPOTENCY_CONFLICT");
    const done = await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (op) => ["succeeded", "failed", "cancelled"].includes(op.state), 30_000);
    expect(done).toMatchObject({ state: "succeeded", phase: "done", run_id: started.run_id });
    const hotspots = await callService(analyzeHotspots, ctx, { run_id: started.run_id, limit: 1 });
    expect(hotspots.rows[0].name).toBe("countPrimes");
  }, 60_000);

  it("cancel answers within 250 ms and leaves no process of the capture behind", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const started = await callService(startCapture, ctx, { adapter: "node-cpuprofile", workload: "slow", idempotency_key: "slow-1" });
    const run = await waitFor(() => callService(showRun, ctx, { run_id: started.run_id }), (r) => typeof r.details.pid === "number", 20_000);
    const pid = run.details.pid as number;
    expect(groupAlive(pid)).toBe(true);
    const t0 = performance.now();
    const cancelled = await callService(cancelOperation, ctx, { operation_id: started.operation_id });
    expect(performance.now() - t0).toBeLessThan(250);
    expect(["cancelling", "cancelled"]).toContain(cancelled.state);
    const final = await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (op) => op.state === "cancelled", 10_000);
    expect(final.error).toMatchObject({ code: "CANCELLED" });
    await waitFor(() => groupAlive(pid), (alive) => !alive, 5000);
  }, 60_000);

  it("a worker killed with -9 mid-job: the operation ends failed, its workload dies, and a new job runs", async () => {
    const root = demoProject();
    const ctx = ctxFor(root);
    const started = await callService(startCapture, ctx, { adapter: "node-cpuprofile", workload: "slow", idempotency_key: "victim" });
    const op = await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (o) => o.state === "running" && o.worker?.pid != null, 20_000);
    const run = await waitFor(() => callService(showRun, ctx, { run_id: started.run_id }), (r) => typeof r.details.pid === "number", 20_000);
    process.kill(op.worker!.pid!, "SIGKILL");
    const ended = await waitFor(() => callService(showOperation, ctx, { operation_id: started.operation_id }), (o) => o.state !== "running", 20_000);
    expect(ended).toMatchObject({ state: "failed", error: { code: "INTERRUPTED" } });
    await waitFor(() => groupAlive(run.details.pid as number), (alive) => !alive, 5000);
    expect((await callService(showRun, ctx, { run_id: started.run_id })).status).toBe("failed");

    const next = await callService(startCapture, ctx, { adapter: "node-cpuprofile", workload: "demo", parameters: { seconds: 0.3 }, idempotency_key: "after" });
    const done = await waitFor(() => callService(showOperation, ctx, { operation_id: next.operation_id }), (o) => o.state === "succeeded" || o.state === "failed", 30_000);
    expect(done.state).toBe("succeeded");
  }, 90_000);
});
