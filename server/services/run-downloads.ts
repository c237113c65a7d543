import { createReadStream, promises as fsp } from "node:fs";
import type { Readable } from "node:stream";
import { z } from "zod";
import { SpeedscopeWriter, speedscopeUnit } from "../../analysis/export/speedscope";
import { exportSamplesQuery, exportTracksQuery, timelineFramesQuery, timelineStacksQuery } from "../../analysis/queries";
import { EmberscopeError } from "../domain/errors";
import type { ObjectId } from "../store/object-store";
import { getRun } from "../store/runs";
import { openWorkspace } from "../store/workspace";
import { runEvidence } from "./evidence";
import { defineService, type ServiceContext } from "./service";

/** A file name made of a run's title: letters, digits and a few marks; never a path. */
export function downloadName(title: string, extension: string): string {
  const base = title.replace(/\.[A-Za-z0-9]{1,12}(\.gz)?$/, "").replace(/[^\w.\-+@()]+/g, "_").replace(/^[._]+|_+$/g, "").slice(0, 120);
  return `${base || "run"}${extension}`;
}

export const exportSpeedscope = defineService({
  name: "evidence.export_speedscope",
  summary: "A run's samples of one metric as a speedscope file (one sampled profile per track), to open in speedscope and the tools that read its format.",
  kind: "query",
  input: z
    .object({
      run_id: z.string().min(1).max(128),
      metric: z.string().min(1).max(128).optional().describe("Metric name; the run's primary metric by default."),
      commit_id: z.string().min(1).max(128).default("HEAD").describe('The commit to read; "HEAD" by default.'),
    })
    .strict(),
  output: z.object({
    file_name: z.string(),
    commit_id: z.string(),
    metric: z.string(),
    document: z.record(z.string(), z.unknown()).describe("The speedscope file (https://www.speedscope.app/file-format-schema.json)."),
  }),
  handler: async (input, { ws }) => {
    const run = getRun(ws.db, input.run_id);
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const present = evidence.metrics.filter((m) => m.samples > 0);
    const metric = input.metric ? evidence.metrics.find((m) => m.name === input.metric) : (present.find((m) => m.name === "cpu_ns" || m.name === "wall_ns") ?? present[0]);
    if (!metric) {
      throw new EmberscopeError(input.metric ? "INVALID_ARGUMENTS" : "ARTIFACT_EMPTY", input.metric ? `The run has no metric ${input.metric}.` : `Run ${input.run_id} has no samples in this commit to export.`, {
        details: { run_id: input.run_id, ...(input.metric ? { argument: "metric", available: evidence.metrics.map((m) => m.name) } : {}) },
      });
    }
    const { generations, reader } = evidence;
    const writer = new SpeedscopeWriter(run.title, speedscopeUnit(metric.unit), "emberscope");
    for (const f of await reader.run(timelineFramesQuery, { generations })) writer.addFrame(f);
    await reader.scan(timelineStacksQuery, { generations }, (columns, rows) => {
      const [g, stack, parent, frame] = columns as [number[], number[], (number | null)[], number[]];
      for (let i = 0; i < rows; i++) writer.addStack({ g: g[i], stack_id: stack[i], parent_stack_id: parent[i], frame_id: frame[i] });
    });
    for (const t of await reader.run(exportTracksQuery, { generations })) writer.addTrack(t);
    await reader.scan(exportSamplesQuery, { generations, metric: metric.name }, (columns, rows) => {
      const [g, track, stack, , value] = columns as [number[], (number | null)[], number[], unknown, number[]];
      for (let i = 0; i < rows; i++) writer.addSample(g[i], track[i], stack[i], value[i]);
    });
    return { file_name: downloadName(run.title, ".speedscope.json"), commit_id: reader.commit.commit_id, metric: metric.name, document: writer.finish() as unknown as Record<string, unknown> };
  },
});

export interface RunArtifactDownload {
  fileName: string;
  mediaType: string;
  size: number;
  open(): Readable;
}

/** Kinds of registration that are a run's evidence as it was produced (not the workload's console output). */
const CONSOLE_KINDS = new Set(["stdout", "stderr"]);

/**
 * The original bytes of a run's artifact — the file that was imported, or what a capture's
 * profiler wrote — for the person's download. The workload's stdout/stderr are not offered here.
 */
export async function readRunArtifact(ctx: ServiceContext, runId: string): Promise<RunArtifactDownload> {
  const ws = openWorkspace(ctx.locator, { readonly: true });
  try {
    const run = getRun(ws.db, runId);
    const rows = ws.db.prepare("SELECT artifact_id, kind, media_type, file_name FROM registrations WHERE run_id = ? ORDER BY created_at, id").all(runId) as { artifact_id: string; kind: string; media_type: string; file_name: string | null }[];
    const original = rows.find((r) => !CONSOLE_KINDS.has(r.kind));
    if (!original) {
      throw new EmberscopeError("ARTIFACT_NOT_FOUND", `Run ${runId} has no artifact to download (it failed before producing one).`, {
        details: { run_id: runId },
        recovery: { operation: "runs.get", arguments: { run_id: runId }, safe_to_repeat: true },
      });
    }
    const file = ws.objects.pathOf(original.artifact_id as ObjectId);
    const stat = await fsp.stat(file).catch(() => null);
    if (!stat) throw new EmberscopeError("ARTIFACT_NOT_FOUND", "The artifact's bytes are missing; run validate.", { details: { run_id: runId, artifact_id: original.artifact_id } });
    const fileName = (original.file_name ?? downloadName(run.title, ".bin")).replace(/[^\w.\-+@()]+/g, "_");
    return { fileName, mediaType: original.media_type, size: stat.size, open: () => createReadStream(file) };
  } finally {
    ws.close();
  }
}
