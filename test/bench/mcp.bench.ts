import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { agentToken, analyzeHotspots, callService, importArtifact, setAgentAccess, summarizeRun, traceWindow, type ServiceContext } from "../../server/services";
import { hotspotsQuery } from "../../analysis/queries";
import { openEvidence } from "../../server/evidence/engine";
import { spanIndexFor } from "../../server/evidence/span-index";
import { runGenerationIds } from "../../server/services/corpus";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { startServer, type RunningServer } from "../helpers/server";
import { chromeTraceFile, cpuprofileFile } from "./generators";
import { LeanMcpClient } from "./lean-mcp-client";

const MB = 1024 * 1024;

export function percentiles(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (x: number) => Math.round(x * 10) / 10;
  return { n: sorted.length, p50_ms: round(at(0.5)), p99_ms: round(at(0.99)), max_ms: round(sorted[sorted.length - 1]) };
}

/** One agent's connection: the SDK's `Client`, or the lean load generator (lean-mcp-client.ts). */
interface Agent {
  call(tool: string, args: Record<string, unknown>): Promise<{ ok: boolean; structured?: Record<string, unknown> }>;
  close(): Promise<void> | void;
}

type ClientKind = "lean" | "sdk";

async function connect(kind: ClientKind, url: string, token: string): Promise<Agent> {
  if (kind === "lean") {
    const lean = new LeanMcpClient(url, token);
    await lean.initialize();
    return {
      call: async (tool, args) => {
        const r = await lean.callTool(tool, args);
        return { ok: r.ok, structured: r.result?.structuredContent };
      },
      close: () => lean.close(),
    };
  }
  const client = new Client({ name: "emberscope-bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return {
    call: async (tool, args) => {
      const r = await client.callTool({ name: tool, arguments: args });
      return { ok: !r.isError && Array.isArray(r.content), structured: r.structuredContent as Record<string, unknown> | undefined };
    },
    close: () => client.close(),
  };
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
 * What one agent asks next. Each agent gets its own (an agent walking pages keeps its cursor);
 * `previous` is the structured result of its last call.
 */
export type Questions = () => (previous: Record<string, unknown> | undefined) => Record<string, unknown>;

/**
 * `clients` connected agents each make `calls` calls back to back; latency per call (ms), errors
 * (a JSON-RPC error, or a CallToolResult with isError), and the CPU time per call of the server
 * and of the clients (this process) — less sensitive than latency to other work on the machine.
 */
export async function load(server: Pick<RunningServer, "url" | "process">, token: string, kind: ClientKind, clients: number, calls: number, tool: string, questions: Questions, keepLatencies = false) {
  const agents = await Promise.all(Array.from({ length: clients }, () => connect(kind, server.url, token)));
  const samples: number[] = [];
  let errors = 0;
  const cpuBefore = cpuMsOf(server.process.pid);
  const loadBefore = os.loadavg()[0];
  const clientCpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent) => {
      const next = questions();
      let previous: Record<string, unknown> | undefined;
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        const result = await agent.call(tool, next(previous));
        samples.push(performance.now() - t);
        if (!result.ok) errors++;
        previous = result.structured;
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
    /** Every call's latency (ms), for a caller pooling several loads. */
    latencies: keepLatencies ? samples : undefined,
  };
}

/**
 * What an agent does: the default page (20 rows), then the next one with next_cursor, and at the
 * end of the ranking the same walk for the run's next metric. Agents start at different metrics,
 * so the pages asked at one moment differ.
 */
export function hotspotPagesOf(runId: string, metrics: string[]): Questions {
  let walkers = 0;
  return () => {
    let metric = walkers++ % metrics.length;
    return (previous) => {
      const cursor = previous?.next_cursor;
      if (typeof cursor === "string") return { run_id: runId, metric: metrics[metric], cursor };
      if (previous) metric = (metric + 1) % metrics.length;
      return { run_id: runId, metric: metrics[metric] };
    };
  };
}

/**
 * MCP over HTTP on loopback against the built app: p50/p99 of analyze_hotspots (a cpuprofile run
 * of 1.2 M samples) and get_trace_window (a Chrome trace run) with 1, 8 and 32 concurrent clients,
 * each with two load generators: a lean client (plain keep-alive HTTP, so the figures are mostly
 * the server's) and the SDK's `Client` (what most agents use; its own CPU shares the cores).
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
      const metrics = (await callService(summarizeRun, ctx, { run_id: profile.run_id })).metrics.map((m) => m.name);
      // Windows of 2 ms at random places in the trace's first 2 s (the generator advances ~25 µs per span).
      let seed = 7;
      const windowArgs = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        const start = (seed % 2_000_000) * 1000;
        return { run_id: trace.run_id, start_ns: start, end_ns: start + 2_000_000, limit: 200 };
      };
      const windows: Questions = () => () => windowArgs();
      const hotspotPages = hotspotPagesOf(profile.run_id, metrics);
      // A different page size on every call, up to 1000 rows (the tool's maximum): a heavier load
      // than an agent's, dominated by projecting, serializing and sending large results. The
      // service pages one kept ranking per (commit, run, metric), so these are pages of an answered
      // question; what a first question costs is measured below (first_question_hotspots_query).
      // Each agent steps through sizes 101 apart (mod 1000), from its own start: every run asks a
      // spread of sizes averaging about 500 rows, whatever its number of clients and calls.
      let asked = 0;
      const hotspotArgs = () => ({ run_id: profile.run_id, limit: 1 + (asked++ % 1000) });
      let sizers = 0;
      const pageSizes: Questions = () => {
        let i = sizers++ * 7;
        return () => ({ run_id: profile.run_id, limit: 1 + ((i++ * 101) % 1000) });
      };
      // The same question again (an agent re-reading hotspots, several agents on one run): answered
      // from the engine's per-commit answers, so this is the MCP path's own cost.
      const repeated: Questions = () => () => ({ run_id: profile.run_id, limit: 20 });
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
      const reader = await openEvidence(ws, "HEAD");
      const generations = runGenerationIds(ws, reader.commit, profile.run_id);
      let fresh = 0;
      const firstQuestion = await direct(() => reader.run(hotspotsQuery, { generations, metric: "samples", limit: 5_001 + (fresh++ % 4_000) }), 50);
      const traceGenerations = runGenerationIds(ws, reader.commit, trace.run_id);
      // In this process too, windows are answered from the span index once it is loaded.
      await spanIndexFor(ws.layout.dir, reader, traceGenerations);
      ws.close();
      const baseline = {
        analyze_hotspots: await direct(() => callService(analyzeHotspots, ctx, hotspotArgs()), 50),
        get_trace_window: await direct(() => callService(traceWindow, ctx, windowArgs()), 50),
        first_question_hotspots_query: firstQuestion,
      };
      const loads: Record<string, { tool: string; questions: Questions }> = {
        analyze_hotspots_pages: { tool: "analyze_hotspots", questions: hotspotPages },
        analyze_hotspots_page_sizes: { tool: "analyze_hotspots", questions: pageSizes },
        get_trace_window: { tool: "get_trace_window", questions: windows },
        analyze_hotspots_repeated_question: { tool: "analyze_hotspots", questions: repeated },
      };
      // Warm the server's readers and its JIT (a server's first thousand calls run slower code). The
      // first trace window starts loading the run's span index in the background (windows go to
      // SQL meanwhile): its warm-up lasts at least 10 s, well past that load (about 2 s here).
      for (const { tool, questions } of Object.values(loads)) {
        const warmUntil = performance.now() + (tool === "get_trace_window" ? 10_000 : 0);
        do await load(server, token, "lean", 8, 40, tool, questions);
        while (performance.now() < warmUntil);
      }
      const results: Record<ClientKind, Record<string, unknown[]>> = { lean: {}, sdk: {} };
      for (const kind of ["lean", "sdk"] as const) {
        for (const [name, { tool, questions }] of Object.entries(loads)) {
          results[kind][name] = [];
          for (const clients of [1, 8, 32]) {
            const calls = clients === 1 ? 100 : clients === 8 ? 40 : 10;
            results[kind][name].push(await load(server, token, kind, clients, calls, tool, questions));
          }
        }
      }
      return {
        transport: "streamable-http (stateless, loopback, bearer token, redacted results, audited) at /api/mcp of `emberscope serve`",
        note: [
          "Clients and server share this machine's cores (and any other work on it: see load_average_1m). server_cpu_ms_per_call is the server process's CPU time per call (/proc), client_cpu_ms_per_call the load generator's (this process).",
          "results.lean: a minimal MCP client (test/bench/lean-mcp-client.ts: initialize, then tools/call POSTs on a keep-alive socket with the headers the spec requires; a call counts as an error unless it is a CallToolResult without isError) — its figures are mostly the server's. results.sdk: the MCP SDK's Client over StreamableHTTPClientTransport, as most agents connect; its own CPU per call is larger than the server's.",
          "analyze_hotspots_pages (the primary hotspots load): what an agent does — the default limit (20) and a new page every call, each client walking the ranking with next_cursor and restarting at the end with the run's next metric.",
          "analyze_hotspots_page_sizes (secondary, heavier): page sizes spread over 1..1000 from the top of the ranking (about 500 rows per answer on average), dominated by projecting, serializing and sending large results.",
          "get_trace_window: 2 ms windows at random places in a 40 MB Chrome trace, up to 200 spans each. analyze_hotspots_repeated_question: the same first page again and again (the MCP path's own cost on an answered question).",
          "direct_service_call_1_client: the same services called in this process (no MCP): what the query itself costs. first_question_hotspots_query: the hotspots SQL as a new question each time (not an answer kept per commit).",
          "Every load ran once unmeasured (8 lean clients x 40 calls; trace windows for at least 10 s, past the span index's background load) before the measured runs, to warm the server's readers and JIT.",
        ],
        runs: { cpuprofile_samples: samples, cpuprofile_metrics: metrics, trace_bytes: traceBytes, trace_spans: spanCount },
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
