import { FORMAT_IDS } from "../../analysis/formats/types";
import { analyzeHotspots, compareRuns, frameCallees, frameCallers, importArtifact, stackExamples, summarizeRun, traceWindow } from "../services";
import { integerFlag, stringFlag, transformsFlag, type OptionSpec, type ParsedArgs } from "./args";
import type { CliCommand } from "./commands";
import { serviceCommand } from "./service-command";
import { formatBytes, formatSeconds, keyValues, table } from "./render";
import { coverageNote } from "../services/evidence-tracks";

/** A value in its unit, for people: ns as ms, bytes as KB/MB, counts as they are. */
export function formatValue(value: number, unit: string | null): string {
  if (unit === "ns" || unit === "nanoseconds") return `${(value / 1e6).toFixed(value >= 1e9 ? 0 : 2)} ms`;
  if (unit === "bytes") return formatBytes(value);
  return `${Number.isInteger(value) ? value : value.toFixed(2)}${unit && unit !== "count" ? ` ${unit}` : ""}`;
}

const COMMIT: Record<string, OptionSpec> = { commit: { type: "string", valueName: "COMMIT", field: "commit_id", description: 'Read this commit (default "HEAD").' } };
const METRIC: Record<string, OptionSpec> = { metric: { type: "string", valueName: "METRIC", description: "Metric name (default: the run's primary metric)." } };
const LIMIT: Record<string, OptionSpec> = { limit: { type: "string", valueName: "N", description: "Rows to return." } };
const TRACKS: Record<string, OptionSpec> = {
  tracks: { type: "string", valueName: "WHICH", description: "Threads/processes/profiles to read: all (default, merged), busiest, or track keys joined by commas (from analyze summary)." },
};

const TRANSFORMS: Record<string, OptionSpec> = {
  transforms: { type: "string", valueName: "TF", description: "Call-tree transforms in order, as the run page's tf= (e.g. mf-FRAME_KEY~df-FRAME_KEY: merge, drop, ff focus function, fs focus subtree, rec/drec collapse recursion, cm collapse module)." },
};

/** --tracks as the services take it: "all", "busiest" or a list of track keys (the schema checks them). */
function tracksFlag(args: ParsedArgs): string | string[] | undefined {
  const value = stringFlag(args.values, "tracks");
  if (value === undefined || value === "all" || value === "busiest") return value;
  return value.split(",").map((k) => k.trim());
}

function common(args: ParsedArgs): Record<string, unknown> {
  return { metric: stringFlag(args.values, "metric"), limit: integerFlag(args.values, "limit"), commit_id: stringFlag(args.values, "commit"), tracks: tracksFlag(args), transforms: transformsFlag(args.values) };
}

/** Which tracks an answer covers, as a line under it (nothing for a run of one track). */
const tracksLine = (coverage: Parameters<typeof coverageNote>[0]) => {
  const note = coverageNote(coverage).trim();
  return note ? `\nTracks: ${note}` : "";
};

const statusLine = (s: { state: string; reason: string | null }) => (s.state === "available" ? "" : `\n(${s.state}${s.reason ? `: ${s.reason}` : ""})`);

export const EVIDENCE_COMMANDS: CliCommand[] = [
  serviceCommand({
    path: ["import"],
    service: importArtifact,
    positionals: [{ name: "PATH", description: "The profile or trace file, any you can read but one inside a .emberscope/ folder (gzip is undone automatically)." }],
    options: {
      format: { type: "string", valueName: "FORMAT", description: `Skip detection: ${FORMAT_IDS.join(", ")}.` },
      sensitivity: { type: "string", valueName: "LEVEL", description: "normal (default), internal or sensitive." },
      "max-bytes": { type: "string", valueName: "N", field: "max_bytes", description: "Refuse files larger than this (default 4 GiB)." },
    },
    input: (args, [file]) => ({ path: file, format: stringFlag(args.values, "format"), sensitivity: stringFlag(args.values, "sensitivity"), max_bytes: integerFlag(args.values, "max-bytes") }),
    human: (r) =>
      `Imported ${r.format} as run ${r.run_id} (commit ${r.commit_id}${r.reused_generation ? ", evidence reused" : ""}) in ${formatSeconds(r.timings_ms.total)}: ` +
      `store ${formatSeconds(r.timings_ms.store)}, parse ${formatSeconds(r.timings_ms.parse)}, totals ${formatSeconds(r.timings_ms.totals)}, write ${formatSeconds(r.timings_ms.write)}.\n` +
      table(Object.entries(r.rows).filter(([, n]) => n > 0).map(([t, n]) => ({ table: t, rows: n })), ["table", "rows"]) +
      (r.limitations.length ? `\nLimitations:\n${r.limitations.map((l) => `  ${l.code}: ${l.message}`).join("\n")}` : ""),
  }),
  serviceCommand({
    path: ["analyze", "summary"],
    service: summarizeRun,
    positionals: [{ name: "RUN_ID", description: "The run." }],
    options: { ...TRACKS, ...COMMIT },
    input: (args, [runId]) => ({ run_id: runId, commit_id: stringFlag(args.values, "commit"), tracks: tracksFlag(args) }),
    human: (s) =>
      keyValues([
        ["run", s.run_id],
        ["commit", s.commit_id],
        ["primary metric", s.primary_metric ?? "(none)"],
        ["spans", s.spans?.spans ?? 0],
        ["tracks", s.tracks.length],
      ]) +
      (s.metrics.length ? `\n\n${table(s.metrics.map((m) => ({ metric: m.name, total: formatValue(m.total, m.unit), samples: m.samples })), ["metric", "total", "samples"])}` : "") +
      (s.top_frames.length ? `\n\nTop frames by self:\n${table(s.top_frames.map((f) => ({ self: `${f.self_pct.toFixed(1)}%`, total: `${f.total_pct.toFixed(1)}%`, name: f.name, where: f.file ? `${f.file}:${f.line ?? ""}` : "" })), ["self", "total", "name", "where"])}` : "") +
      (s.sampled_tracks.length > 1
        ? `\n\nTracks with samples of ${s.primary_metric}, heaviest first:\n${table(s.sampled_tracks.slice(0, 20).map((t) => ({ track_key: t.track_key, samples: t.samples, value: formatValue(t.value, s.metrics.find((m) => m.name === s.primary_metric)?.unit ?? null), track: t.label })), ["track_key", "samples", "value", "track"])}${tracksLine(s.track_coverage)}`
        : "") +
      (s.limitations.length ? `\n\nLimitations:\n${s.limitations.map((l) => `  ${l.code}: ${l.message}`).join("\n")}` : "") +
      statusLine(s.status),
  }),
  serviceCommand({
    path: ["analyze", "hotspots"],
    service: analyzeHotspots,
    positionals: [{ name: "RUN_ID", description: "The run." }],
    options: { ...METRIC, ...TRACKS, ...TRANSFORMS, ...LIMIT, cursor: { type: "string", valueName: "CURSOR", description: "Continue from next_cursor." }, ...COMMIT },
    input: (args, [runId]) => ({ run_id: runId, ...common(args), cursor: stringFlag(args.values, "cursor") }),
    human: (r) =>
      `${r.metric ?? "(no metric)"}: total ${formatValue(r.grand_total, r.unit)} at commit ${r.commit_id}\n` +
      table(r.rows.map((f) => ({ self: formatValue(f.self, r.unit), "self%": f.self_pct.toFixed(1), total: formatValue(f.total, r.unit), "total%": f.total_pct.toFixed(1), frame_key: f.frame_key, name: f.name, where: f.file ? `${f.file}:${f.line ?? ""}` : "" })), ["self", "self%", "total", "total%", "frame_key", "name", "where"]) +
      (r.next_cursor ? `\n(more: --cursor ${r.next_cursor})` : "") +
      tracksLine(r.tracks) +
      statusLine(r.status),
  }),
  ...(["callers", "callees"] as const).map((which) =>
    serviceCommand({
      path: ["stacks", which],
      service: which === "callers" ? frameCallers : frameCallees,
      positionals: [{ name: "RUN_ID", description: "The run." }, { name: "FRAME_KEY", description: "The frame (frame_key from hotspots)." }],
      options: { ...METRIC, ...TRACKS, ...TRANSFORMS, ...LIMIT, ...COMMIT },
      input: (args, [runId, frameKey]) => ({ run_id: runId, frame_key: frameKey, ...common(args) }),
      human: (r) => table(r.rows.map((n) => ({ value: formatValue(n.value, r.unit), frame_key: n.frame_key, name: n.name })), ["value", "frame_key", "name"]) + tracksLine(r.tracks) + statusLine(r.status),
    }),
  ),
  serviceCommand({
    path: ["stacks", "examples"],
    service: stackExamples,
    positionals: [{ name: "RUN_ID", description: "The run." }, { name: "FRAME_KEY", description: "The frame (frame_key from hotspots)." }],
    options: { ...METRIC, ...TRACKS, ...TRANSFORMS, ...LIMIT, ...COMMIT },
    input: (args, [runId, frameKey]) => ({ run_id: runId, frame_key: frameKey, ...common(args) }),
    human: (r) => r.rows.map((e) => `${e.value}  ${e.frames.join(" → ")}`).join("\n") + tracksLine(r.tracks) + statusLine(r.status),
  }),
  serviceCommand({
    path: ["trace", "window"],
    service: traceWindow,
    positionals: [{ name: "RUN_ID", description: "The run." }],
    options: {
      start: { type: "string", valueName: "NS", field: "start_ns", description: "Window start (ns from the run's time origin)." },
      end: { type: "string", valueName: "NS", field: "end_ns", description: "Window end (ns)." },
      ...LIMIT,
      cursor: { type: "string", valueName: "CURSOR", description: "Continue from next_cursor." },
      ...COMMIT,
    },
    input: (args, [runId]) => ({ run_id: runId, start_ns: integerFlag(args.values, "start"), end_ns: integerFlag(args.values, "end"), limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor"), commit_id: stringFlag(args.values, "commit") }),
    human: (r) =>
      table(r.spans.map((s) => ({ track: s.track_id, start: formatValue(s.start_ns, "ns"), dur: formatValue(s.dur_ns, "ns"), depth: s.depth, name: `${"  ".repeat(Math.min(s.depth, 20))}${s.name}` })), ["track", "start", "dur", "depth", "name"]) +
      (r.next_cursor ? `\n(more: --cursor ${r.next_cursor})` : "") +
      statusLine(r.status),
  }),
  serviceCommand({
    path: ["compare"],
    service: compareRuns,
    positionals: [{ name: "BASE", description: "The baseline run.", field: "base_run_id" }, { name: "CANDIDATE", description: "The run compared to it.", field: "candidate_run_id" }],
    options: {
      collection: { type: "string", valueName: "WHICH", description: "changed (default), added, removed or all." },
      normalize: { type: "boolean", description: "Compare shares of each run's total." },
      ...METRIC,
      ...LIMIT,
      ...COMMIT,
    },
    input: (args, [base, candidate]) => ({ base_run_id: base, candidate_run_id: candidate, collection: stringFlag(args.values, "collection"), normalize: args.values.normalize === true, metric: stringFlag(args.values, "metric"), limit: integerFlag(args.values, "limit"), commit_id: stringFlag(args.values, "commit") }),
    human: (r) =>
      `${r.metric ?? "(no metric)"}: base ${formatValue(r.base_total, r.unit)}, candidate ${formatValue(r.candidate_total, r.unit)}\n` +
      table(r.rows.map((c) => ({ delta: formatValue(c.delta, r.unit), relative: c.relative === null ? "new" : `${(c.relative * 100).toFixed(1)}%`, status: c.status, base: formatValue(c.base_self, r.unit), candidate: formatValue(c.candidate_self, r.unit), name: c.name })), ["delta", "relative", "status", "base", "candidate", "name"]) +
      statusLine(r.status),
  }),
];
