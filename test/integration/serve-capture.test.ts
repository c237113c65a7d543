import { describe, expect, it } from "vitest";
import { callService, showOperation, showRun } from "../../server/services";
import { runCli } from "../helpers/cli";
import { demoProject, groupAlive, waitFor } from "../helpers/demo";
import { startServer } from "../helpers/server";

const ctxFor = (root: string) => ({ locator: { cwd: root, projectRoot: root }, actor: "test" as const });

describe("captures through the CLI and the server's worker pool", () => {
  it("capture run in a copy of examples/demo names the demo's hot function; plan + execute take the token from the environment", async () => {
    const root = demoProject();
    const run = await runCli(["capture", "run", "node-cpuprofile", "--workload", "demo", "--param", "seconds=0.5", "--json"], { cwd: root });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ status: "succeeded", run_id: expect.any(String), operation_id: expect.any(String), commit_id: expect.any(String), limitations: [] });
    const hotspots = await runCli(["analyze", "hotspots", run.json.run_id, "--limit", "1", "--json"], { cwd: root });
    expect(hotspots.json.rows[0].name).toBe("countPrimes");

    const plan = await runCli(["capture", "plan", "node-cpuprofile", "--workload", "demo", "--param", "mode=hash", "--param", "seconds=0.3", "--json"], { cwd: root });
    expect(plan.json).toMatchObject({ plan_id: expect.stringMatching(/^plan_/), plan_token: expect.stringMatching(/^ept_/), expires_at: expect.any(String), plan: { workload: { parameters: { mode: "hash" } } } });
    const human = await runCli(["capture", "plan", "node-cpuprofile", "--workload", "demo"], { cwd: root });
    expect(human.stdout.trim().split("\n").pop()).toMatch(/^ept_/);
    const executed = await runCli(["capture", "execute", "--expected-plan-id", plan.json.plan_id, "--json"], { cwd: root, env: { EMBERSCOPE_PLAN_TOKEN: plan.json.plan_token } });
    expect(executed.json).toMatchObject({ status: "succeeded" });
    const replay = await runCli(["capture", "execute", "--plan-token", plan.json.plan_token, "--json"], { cwd: root });
    expect(replay.code).toBe(6);
    expect(replay.json.code).toBe("PLAN_CONSUMED");
    const bad = await runCli(["capture", "run", "node-cpuprofile", "--workload", "demo", "--param", "seconds", "--json"], { cwd: root });
    expect(bad.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--param" } });
    const first = await runCli(["capture", "start", "node-cpuprofile", "--workload", "demo", "--param", "seconds=0.2", "--idempotency-key", "cli-key", "--json"], { cwd: root });
    const second = await runCli(["capture", "start", "node-cpuprofile", "--workload", "demo", "--param", "seconds=0.2", "--idempotency-key", "cli-key", "--json"], { cwd: root });
    expect(first.json).toMatchObject({ operation_id: expect.stringMatching(/^op_/), run_id: expect.stringMatching(/^run_/), reconnected: false });
    expect(second.json).toMatchObject({ operation_id: first.json.operation_id, run_id: first.json.run_id, reconnected: true });
    const shown = await waitFor(() => runCli(["ops", "show", first.json.operation_id, "--json"], { cwd: root }), (r) => r.json?.state === "succeeded", 30_000);
    expect(shown.json).toMatchObject({ phase: "done", run_id: first.json.run_id });
    const failed = await runCli(["capture", "run", "node-cpuprofile", "--workload", "fail", "--json"], { cwd: root });
    expect(failed.code).toBe(7);
    expect(failed.json).toMatchObject({ code: "PROCESS_FAILED", recovery: { command: expect.stringMatching(/^emberscope runs show run_/) } });
  }, 60_000);

  it("after the server is killed with -9 mid-capture and restarted, nothing stays running and no workload process remains", async () => {
    const root = demoProject();
    let server = await startServer(root, ["--workers", "1"]);
    let serverStopped = false;
    try {
      const ctx = ctxFor(root);
      await waitFor(() => runCli(["ops", "list", "--json"], { cwd: root }), (r) => r.code === 0);
      const started = await runCli(["capture", "start", "node-cpuprofile", "--workload", "slow", "--idempotency-key", "server-kill", "--json"], { cwd: root });
      expect(started.json).toMatchObject({ status: "queued", worker_started: false });
      const run = await waitFor(() => callService(showRun, ctx, { run_id: started.json.run_id }), (r) => typeof r.details.pid === "number", 30_000);
      const pid = run.details.pid as number;
      const running = await callService(showOperation, ctx, { operation_id: started.json.operation_id });
      expect(running.state).toBe("running");
      const workerPid = running.worker!.pid!;

      server.process.kill("SIGKILL");
      serverStopped = true;
      await waitFor(() => groupAlive(pid), (alive) => !alive, 15_000);
      await waitFor(() => { try { process.kill(workerPid, 0); return true; } catch { return false; } }, (alive) => !alive, 15_000);

      server = await startServer(root, ["--workers", "1"]);
      serverStopped = false;
      const active = await runCli(["ops", "list", "--active", "--json"], { cwd: root });
      expect(active.json.items).toEqual([]);
      const op = await runCli(["ops", "show", started.json.operation_id, "--json"], { cwd: root });
      expect(["cancelled", "failed"]).toContain(op.json.state);
      expect(op.json).toMatchObject({ operation_id: started.json.operation_id, run_id: started.json.run_id, progress: expect.any(Object) });
      expect(groupAlive(pid)).toBe(false);
    } finally {
      if (!serverStopped) await server.stop();
    }
  }, 90_000);
});
