import { describe, expect, it } from "vitest";
import type { EvidenceBuilder } from "../../analysis/evidence/builder";
import { loadWindow, type TraceSource, type TraceSummary } from "../../components/trace/trace-data";
import { callService, summarizeRun, traceWindow } from "../../server/services";
import type { Workspace } from "../../server/store/workspace";
import { withWorkspace } from "../helpers/project";
import { publishEvidence } from "../helpers/seed";

/** Three threads with spans: main (5 spans), worker (3), io (1). */
function fixture(b: EvidenceBuilder) {
  const threads = [["main", 5], ["worker", 3], ["io", 1]] as const;
  threads.forEach(([name, count], i) => {
    const track = b.track({ processId: 1, threadId: i + 1, threadName: name, kind: "thread" });
    for (let k = 0; k < count; k++) b.span({ trackId: track, name: `${name}-${k}`, startNs: k * 100, durNs: 50, depth: 0 });
  });
}

/** The trace window's source over the services themselves (what serverTraceSource asks over tRPC), recording the tracks asked for. */
function serviceSource(ws: Workspace, asked: number[]): TraceSource {
  const ctx = { locator: { cwd: ws.layout.projectRoot, projectRoot: ws.layout.projectRoot }, actor: "test" as const };
  return {
    summary: async (runId, commitId) => (await callService(summarizeRun, ctx, { run_id: runId, commit_id: commitId })) as TraceSummary,
    windowPage: (a) => {
      asked.push(a.track);
      return callService(traceWindow, ctx, { run_id: a.runId, commit_id: a.commitId, start_ns: a.start_ns, end_ns: a.end_ns, tracks: [a.track], limit: a.limit, ...(a.cursor ? { cursor: a.cursor } : {}) });
    },
    flows: async () => ({ flows: [], truncated: false }),
    rangeFlame: async () => ({ nodes: [], metric: null, unit: null, commit_id: "", status: { state: "empty", reason: null, fill_with: null } }),
  };
}

describe("the trace window reads only the selected tracks' spans", () => {
  it("a selection of tracks (keys, busiest, all) fetches those tracks' spans and no others", async () => {
    await withWorkspace(async (ws) => {
      const { run_id } = await publishEvidence(ws, "trace-tracks", fixture);
      const asked: number[] = [];
      const source = serviceSource(ws, asked);
      const summary = await source.summary(run_id, "HEAD");
      const byName = Object.fromEntries(summary.tracks.map((t) => [t.thread_name, t]));
      const load = async (selection: Parameters<typeof loadWindow>[1]["selection"]) => {
        asked.length = 0;
        const w = await loadWindow(source, { runId: run_id, commitId: summary.commit_id, tracks: summary.tracks, selection, start_ns: 0, end_ns: 1000, budget: 10_000 });
        return { names: [...new Set(w.spans.map((s) => summary.tracks.find((t) => t.track_id === s.track_id)!.thread_name))].sort(), spans: w.spans.length, asked: [...asked].sort(), read: [...w.trackIds].sort() };
      };
      const ids = (...names: string[]) => names.map((n) => byName[n].track_id).sort();
      expect(await load([byName.worker.track_key, byName.io.track_key])).toEqual({ names: ["io", "worker"], spans: 4, asked: ids("worker", "io"), read: ids("worker", "io") });
      expect(await load("busiest")).toEqual({ names: ["main"], spans: 5, asked: ids("main"), read: ids("main") });
      expect(await load("all")).toEqual({ names: ["io", "main", "worker"], spans: 9, asked: ids("main", "worker", "io"), read: ids("main", "worker", "io") });
      // Keys the run lacks are ignored: none left means every track, as the selector shows.
      expect((await load(["0123456789ab"])).names).toEqual(["io", "main", "worker"]);
    });
  });
});
