import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { agentToken, analyzeHotspots, callService, importArtifact, setAgentAccess, traceWindow, type ServiceContext } from "../../server/services";
import { hotspotsQuery } from "../../analysis/queries";
import { openEvidence } from "../../server/evidence/engine";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { startServer, type RunningServer } from "../helpers/server";
import { chromeTraceFile, cpuprofileFile } from "./generators";

const MB = 1024 * 1024;

function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (x: number) => Math.round(x * 10) / 10;
  return { n: sorted.length, p50_ms: round(at(0.5)), p99_ms: round(at(0.99)), max_ms: round(sorted[sorted.length - 1]) };
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "emberscope-bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const CLOCK_TICKS_PER_S = 100;

/** CPU time (user + system, ms) a process has used so far; null where /proc is not available. */
function cpuMsOf(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

/**
 * `clients` connected agents each make `calls` calls back to back; latency per call (ms), and the
 * server's CPU time per call (less sensitive than latency to other work on a shared machine).
 */
async function load(server: RunningServer, token: string, clients: number, calls: number, tool: string, args: () => Record<string, unknown>) {
  const url = server.url;
  const agents = await Promise.all(Array.from({ length: clients }, () => connect(url, token)));
  const samples: number[] = [];
  let errors = 0;
  const cpuBefore = cpuMsOf(server.process.pid);
  const loadBefore = os.loadavg()[0];
  const clientCpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent) => {
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        const result = await agent.callTool({ name: tool, arguments: args() });
        samples.push(performance.now() - t);
        if (result.isError) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuMsOf(server.process.pid);
  const clientCpu = process.cpuUsage(clientCpuBefore);
  await Promise.all(agents.map((a) => a.close()));
  const serverCpu = cpuBefore === null || cpuAfter === null ? null : Math.round(((cpuAfter - cpuBefore) / samples.length) * 100) / 100;
  return {
    clients,
    ...percentiles(samples),
    errors,
    calls_per_s: Math.round(samples.length / seconds),
    server_cpu_ms_per_call: serverCpu,
    client_cpu_ms_per_call: Math.round(((clientCpu.user + clientCpu.system) / 1000 / samples.length) * 100) / 100,
    load_average_1m: Math.round(((loadBefore + os.loadavg()[0]) / 2) * 10) / 10,
  };
}

/**
 * MCP over HTTP on loopback against the built app: p50/p99 of analyze_hotspots (a cpuprofile run
 * of 1.2 M samples) and get_trace_window (a Chrome trace run) with 1, 8 and 32 concurrent clients.
 * Goal (issue 6): p50 ≤ 20 ms and p99 ≤ 100 ms at 8 clients.
 */
export async function mcpBenchmark(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-mcp-"));
  const ctx: ServiceContext = { locator: { cwd: dir, projectRoot: dir }, actor: "cli" };
  try {
    initWorkspace(dir).close();
    const samples = 1_200_000;
    await cpuprofileFile(path.join(dir, "big.cpuprofile"), samples, 20_000);
    const traceBytes = await chromeTraceFile(path.join(dir, "trace.json"), 40 * MB);
    const profile = await callService(importArtifact, ctx, { path: "big.cpuprofile" });
    const trace = await callService(importArtifact, ctx, { path: "trace.json" });
    const { token } = await callService(agentToken, ctx, {});
    const server = await startServer(dir, ["--workers", "0"]);
    try {
      await callService(setAgentAccess, ctx, { enabled: true });
      const spanCount = trace.rows.spans ?? 0;
      // Windows of 2 ms at random places in the trace's first 2 s (the generator advances ~25 µs per span).
      let seed = 7;
      const windowArgs = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        const start = (seed % 2_000_000) * 1000;
        return { run_id: trace.run_id, start_ns: start, end_ns: start + 2_000_000, limit: 200 };
      };
      // A different page size on every call. The service pages one kept ranking per (commit, run,
      // metric), so these are pages of an answered question; what a first question costs is
      // measured below (first_question_hotspots_query).
      let asked = 0;
      const hotspotArgs = () => ({ run_id: profile.run_id, limit: 1 + (asked++ % 1000) });
      // The same calls straight into the services in this process: what the query itself costs.
      const direct = async (fn: () => Promise<unknown>, n: number) => {
        await fn();
        const xs: number[] = [];
        for (let i = 0; i < n; i++) {
          const t = performance.now();
          await fn();
          xs.push(performance.now() - t);
        }
        return percentiles(xs);
      };
      // The hotspots query itself, asked as a new SQL text every time (the engine's answers are
      // kept per exact text): what the first question about a run and metric costs.
      const ws = openWorkspace(ctx.locator);
      const generations = (ws.db.prepare("SELECT g.id FROM generations g JOIN registrations r ON r.artifact_id = g.artifact_id WHERE r.run_id = ?").all(profile.run_id) as { id: string }[]).map((r) => r.id);
      const reader = await openEvidence(ws, "HEAD");
      let fresh = 0;
      const firstQuestion = await direct(() => reader.run(hotspotsQuery, { generations, metric: "samples", limit: 5_001 + (fresh++ % 4_000) }), 50);
      ws.close();
      const baseline = {
        analyze_hotspots: await direct(() => callService(analyzeHotspots, ctx, hotspotArgs()), 50),
        get_trace_window: await direct(() => callService(traceWindow, ctx, windowArgs()), 50),
        first_question_hotspots_query: firstQuestion,
      };
      await load(server, token, 1, 5, "analyze_hotspots", hotspotArgs); // warm the server's readers
      await load(server, token, 1, 5, "get_trace_window", windowArgs);
      // The same question again (an agent re-reading hotspots, several agents on one run): answered
      // from the engine's per-commit answers, so this is the MCP path's own cost.
      const repeatedArgs = () => ({ run_id: profile.run_id, limit: 20 });
      await load(server, token, 1, 2, "analyze_hotspots", repeatedArgs);
      const results: Record<string, unknown[]> = { analyze_hotspots_page_sizes: [], get_trace_window: [], analyze_hotspots_repeated_question: [] };
      for (const clients of [1, 8, 32]) {
        const calls = clients === 1 ? 100 : clients === 8 ? 25 : 8;
        results.analyze_hotspots_page_sizes.push(await load(server, token, clients, calls, "analyze_hotspots", hotspotArgs));
        results.get_trace_window.push(await load(server, token, clients, calls, "get_trace_window", windowArgs));
        results.analyze_hotspots_repeated_question.push(await load(server, token, clients, calls, "analyze_hotspots", repeatedArgs));
      }
      return {
        transport: "streamable-http (stateless, loopback, bearer token, redacted results, audited) at /api/mcp of `emberscope serve`",
        note: "clients and server share this machine's cores (and any other work on it: see load_average_1m); server_cpu_ms_per_call is the server process's CPU time per call, client_cpu_ms_per_call the SDK clients' (this process)",
        runs: { cpuprofile_samples: samples, trace_bytes: traceBytes, trace_spans: spanCount },
        goal: "p50 <= 20 ms and p99 <= 100 ms at 8 clients",
        direct_service_call_1_client: baseline,
        results,
      };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
