import { expect } from "vitest";
import type { AgentClient, ToolOutcome } from "./clients";

/**
 * What an agent does with nothing but the tool catalog and the typed errors' recovery hints:
 * find (or create) the workspace, capture the demo twice (mode=primes, mode=hash), find the
 * hot function, ask who calls it, and compare the two captures. Returns what it learned.
 */
export async function agentWalkthrough(agent: AgentClient): Promise<{ steps: string[]; hot: string; callers: string[]; compared: { name: string; delta: number }[] }> {
  const steps: string[] = [];
  const call = async (tool: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> => {
    const outcome = await agent.call(tool, args);
    steps.push(`${tool}:${outcome.ok ? "ok" : outcome.error.code}`);
    return outcome;
  };
  /** Calls a tool; on a typed error with a recovery, calls the recovery and then the tool again. */
  const withRecovery = async (tool: string, args: Record<string, unknown> = {}): Promise<any> => {
    let outcome = await call(tool, args);
    if (!outcome.ok && outcome.error.recovery) {
      const recovered = await call(outcome.error.recovery.tool, outcome.error.recovery.arguments);
      expect(recovered.ok, JSON.stringify(recovered)).toBe(true);
      outcome = await call(tool, args);
    }
    expect(outcome.ok, JSON.stringify(!outcome.ok && outcome.error)).toBe(true);
    return outcome.ok ? outcome.value : null;
  };

  await withRecovery("workspace_status");
  const workloads = await withRecovery("list_capture_options");
  expect(workloads.workloads.map((w: { name: string }) => w.name)).toContain("demo");
  const capture = async (mode: string): Promise<string> => {
    const plan = await withRecovery("plan_capture", { adapter: "node-cpuprofile", workload: "demo", parameters: { mode, seconds: 0.8 } });
    const run = await withRecovery("execute_capture_plan", { plan_token: plan.plan_token, expected_plan_id: plan.plan_id });
    expect(run.status).toBe("succeeded");
    return run.run_id as string;
  };
  const primes = await capture("primes");
  const hot = await withRecovery("analyze_hotspots", { run_id: primes, limit: 5 });
  const top = hot.rows.find((r: { kind: string; name: string }) => !r.name.startsWith("(")) as { name: string; frame_key: string };
  const neighbours = await withRecovery("get_frame_neighbours", { run_id: primes, frame_key: top.frame_key });
  const hash = await capture("hash");
  const compared = await withRecovery("compare_runs", { base_run_id: primes, candidate_run_id: hash, collection: "all", limit: 20 });
  return {
    steps,
    hot: top.name,
    callers: neighbours.callers.map((r: { name: string }) => r.name),
    compared: compared.rows.map((r: { name: string; delta: number }) => ({ name: r.name, delta: r.delta })),
  };
}

export function expectDemoFindings(result: Awaited<ReturnType<typeof agentWalkthrough>>): void {
  expect(result.hot).toBe("countPrimes");
  expect(result.callers.length).toBeGreaterThan(0);
  const byName = new Map(result.compared.map((r) => [r.name, r.delta]));
  expect(byName.get("countPrimes")).toBeLessThan(0);
  expect(byName.get("hashStrings")).toBeGreaterThan(0);
}
