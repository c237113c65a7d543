import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initWorkspace } from "../../server/store/workspace";
import { memoryClient, type AgentClient } from "./clients";

const FIXTURES = path.join(import.meta.dirname, "..", "fixtures", "tracks");

/** Independent count: the perf script text's sample headers (`comm pid/tid [cpu] …`) per pid. */
function perfSamples(text: string): Map<string, { comm: string; samples: number; threads: Set<string> }> {
  const out = new Map<string, { comm: string; samples: number; threads: Set<string> }>();
  for (const line of text.split("\n")) {
    const m = /^(\S.*?)\s+(\d+)\/(\d+)\s+\[\d+\]/.exec(line);
    if (!m) continue;
    const p = out.get(m[2]) ?? { comm: m[1], samples: 0, threads: new Set<string>() };
    p.samples++;
    p.threads.add(m[3]);
    out.set(m[2], p);
  }
  return out;
}

describe("MCP evidence tools name the tracks they cover and take a track filter", () => {
  let root: string;
  let agent: AgentClient;
  const runs: Record<string, string> = {};
  const counts = perfSamples(readFileSync(path.join(FIXTURES, "perf-system-wide.txt"), "utf8"));
  const threadCount = [...counts.values()].reduce((n, p) => n + p.threads.size, 0);
  const busy = [...counts.entries()].find(([, p]) => p.comm === "busy")!;

  beforeAll(async () => {
    // One project for the file (tempProject() is removed after each test).
    root = mkdtempSync(path.join(tmpdir(), "emberscope-mcp-tracks-"));
    initWorkspace(root).close();
    copyFileSync(path.join(FIXTURES, "perf-system-wide.txt"), path.join(root, "system-wide.perf.txt"));
    copyFileSync(path.join(FIXTURES, "two-profiles.speedscope.json"), path.join(root, "two-profiles.speedscope.json"));
    agent = await memoryClient(root);
    for (const [name, file] of [["perf", "system-wide.perf.txt"], ["speedscope", "two-profiles.speedscope.json"]]) {
      const imported = await agent.call("import_artifact", { path: file });
      expect(imported.ok, JSON.stringify(imported)).toBe(true);
      runs[name] = (imported as { value: { run_id: string } }).value.run_id;
    }
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("summarize_run lists the sampled tracks with their keys and counts, and says it covers them all", async () => {
    const s = await agent.call("summarize_run", { run_id: runs.perf });
    if (!s.ok) throw new Error(JSON.stringify(s.error));
    expect(s.value.sampled_tracks[0]).toMatchObject({ process_id: busy[0], thread_name: "busy", samples: busy[1].samples, label: `busy · pid ${busy[0]}`, track_key: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(s.value.track_coverage).toMatchObject({ selection: "all", covered_count: threadCount, sampled_tracks: threadCount });
    expect(s.text).toContain(`All ${threadCount} tracks merged.`);

    const one = await agent.call("summarize_run", { run_id: runs.perf, tracks: "busiest" });
    if (!one.ok) throw new Error(JSON.stringify(one.error));
    expect(one.value.track_coverage).toMatchObject({ selection: "busiest", covered_count: 1, value: busy[1].samples });
    expect(one.value.metrics.find((m: { name: string }) => m.name === "samples")).toMatchObject({ total: busy[1].samples, samples: busy[1].samples });
    expect(one.text).toContain(`1 of ${threadCount} tracks: busy · pid ${busy[0]}.`);
  });

  it("analyze_hotspots of one process: its samples only, its frames first, and the answer says so", async () => {
    const s = await agent.call("summarize_run", { run_id: runs.perf });
    if (!s.ok) throw new Error(JSON.stringify(s.error));
    const [nodePid, node] = [...counts.entries()].find(([, p]) => p.comm === "node" && p.threads.size > 1)!;
    const keys = s.value.sampled_tracks.filter((t: { process_id: string }) => t.process_id === nodePid).map((t: { track_key: string }) => t.track_key);
    expect(keys).toHaveLength(node.threads.size);
    const hot = await agent.call("analyze_hotspots", { run_id: runs.perf, tracks: keys, limit: 5 });
    if (!hot.ok) throw new Error(JSON.stringify(hot.error));
    expect(hot.value.grand_total).toBe(node.samples);
    expect(hot.value.tracks).toMatchObject({ selection: "chosen", covered_count: node.threads.size, value: node.samples });
    expect(hot.text).toContain(`${node.threads.size} of ${threadCount} tracks:`);
    // Paging keeps the filter: the cursor is bound to it.
    const next = await agent.call("analyze_hotspots", { run_id: runs.perf, tracks: keys, limit: 5, cursor: hot.value.next_cursor });
    expect(next.ok).toBe(true);
    const stale = await agent.call("analyze_hotspots", { run_id: runs.perf, tracks: "all", limit: 5, cursor: hot.value.next_cursor });
    expect(stale.ok ? null : stale.error.code).toBe("STALE_CURSOR");

    const busiest = await agent.call("analyze_hotspots", { run_id: runs.perf, tracks: "busiest", limit: 3 });
    if (!busiest.ok) throw new Error(JSON.stringify(busiest.error));
    expect(busiest.value.grand_total).toBe(busy[1].samples);
    const frame = busiest.value.rows[0].frame_key;
    const neighbours = await agent.call("get_frame_neighbours", { run_id: runs.perf, frame_key: frame, tracks: "busiest" });
    if (!neighbours.ok) throw new Error(JSON.stringify(neighbours.error));
    expect(neighbours.value.tracks.covered.map((t: { label: string }) => t.label)).toEqual([`busy · pid ${busy[0]}`]);
    expect(neighbours.text).toContain(`1 of ${threadCount} tracks: busy`);
    // The callers of the busy process's top frame add up to its total there (each sample once).
    const callerSum = neighbours.value.callers.reduce((sum: number, r: { value: number }) => sum + r.value, 0);
    expect(callerSum).toBe(busiest.value.rows[0].total);
    // Its heaviest stacks are the busy process's too: each stack's weight is within its samples.
    expect(neighbours.value.stacks.length).toBeGreaterThan(0);
    expect(neighbours.value.stacks.reduce((sum: number, x: { value: number }) => sum + x.value, 0)).toBeLessThanOrEqual(busy[1].samples);
  });

  it("get_trace_window takes track keys and lists only the tracks it covers", async () => {
    const s = await agent.call("summarize_run", { run_id: runs.speedscope });
    if (!s.ok) throw new Error(JSON.stringify(s.error));
    expect(s.value.sampled_tracks.map((t: { label: string }) => t.label)).toEqual(["Worker", "Main thread"]);
    const worker = s.value.sampled_tracks[0].track_key;
    const w = await agent.call("get_trace_window", { run_id: runs.speedscope, start_ns: 0, end_ns: 200_000_000, track_keys: [worker] });
    if (!w.ok) throw new Error(JSON.stringify(w.error));
    expect(w.value.tracks.map((t: { track_key: string }) => t.track_key)).toEqual([worker]);
    // The Worker profile's events open and close onmessage, parseChunk and hashBlock twice: four spans.
    expect(w.value.spans.map((x: { name: string }) => x.name).sort()).toEqual(["hashBlock", "hashBlock", "onmessage", "parseChunk"]);
    expect(w.text).toContain("on 1 track(s) (Worker)");
  });

  it("an unknown track key is INVALID_ARGUMENTS naming the tracks there are; a malformed one never reaches SQL", async () => {
    const unknown = await agent.call("analyze_hotspots", { run_id: runs.speedscope, tracks: ["0123456789ab"] });
    expect(unknown.ok).toBe(false);
    if (unknown.ok) return;
    expect(unknown.error.code).toBe("INVALID_ARGUMENTS");
    expect(unknown.error.details).toMatchObject({ argument: "tracks", unknown: ["0123456789ab"] });
    expect((unknown.error.details.available as { label: string }[]).map((t) => t.label)).toEqual(["Worker", "Main thread"]);
    for (const tracks of [["x' OR 1=1 --"], [], "busiest; DROP"]) {
      const bad = await agent.call("analyze_hotspots", { run_id: runs.speedscope, tracks });
      expect(bad.ok ? null : bad.error.code).toBe("INVALID_ARGUMENTS");
    }
  });
});
