import { z } from "zod";
import {
  addPrunedRemainders,
  calleesQuery,
  callersQuery,
  compareOnTracksQuery,
  flameTreeRangeQuery,
  hotspotsQuery,
  metricTotalsQuery,
  spanTotalsQuery,
  stackExamplesQuery,
  spanExtentQuery,
  timelineFramesQuery,
  timelineMetricIdsQuery,
  timelineSamplesQuery,
  timelineStacksQuery,
  traceWindowQuery,
  tracksQuery,
} from "../../analysis/queries";
import { CallPathTreeBuilder, GAP, TimeOrderMerge, type TimeOrder } from "../../analysis/flame/time-order";
import { CompareRow } from "../../analysis/queries/compare";
import type { EvidenceQuery } from "../../analysis/queries/define";
import { FlameNode } from "../../analysis/queries/flame-tree";
import { TimelineCell, timelineCells, timelineRemainder } from "../../analysis/queries/flame-timeline";
import { HotspotRow } from "../../analysis/queries/hotspots";
import { NeighbourRow, StackExampleRow } from "../../analysis/queries/callers";
import { MetricTotalRow, SpanTotalsRow } from "../../analysis/queries/summary";
import { TrackRow, WindowSpan } from "../../analysis/queries/trace-window";
import { TransformList, transformedCalleesQuery, transformedCallersQuery, transformedHotspotsQuery, transformedPathTreeQuery, transformedStackExamplesQuery, transformedStackMapQuery, type Transform, wholeRunTreeQuery } from "../../analysis/queries/transforms";
import { decodeCursor, encodeCursor } from "../domain/cursor";
import { EmberscopeError } from "../domain/errors";
import { CursorArg, Limitation, Run } from "../domain/models";
import { openEvidence, yieldToEventLoop, type EvidenceReader } from "../evidence/engine";
import { loadedSpanIndex } from "../evidence/span-index";
import { assertRunExists, getRun } from "../store/runs";
import type { Workspace } from "../store/workspace";
import { callService, defineService, type ServiceContext } from "./service";
import { scopeToTracks } from "../../analysis/queries/tracks";
import { TrackKeyList } from "../../analysis/queries/tracks";
import { TrackCoverage, TrackEntry, TrackSelection, TracksArg, resolveTracks, sampledTrackRows, sampledTracks, type ResolvedTracks } from "./evidence-tracks";

/** Whether a result could look at all: empty is not unavailable. */
export const EvidenceStatus = z.object({
  state: z.enum(["available", "empty", "unavailable", "partial"]),
  reason: z.string().nullable(),
  /** The operation that would fill it, when there is one. */
  fill_with: z.string().nullable(),
});
export type EvidenceStatus = z.infer<typeof EvidenceStatus>;

const RunId = z.string().min(1).max(128);
const CommitArg = z.string().min(1).max(128).default("HEAD").describe('The commit to read; "HEAD" by default.');
const MetricArg = z.string().min(1).max(128).optional().describe("Metric name; the run's primary metric by default.");
const FrameKey = z.string().regex(/^[0-9a-f]{16}$/, "expected a 16-hex frame_key");
const Transforms = TransformList.default([]).describe(
  "Call-tree transforms applied in order before the answer, as Firefox Profiler's (focus-function, focus-subtree, merge-function, drop-function, collapse-recursion, collapse-direct-recursion, collapse-module); none by default.",
);

/** Preferred metric when none is named: time first, then samples, then whatever the run has. */
const METRIC_PREFERENCE = ["cpu_ns", "wall_ns", "samples", "alloc_bytes", "instructions", "Ir"];

export interface RunEvidence {
  reader: EvidenceReader;
  generations: string[];
  metrics: z.infer<typeof MetricTotalRow>[];
  limitations: Limitation[];
  /** The importers' metadata of its generations (later generations' keys win). */
  metadata: Record<string, string>;
}

/** The generations of a run visible in the pinned commit, with its metric totals. */
export async function runEvidence(ws: Workspace, runId: string, commit: string): Promise<RunEvidence> {
  assertRunExists(ws.db, runId);
  const reader = await openEvidence(ws, commit);
  const visible = new Set(reader.commit.generations.map((g) => g.generation_id));
  const rows = ws.db
    .prepare(
      `SELECT DISTINCT g.id, g.limitations, g.metadata FROM generations g JOIN registrations r ON r.artifact_id = g.artifact_id
       WHERE r.run_id = ? ORDER BY g.id`,
    )
    .all(runId) as { id: string; limitations: string; metadata: string }[];
  const mine = rows.filter((r) => visible.has(r.id));
  const generations = mine.map((r) => r.id);
  const limitations = mine.flatMap((r) => JSON.parse(r.limitations) as Limitation[]);
  const metrics = generations.length ? await reader.run(metricTotalsQuery, { generations }) : [];
  const metadata = Object.assign({}, ...mine.map((r) => JSON.parse(r.metadata) as Record<string, string>)) as Record<string, string>;
  return { reader, generations, metrics, limitations, metadata };
}

function chooseMetric(evidence: RunEvidence, requested: string | undefined): { name: string; unit: string } | null {
  if (requested) {
    const found = evidence.metrics.find((m) => m.name === requested);
    if (!found) {
      throw new EmberscopeError("INVALID_ARGUMENTS", `The run has no metric ${requested}.`, {
        details: { argument: "metric", available: evidence.metrics.map((m) => m.name) },
      });
    }
    return { name: found.name, unit: found.unit };
  }
  const present = evidence.metrics.filter((m) => m.samples > 0);
  const preferred = METRIC_PREFERENCE.map((n) => present.find((m) => m.name === n)).find(Boolean) ?? present[0];
  return preferred ? { name: preferred.name, unit: preferred.unit } : null;
}

function statusOf(evidence: RunEvidence, runId: string, hasRows: boolean, what: string): EvidenceStatus {
  if (evidence.generations.length === 0) {
    return { state: "unavailable", reason: `Run ${runId} has no evidence in this commit (not extracted, failed, or pinned before it).`, fill_with: "imports.import" };
  }
  if (!hasRows) return { state: "empty", reason: `The run's evidence has no ${what}.`, fill_with: null };
  return { state: evidence.limitations.length ? "partial" : "available", reason: evidence.limitations.length ? "The importer recorded limitations; see summary." : null, fill_with: null };
}

export const HotspotsResult = z.object({
  rows: z.array(HotspotRow.omit({ grand_total: true })),
  metric: z.string().nullable(),
  unit: z.string().nullable(),
  grand_total: z.number(),
  commit_id: z.string(),
  next_cursor: z.string().nullable(),
  tracks: TrackCoverage,
  status: EvidenceStatus,
});

/** The query as it reads the chosen tracks: itself for the whole run, else scoped to them (their params then carry `tracks`). */
function onTracks<Q extends Parameters<typeof scopeToTracks>[0]>(query: Q, tracks: ResolvedTracks): { query: Q; extra: { tracks?: string[] } } {
  return tracks.filter ? { query: scopeToTracks(query) as unknown as Q, extra: { tracks: tracks.filter } } : { query, extra: {} };
}

/** Runs a query over the chosen tracks' samples only (the whole run's when no filter); `shared`: possibly the kept rows themselves (read them, never change them). */
function runOnTracks<P extends z.ZodObject<any>, R extends z.ZodType>(evidence: RunEvidence, query: EvidenceQuery<P, R>, params: z.input<P>, tracks: ResolvedTracks, shared = false): Promise<z.output<R>[]> {
  const ask = shared ? evidence.reader.runShared : evidence.reader.run;
  if (!tracks.filter) return ask(query, params) as Promise<z.output<R>[]>;
  return ask(scopeToTracks(query), { ...params, tracks: tracks.filter } as never) as Promise<z.output<R>[]>;
}

/** Frames in a run's whole ranking when it is small enough to keep (the engine keeps answers up to this size). */
const RANKING_ROWS = 5000;

/**
 * One page of a run's hotspots after a keyset position. The whole ranking (a run's frames are
 * usually a few thousand) is asked for with one fixed question, which the engine answers once per
 * commit, and paged here; every limit and cursor then reuses it. Larger rankings page in SQL.
 */
async function hotspotsPage(evidence: RunEvidence, metric: string, limit: number, after: [number, string] | null, tracks: ResolvedTracks) {
  const { query, extra } = onTracks(hotspotsQuery, tracks);
  // Shared, not copied: the ranking is only sliced here and its rows only read by the caller.
  const ranking = await evidence.reader.runShared(query, { generations: evidence.generations, metric, limit: RANKING_ROWS + 1, ...extra });
  if (ranking.length > RANKING_ROWS) {
    return evidence.reader.run(query, { generations: evidence.generations, metric, limit, after_self: after?.[0] ?? null, after_key: after?.[1] ?? null, ...extra });
  }
  // The query's order (self descending, then frame_key) and its keyset predicate, in memory.
  const from = after === null ? 0 : ranking.findIndex((r) => r.self < after[0] || (r.self === after[0] && r.frame_key > after[1]));
  return from < 0 ? [] : ranking.slice(from, from + limit);
}

export const analyzeHotspots = defineService({
  name: "evidence.hotspots",
  summary: "Rank a run's functions by self value of a metric, with inclusive totals and percentages.",
  kind: "query",
  input: z.object({ run_id: RunId, metric: MetricArg, tracks: TracksArg, limit: z.number().int().min(1).max(1000).default(20), cursor: CursorArg, commit_id: CommitArg, transforms: Transforms }).strict(),
  output: HotspotsResult,
  handler: async (input, { ws }) => {
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const commitId = evidence.reader.commit.commit_id;
    const metric = chooseMetric(evidence, input.metric);
    const tracks = await resolveTracks(evidence, metric?.name ?? null, input.tracks);
    const empty = { rows: [], metric: metric?.name ?? null, unit: metric?.unit ?? null, grand_total: 0, commit_id: commitId, next_cursor: null, tracks: tracks.coverage };
    if (!metric) return { ...empty, status: statusOf(evidence, input.run_id, false, "samples") };
    const transformed = input.transforms.length > 0;
    const filters = { run_id: input.run_id, metric: metric.name, tracks: tracks.filter, ...(transformed ? { transforms: input.transforms } : {}) };
    const binding = { query: "evidence.hotspots", filters, order: "self desc, frame_key", commit: commitId };
    const after = input.cursor
      ? (decodeCursor(ws.secret, input.cursor, binding, { operation: "evidence.hotspots", arguments: { ...filters, tracks: input.tracks, limit: input.limit, commit_id: commitId }, safe_to_repeat: true }) as [number, string])
      : null;
    const rows = transformed
      ? await runOnTracks(evidence, transformedHotspotsQuery(input.transforms), { generations: evidence.generations, metric: metric.name, limit: input.limit + 1, after_self: after?.[0] ?? null, after_key: after?.[1] ?? null }, tracks)
      : await hotspotsPage(evidence, metric.name, input.limit + 1, after, tracks);
    const page = rows.slice(0, input.limit);
    // Transforms that drop samples (focus, drop) shrink the total the shares are of; so does a track filter.
    const grand = transformed ? (rows[0]?.grand_total ?? 0) : tracks.filter ? tracks.coverage.value : (evidence.metrics.find((m) => m.name === metric.name)?.total ?? 0);
    const last = page[page.length - 1];
    return {
      rows: page.map(({ grand_total: _g, ...row }) => row),
      metric: metric.name,
      unit: metric.unit,
      grand_total: grand,
      commit_id: commitId,
      next_cursor: rows.length > input.limit ? encodeCursor(ws.secret, binding, [last.self, last.frame_key]) : null,
      tracks: tracks.coverage,
      status: statusOf(evidence, input.run_id, grand > 0, `samples of ${metric.name}`),
    };
  },
});

const NeighbourInput = z.object({ run_id: RunId, frame_key: FrameKey, metric: MetricArg, tracks: TracksArg, limit: z.number().int().min(1).max(200).default(20), commit_id: CommitArg, transforms: Transforms }).strict();
const NeighbourResult = z.object({ frame_key: z.string(), rows: z.array(NeighbourRow), metric: z.string().nullable(), unit: z.string().nullable(), commit_id: z.string(), tracks: TrackCoverage, status: EvidenceStatus });

function neighbourService(name: string, summary: string, query: typeof callersQuery, transformed: (transforms: readonly Transform[]) => typeof callersQuery) {
  return defineService({
    name,
    summary,
    kind: "query",
    input: NeighbourInput,
    output: NeighbourResult,
    handler: async (input, { ws }) => {
      const evidence = await runEvidence(ws, input.run_id, input.commit_id);
      const metric = chooseMetric(evidence, input.metric);
      const tracks = await resolveTracks(evidence, metric?.name ?? null, input.tracks);
      const params = { generations: evidence.generations, metric: metric?.name ?? "", frame_key: input.frame_key, limit: input.limit };
      const rows = metric ? await runOnTracks(evidence, input.transforms.length ? transformed(input.transforms) : query, params, tracks) : [];
      return { frame_key: input.frame_key, rows, metric: metric?.name ?? null, unit: metric?.unit ?? null, commit_id: evidence.reader.commit.commit_id, tracks: tracks.coverage, status: statusOf(evidence, input.run_id, rows.length > 0, `${name.split(".")[1]} of that frame`) };
    },
  });
}

export const frameCallers = neighbourService("evidence.callers", "Who calls a frame, weighted by the frame's inclusive value under each caller; each sample counts once under recursion, so the callers add up to the frame's total.", callersQuery, transformedCallersQuery);
export const frameCallees = neighbourService("evidence.callees", "What a frame calls, weighted by each callee's inclusive value; each sample counts once under recursion, so the callees add up to the frame's total minus its self value.", calleesQuery, transformedCalleesQuery);

export const stackExamples = defineService({
  name: "evidence.stack_examples",
  summary: "The heaviest complete stacks that pass through a frame.",
  kind: "query",
  input: NeighbourInput,
  output: z.object({ frame_key: z.string(), rows: z.array(StackExampleRow), metric: z.string().nullable(), commit_id: z.string(), tracks: TrackCoverage, status: EvidenceStatus }),
  handler: async (input, { ws }) => {
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const metric = chooseMetric(evidence, input.metric);
    const tracks = await resolveTracks(evidence, metric?.name ?? null, input.tracks);
    const query = input.transforms.length ? transformedStackExamplesQuery(input.transforms) : stackExamplesQuery;
    const rows = metric ? await runOnTracks(evidence, query, { generations: evidence.generations, metric: metric.name, frame_key: input.frame_key, limit: input.limit }, tracks) : [];
    return { frame_key: input.frame_key, rows, metric: metric?.name ?? null, commit_id: evidence.reader.commit.commit_id, tracks: tracks.coverage, status: statusOf(evidence, input.run_id, rows.length > 0, "stacks through that frame") };
  },
});

/**
 * A frame's callers and callees in one answer (the agent's view of a sandwich: one call, not two).
 * Each list is exactly what evidence.callers and evidence.callees give.
 */
export const frameNeighbours = defineService({
  name: "evidence.neighbours",
  summary: "A frame's callers and callees together, each weighted and counted once per sample under recursion.",
  kind: "query",
  input: NeighbourInput.extend({
    stacks: z.number().int().min(0).max(50).default(3).describe("How many of the heaviest complete stacks through the frame to include, root first (0: none)."),
  }),
  output: z.object({
    frame_key: z.string(),
    callers: z.array(NeighbourRow).describe("Who calls the frame; they add up to the frame's total."),
    callees: z.array(NeighbourRow).describe("What the frame calls; they add up to its total minus its self value."),
    stacks: z.array(StackExampleRow).describe("The heaviest complete stacks through the frame, as evidence.stack_examples gives them."),
    metric: z.string().nullable(),
    unit: z.string().nullable(),
    commit_id: z.string(),
    tracks: TrackCoverage,
    status: EvidenceStatus,
  }),
  handler: async ({ stacks: stackCount, ...input }, context) => {
    const callers = await frameCallers.handler(input, context);
    // The callers' answer named the commit it read: the callees and stacks read the same one.
    const pinned = { ...input, commit_id: callers.commit_id };
    const callees = await frameCallees.handler(pinned, context);
    const stacks = stackCount > 0 ? (await stackExamples.handler({ ...pinned, limit: stackCount }, context)).rows : [];
    // Available when either list has rows (a root frame has callees and no callers).
    const status = callers.rows.length > 0 || callees.rows.length === 0 ? callers.status : callees.status;
    return { frame_key: input.frame_key, callers: callers.rows, callees: callees.rows, stacks, metric: callers.metric, unit: callers.unit, commit_id: callers.commit_id, tracks: callers.tracks, status };
  },
});


const TimeRange = z.object({ first_ns: z.number(), last_ns: z.number() });

function timeRangeOf(evidence: RunEvidence, metric: string): z.infer<typeof TimeRange> | null {
  const m = evidence.metrics.find((r) => r.name === metric);
  return m && m.first_ns !== null && m.last_ns !== null ? { first_ns: m.first_ns, last_ns: m.last_ns } : null;
}

/** The remainders of kept rows, by the rows: the same kept tree answered again is the same nodes array (its packing for the page is kept too). */
const remainders = new WeakMap<readonly FlameNode[], ReturnType<typeof addPrunedRemainders>>();
function withRemainders(raw: readonly FlameNode[]): ReturnType<typeof addPrunedRemainders> {
  let answer = remainders.get(raw);
  if (!answer) remainders.set(raw, (answer = addPrunedRemainders(raw)));
  return answer;
}

export const flameTree = defineService({
  name: "evidence.flame_tree",
  summary: "The aggregated call tree of a run pruned to a node budget, with an explicit remainder node.",
  kind: "query",
  input: z
    .object({
      run_id: RunId,
      metric: MetricArg,
      tracks: TracksArg,
      start_ns: z.number().int().optional(),
      end_ns: z.number().int().optional(),
      budget: z.number().int().min(10).max(200_000).default(20_000),
      commit_id: CommitArg,
      transforms: Transforms,
      inverted: z.boolean().default(false).describe("The inverted call tree: leaf functions at the roots, their callers below (after the transforms)."),
    })
    .strict()
    .refine((i) => (i.start_ns === undefined && i.end_ns === undefined) || (i.transforms.length === 0 && !i.inverted), {
      message: "transforms and inverted apply to the whole run's tree, not to a time range",
      path: ["transforms"],
    }),
  output: z.object({
    nodes: z.array(FlameNode),
    pruned_total: z.number(),
    tracks: TrackCoverage,
    /** Every track with samples of the metric, heaviest first: what a track selector offers. */
    track_choices: z.array(TrackEntry),
    metric: z.string().nullable(),
    unit: z.string().nullable(),
    /** When the metric's samples carry timestamps: their span (time order is possible), else null. */
    time_range: TimeRange.nullable(),
    commit_id: z.string(),
    status: EvidenceStatus,
  }),
  handler: async (input, { ws }) => {
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const metric = chooseMetric(evidence, input.metric);
    const ranged = input.start_ns !== undefined || input.end_ns !== undefined;
    const tracks = await resolveTracks(evidence, metric?.name ?? null, input.tracks);
    const common = { generations: evidence.generations, budget: input.budget };
    const transformed = input.transforms.length > 0 || input.inverted;
    // The kept rows themselves, not a copy (20 k nodes copied took tens of ms a page): the tree is
    // only read (packed for the page, serialized for tRPC and the CLI); remainders are new rows.
    // A range with transforms is refused by the input's refine, so a range is untransformed.
    const raw = !metric
      ? []
      : ranged
        ? await runOnTracks(evidence, flameTreeRangeQuery, { ...common, metric: metric.name, start_ns: input.start_ns ?? null, end_ns: input.end_ns ?? null }, tracks, true)
        : await runOnTracks(evidence, wholeRunTreeQuery(input.transforms, input.inverted), { ...common, metric: metric.name }, tracks, true);
    const { nodes, pruned_total } = withRemainders(raw);
    return {
      nodes,
      pruned_total,
      tracks: tracks.coverage,
      track_choices: tracks.choices,
      metric: metric?.name ?? null,
      unit: metric?.unit ?? null,
      time_range: metric ? timeRangeOf(evidence, metric.name) : null,
      commit_id: evidence.reader.commit.commit_id,
      status:
        transformed && nodes.length === 0 && evidence.generations.length > 0
          ? { state: "empty" as const, reason: "No samples are left after the transforms (a focus or drop removed them all); remove the last transform.", fill_with: null }
          : statusOf(evidence, input.run_id, nodes.length > 0, "samples"),
    };
  },
});

/**
 * Starts, without waiting, what the run page asks first for a run just imported — the commit's
 * reader and the busiest track's flame tree — so that the page, opened next, joins the running
 * query or finds its answer kept (the engine shares both by commit and SQL text). Failures are
 * the page's to report: here they are dropped.
 */
export function prepareRunView(ctx: ServiceContext, runId: string, commitId: string): void {
  callService(flameTree, ctx, { run_id: runId, commit_id: commitId, tracks: "busiest" }).catch(() => undefined);
}

/** Cells narrower than the shown span / this are dropped by default (well under a pixel). */
const TIMELINE_RESOLUTION = 8192;

interface TimeOrderRequest {
  generations: string[];
  metric: string;
  start_ns: number | null;
  end_ns: number | null;
  track_id: number | null;
  /** Track keys whose samples to merge (instead of one track_id), or null. */
  tracks: string[] | null;
  min_width_ns: number;
  budget: number;
  /** Call-tree transforms: samples are merged along the transformed tree's paths. */
  transforms: readonly Transform[];
}

type CellFrameInfo = Omit<z.infer<typeof TimelineCell>, "cell_id" | "parent_id" | "frame_key" | "depth" | "start_ns" | "end_ns" | "total" | "self">;

/**
 * The call-path tree time order merges samples along: the stored stacks of the generations, or,
 * under transforms, the transformed tree (one tree for every generation) with each stored stack
 * sent to the node its path lands on — the same transform walk the flame tree is built by.
 */
async function callPathTree(reader: EvidenceReader, request: TimeOrderRequest): Promise<{ paths: CallPathTreeBuilder; info: Map<string, CellFrameInfo>; built: ReturnType<CallPathTreeBuilder["build"]> }> {
  const { generations } = request;
  const paths = new CallPathTreeBuilder();
  const info = new Map<string, CellFrameInfo>();
  if (request.transforms.length === 0) {
    // Read side by side (DuckDB's threads); stacks are only listed here, frames are added first.
    const [frames] = await Promise.all([
      reader.run(timelineFramesQuery, { generations }),
      reader.scan(timelineStacksQuery, { generations }, (columns, rows) => {
        const [g, stack, parent, frame, depth] = columns as [number[], number[], (number | null)[], number[], number[]];
        for (let i = 0; i < rows; i++) paths.addStack(g[i], stack[i], parent[i], frame[i], depth[i]);
      }),
    ]);
    for (const f of frames) {
      paths.addFrame(f.g, f.frame_id, f.frame_key);
      if (!info.has(f.frame_key)) info.set(f.frame_key, { name: f.name, file: f.file, line: f.line, module: f.module, kind: f.kind });
    }
    return { paths, info, built: paths.build() };
  }
  const params = { generations, metric: request.metric };
  const nodes = await reader.run(transformedPathTreeQuery(request.transforms), params);
  // The transformed tree as generation 0 of the builder: dense node and frame ids.
  const dense = new Map<string, number>();
  const frameIds = new Map<string, number>();
  for (const n of nodes) {
    let frame = frameIds.get(n.frame_key);
    if (frame === undefined) {
      frameIds.set(n.frame_key, (frame = frameIds.size));
      paths.addFrame(0, frame, n.frame_key);
      info.set(n.frame_key, { name: n.name, file: n.file, line: n.line, module: n.module, kind: n.kind });
    }
    dense.set(n.node_id, dense.size);
    paths.addStack(0, dense.size - 1, n.parent_id === null ? null : (dense.get(n.parent_id) ?? null), frame, n.depth);
  }
  const built = paths.build();
  const landing = new Map<number, Map<number, number>>();
  for (const m of await reader.run(transformedStackMapQuery(request.transforms), params)) {
    const at = dense.get(m.node_id);
    if (at === undefined) continue;
    let byStack = landing.get(m.g);
    if (!byStack) landing.set(m.g, (byStack = new Map()));
    byStack.set(m.stack_id, built.node(0, at));
  }
    // A stack the transforms dropped is a gap in the order, not a sample left out.
  return { paths, info, built: { tree: built.tree, node: (g, stack) => landing.get(g)?.get(stack) ?? GAP } };
}

/** Time order reads a metric's samples whole (materialized, one hand-over) up to this many: 40 MB. */
const WHOLE_READ_SAMPLES = 2_000_000;

/**
 * Time order in one pass: the generations' call-path tree, then each generation's samples straight
 * from its file (no sort: importers write them in time order) into the merge. Samples found out of
 * order, and those of several generations, are kept and put in time order here instead (a stable
 * sort: ties in the generations' and the files' order).
 */
async function timeOrderOf(reader: EvidenceReader, request: TimeOrderRequest, samples: number): Promise<{ order: TimeOrder; cells: z.infer<typeof TimelineCell>[] }> {
  const { generations } = request;
  // Few enough to hold (20 bytes a row): read at once, not chunk by chunk.
  const read = { whole: samples <= WHOLE_READ_SAMPLES };
  const [{ paths, info, built }, metricIds] = await Promise.all([callPathTree(reader, request), reader.run(timelineMetricIdsQuery, { generations, metric: request.metric })]);
  const { tree, node } = built;
  const options = { minWidth: request.min_width_ns, budget: request.budget };
  const sources = metricIds.map((m) => ({
    g: m.g,
    params: { generations: [m.generation_id], metric_id: m.metric_id, start_ns: request.start_ns, end_ns: request.end_ns, track_id: request.track_id, ...(request.tracks ? { tracks: request.tracks } : {}) },
  }));
  const samplesQuery = request.tracks ? scopeToTracks(timelineSamplesQuery) : timelineSamplesQuery;
  let merge = new TimeOrderMerge(tree, options);
  let inOrder = sources.length <= 1;
  if (inOrder && sources.length) {
    const { g, params } = sources[0];
    await reader.scan(samplesQuery, params, (columns, rows) => {
      const [stack, time, value] = columns as number[][];
      for (let i = 0; i < rows; i++) {
        const at = node(g, stack[i]);
        if (at !== -1 && !merge.push(at, time[i], value[i])) {
          inOrder = false;
          return false;
        }
      }
    }, read);
  }
  if (!inOrder) {
    const nodes: number[] = [];
    const times: number[] = [];
    const values: number[] = [];
    for (const { g, params } of sources) {
      await reader.scan(samplesQuery, params, (columns, rows) => {
        const [stack, time, value] = columns as number[][];
        for (let i = 0; i < rows; i++) {
          const at = node(g, stack[i]);
          if (at === -1) continue;
          nodes.push(at);
          times.push(time[i]);
          values.push(value[i]);
        }
      }, read);
    }
    const byTime = Int32Array.from(nodes, (_, i) => i).sort((a, b) => times[a] - times[b] || a - b);
    merge = new TimeOrderMerge(tree, options);
    for (const i of byTime) merge.push(nodes[i], times[i], values[i]);
  }
  // Each step below holds the event loop for tens of ms at 20,000 cells: a turn between them.
  await yieldToEventLoop();
  const order = merge.finish();
  await yieldToEventLoop();
  return { order, cells: timelineCells(order, paths.frameKeys, (key) => info.get(key)) };
}

export const flameTimeline = defineService({
  name: "evidence.flame_timeline",
  summary: "A time-order flame graph (flame chart): consecutive samples sharing a stack prefix merged into cells in one pass over the samples, pruned to a cell budget.",
  kind: "query",
  input: z
    .object({
      run_id: RunId,
      metric: MetricArg,
      start_ns: z.number().int().optional(),
      end_ns: z.number().int().optional(),
      track_id: z.number().int().optional().describe("The thread (track) whose samples to order; by default the one with the most samples of the metric. Time order is per thread: interleaving threads would cut every cell at the other threads' samples."),
      tracks: TrackSelection.optional().describe("Tracks (by track_key) whose samples to order together, as the flame graph's track selector chose them; instead of track_id."),
      budget: z.number().int().min(10).max(200_000).default(20_000),
      min_width_ns: z.number().min(0).optional().describe(`Drop cells shorter than this; by default the shown span / ${TIMELINE_RESOLUTION}.`),
      commit_id: CommitArg,
      transforms: Transforms.describe("Call-tree transforms (as evidence.flame_tree takes them): consecutive samples are merged along the transformed stacks; dropped samples leave gaps."),
    })
    .strict()
    .refine((i) => i.start_ns === undefined || i.end_ns === undefined || i.end_ns > i.start_ns, { message: "end_ns must be after start_ns", path: ["end_ns"] }),
  output: z.object({
    cells: z.array(TimelineCell),
    /** Cells left out (narrower than min_width_ns, each with everything under it, or over the budget) and the value they leave undrawn. */
    dropped_cells: z.number().int(),
    dropped_total: z.number(),
    min_width_ns: z.number(),
    /** How many samples were merged. */
    samples: z.number().int(),
    gap_samples: z.number().int().describe("Samples the transforms dropped in the window: gaps in the order (no cell covers their time), not time of the cell before them."),
    /** The track ordered, and every track with samples of the metric (to choose another), each with its samples of the metric. */
    track_id: z.number().int().nullable(),
    sampled_tracks: z.array(TrackRow),
    /** When `tracks` was given: the tracks ordered. */
    tracks: TrackCoverage.nullable(),
    metric: z.string().nullable(),
    unit: z.string().nullable(),
    commit_id: z.string(),
    status: EvidenceStatus,
  }),
  handler: async (input, { ws }) => {
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const metric = chooseMetric(evidence, input.metric);
    const range = metric ? timeRangeOf(evidence, metric.name) : null;
    const commitId = evidence.reader.commit.commit_id;
    const sampledTracks = metric ? await sampledTrackRows(evidence, metric.name) : [];
    const busiest = sampledTracks.reduce<(typeof sampledTracks)[number] | null>((best, t) => (best === null || t.samples > best.samples ? t : best), null);
    const chosen = input.tracks === undefined ? null : await resolveTracks(evidence, metric?.name ?? null, input.tracks);
    const trackId = chosen ? null : (input.track_id ?? (sampledTracks.length > 1 ? busiest!.track_id : null));
    const empty = { cells: [], dropped_cells: 0, dropped_total: 0, min_width_ns: 0, samples: 0, gap_samples: 0, track_id: trackId, sampled_tracks: sampledTracks, tracks: chosen?.coverage ?? null, metric: metric?.name ?? null, unit: metric?.unit ?? null, commit_id: commitId };
    if (!metric) return { ...empty, status: statusOf(evidence, input.run_id, false, "samples") };
    if (!range) {
      return { ...empty, status: { state: "empty" as const, reason: `The samples of ${metric.name} carry no timestamps (an aggregate profile), so there is no time order; use the left-heavy flame graph.`, fill_with: null } };
    }
    const start = input.start_ns ?? range.first_ns;
    const end = input.end_ns ?? range.last_ns;
    const minWidth = input.min_width_ns ?? Math.max(0, end - start) / TIMELINE_RESOLUTION;
    const request: TimeOrderRequest = {
      generations: evidence.generations,
      metric: metric.name,
      start_ns: input.start_ns ?? null,
      end_ns: input.end_ns ?? null,
      track_id: trackId,
      tracks: chosen?.filter ?? null,
      min_width_ns: minWidth,
      budget: input.budget,
      transforms: input.transforms,
    };
    // The merge's counts without its own cells (the answer's cells are built from them).
    // Unknown (0: generations written before sample_count was stored count none) streams, as a large one does.
    const samples = evidence.metrics.find((m) => m.name === metric.name)?.samples || Infinity;
    const merge = () => timeOrderOf(evidence.reader, request, samples).then(({ order: { cells: _merged, ...counts }, cells }) => ({ order: counts, cells }));
    // The whole run's time order is kept per commit as the engine keeps query answers (the request
    // names all it depends on): a page reopened in time order, or another tab's, skips the
    // million-sample merge. A zoomed window is not (each zoom would push a flame tree out of the
    // kept answers). Shared cells: they are only read (packed for the page, serialized for tRPC).
    const whole = request.start_ns === null && request.end_ns === null;
    const { order, cells } = whole ? await evidence.reader.remember(`time_order\u0000${JSON.stringify(request)}`, (answer) => answer.cells.length, merge) : await merge();
    return {
      ...empty,
      cells,
      dropped_cells: order.droppedCells,
      dropped_total: timelineRemainder(cells, order.windowTotal),
      min_width_ns: minWidth,
      samples: order.samples,
      gap_samples: order.gaps,
      status:
        cells.length === 0 && order.droppedCells > 0
          ? { state: "partial" as const, reason: `Every merged cell is shorter than ${Math.round(minWidth)} ns (the samples change stack at almost every tick); ask for a shorter window (start_ns, end_ns) or a smaller min_width_ns.`, fill_with: null }
          : statusOf(evidence, input.run_id, cells.length > 0, "time-stamped samples in that range"),
    };
  },
});

export const traceWindow = defineService({
  name: "evidence.trace_window",
  summary: "Spans of a run that overlap a time window, by track, with keyset pages.",
  kind: "query",
  input: z
    .object({
      run_id: RunId,
      start_ns: z.number().int(),
      end_ns: z.number().int(),
      tracks: z.array(z.number().int()).max(1000).optional().describe("Track ids (as in the answer's tracks) whose spans to read."),
      track_keys: TrackKeyList.min(1).optional().describe("Tracks by track_key (stable across commits, as summarize_run lists them) whose spans to read; the answer's tracks are then only those."),
      limit: z.number().int().min(1).max(5000).default(500), cursor: CursorArg, commit_id: CommitArg })
    .strict()
    .refine((i) => i.end_ns > i.start_ns, { message: "end_ns must be after start_ns", path: ["end_ns"] }),
  output: z.object({ spans: z.array(WindowSpan), tracks: z.array(TrackRow), commit_id: z.string(), next_cursor: z.string().nullable(), status: EvidenceStatus }),
  handler: async (input, { ws }) => {
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const commitId = evidence.reader.commit.commit_id;
    if (!evidence.generations.length) return { spans: [], tracks: [], commit_id: commitId, next_cursor: null, status: statusOf(evidence, input.run_id, false, "spans") };
    const runTracks = await evidence.reader.run(tracksQuery, { generations: evidence.generations });
    // Keys name tracks across generations; spans are read by the ids they have in each.
    const keyed = input.track_keys ? runTracks.filter((t) => input.track_keys!.includes(t.track_key)) : null;
    const trackIds = keyed ? [...new Set([...keyed.map((t) => t.track_id), ...(input.tracks ?? [])])] : (input.tracks ?? null);
    const filters = { run_id: input.run_id, start_ns: input.start_ns, end_ns: input.end_ns, tracks: trackIds };
    const binding = { query: "evidence.trace_window", filters, order: "track, start, span, generation", commit: commitId };
    const after = input.cursor
      ? (decodeCursor(ws.secret, input.cursor, binding, { operation: "evidence.trace_window", arguments: { ...filters, limit: input.limit }, safe_to_repeat: true }) as [number, number, number, string])
      : null;
    // The run's spans in memory when it is small enough and loaded (the first call starts the load); else SQL.
    const index = loadedSpanIndex(ws.layout.dir, evidence.reader, evidence.generations);
    // Answered once per commit (the reader keeps small results); then every window skips the row groups before it.
    const [extent] = index ? [] : await evidence.reader.run(spanExtentQuery, { generations: evidence.generations });
    const rows = index
      ? index.window({ start_ns: input.start_ns, end_ns: input.end_ns, tracks: trackIds, after, limit: input.limit + 1 })
      : await evidence.reader.run(traceWindowQuery, {
          generations: evidence.generations,
          start_ns: input.start_ns,
          end_ns: input.end_ns,
          long_dur_ns: extent?.long_dur_ns ?? Number.MAX_SAFE_INTEGER,
          tracks: trackIds,
          after_track: after?.[0] ?? null,
          after_start: after?.[1] ?? null,
          after_span: after?.[2] ?? null,
          after_generation: after?.[3] ?? null,
          limit: input.limit + 1,
        });
    const spans = rows.slice(0, input.limit);
    const last = spans[spans.length - 1];
    return {
      spans,
      tracks: keyed ?? runTracks,
      commit_id: commitId,
      next_cursor: rows.length > input.limit ? encodeCursor(ws.secret, binding, [last.track_id, last.start_ns, last.span_id, last.generation_id]) : null,
      status: statusOf(evidence, input.run_id, spans.length > 0, "spans in that window"),
    };
  },
});

export const compareRuns = defineService({
  name: "evidence.compare",
  summary: "Compare two runs per frame: base and candidate values, absolute and relative change.",
  kind: "query",
  input: z
    .object({
      base_run_id: RunId,
      candidate_run_id: RunId,
      metric: MetricArg,
      collection: z.enum(["changed", "added", "removed", "all"]).default("changed"),
      normalize: z.boolean().default(false).describe("Compare shares of each run's total instead of absolute values."),
      limit: z.number().int().min(1).max(1000).default(50),
      base_tracks: TracksArg.describe('The base run\'s threads/processes/profiles: "all" (default, merged), "busiest", or its track_key values.'),
      candidate_tracks: TracksArg.describe('The candidate run\'s threads/processes/profiles: "all" (default, merged), "busiest", or its track_key values.'),
      commit_id: CommitArg,
    })
    .strict(),
  output: z.object({
    rows: z.array(CompareRow),
    metric: z.string().nullable(),
    unit: z.string().nullable(),
    base_total: z.number(),
    candidate_total: z.number(),
    base_tracks: TrackCoverage.nullable().describe("Which tracks of the base run the comparison reads (null: the run has no samples of the metric)."),
    candidate_tracks: TrackCoverage.nullable().describe("Which tracks of the candidate run the comparison reads."),
    commit_id: z.string(),
    status: EvidenceStatus,
  }),
  handler: async (input, { ws }) => {
    const base = await runEvidence(ws, input.base_run_id, input.commit_id);
    const candidate = await runEvidence(ws, input.candidate_run_id, input.commit_id);
    const metric = chooseMetric(candidate, input.metric) ?? chooseMetric(base, input.metric);
    const commitId = base.reader.commit.commit_id;
    const totalOf = (e: RunEvidence) => e.metrics.find((m) => m.name === metric?.name)?.total ?? 0;
    if (!metric || !base.generations.length || !candidate.generations.length) {
      const missing = !base.generations.length ? base : candidate;
      return { rows: [], metric: metric?.name ?? null, unit: metric?.unit ?? null, base_total: totalOf(base), candidate_total: totalOf(candidate), base_tracks: null, candidate_tracks: null, commit_id: commitId, status: statusOf(missing, !base.generations.length ? input.base_run_id : input.candidate_run_id, false, "samples") };
    }
    // Each side on its own tracks (track keys differ between captures: another pid is another track).
    const baseTracks = await resolveTracks(base, metric.name, input.base_tracks);
    const candidateTracks = await resolveTracks(candidate, metric.name, input.candidate_tracks);
    const rows = await base.reader.run(compareOnTracksQuery(baseTracks.filter !== null, candidateTracks.filter !== null), {
      ...(baseTracks.filter ? { base_tracks: baseTracks.filter } : {}),
      ...(candidateTracks.filter ? { candidate_tracks: candidateTracks.filter } : {}),
      base_generations: base.generations,
      candidate_generations: candidate.generations,
      metric: metric.name,
      normalize: input.normalize,
      collection: input.collection,
      limit: input.limit,
    });
    const sideTotal = (e: RunEvidence, t: ResolvedTracks) => (t.filter ? t.coverage.value : totalOf(e));
    return {
      rows,
      metric: metric.name,
      unit: metric.unit,
      base_total: sideTotal(base, baseTracks),
      candidate_total: sideTotal(candidate, candidateTracks),
      base_tracks: baseTracks.coverage,
      candidate_tracks: candidateTracks.coverage,
      commit_id: commitId,
      status: statusOf(candidate, input.candidate_run_id, rows.length > 0, `${input.collection} frames`),
    };
  },
});

export const summarizeRun = defineService({
  name: "evidence.summary",
  summary: "A run and its evidence at a glance: the run record (kind, source, states), its artifacts, totals per metric, time span, tracks, top frames, limitations.",
  kind: "query",
  input: z.object({ run_id: RunId, tracks: TracksArg, commit_id: CommitArg }).strict(),
  output: z.object({
    run_id: z.string(),
    run: Run.describe("The run record: kind, source, status of execution, capture and extraction, details."),
    artifact_ids: z.array(z.string()).describe("The run's stored artifacts (content addresses; metadata at emberscope://artifacts/{id}, never their bytes)."),
    commit_id: z.string(),
    generations: z.array(z.string()),
    metrics: z.array(MetricTotalRow),
    spans: SpanTotalsRow.nullable(),
    tracks: z.array(TrackRow),
    sampled_tracks: z.array(TrackEntry).describe("The tracks (threads, processes, profiles) with samples of the primary metric, heaviest first (at most 50): pass their track_key as `tracks` to any evidence tool."),
    track_coverage: TrackCoverage.describe("Which tracks top_frames and metrics cover."),
    top_frames: z.array(HotspotRow.omit({ grand_total: true })),
    primary_metric: z.string().nullable(),
    limitations: z.array(Limitation),
    metadata: z.record(z.string(), z.string()).describe("What the importer recorded about the file: its time origin, a trace's runtime inputs (trace_inputs), …"),
    status: EvidenceStatus,
  }),
  handler: async (input, { ws }) => {
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const metric = chooseMetric(evidence, undefined);
    const run = getRun(ws.db, input.run_id);
    const gens = evidence.generations;
    const tracks = await resolveTracks(evidence, metric?.name ?? null, input.tracks);
    const hot = onTracks(hotspotsQuery, tracks);
    const top = metric ? await evidence.reader.run(hot.query, { generations: gens, metric: metric.name, limit: 10, ...hot.extra }) : [];
    const totals = onTracks(metricTotalsQuery, tracks);
    const metrics = tracks.filter ? await evidence.reader.run(totals.query, { generations: gens, ...totals.extra }) : evidence.metrics;
    const spans = gens.length ? (await evidence.reader.run(spanTotalsQuery, { generations: gens }))[0] : null;
    // A trace's evidence is spans (and edges, measurements) without any metric: that is evidence too.
    const hasSpans = spans !== null && spans.spans + spans.edges + spans.measurements > 0;
    const artifacts = ws.db.prepare("SELECT DISTINCT artifact_id FROM registrations WHERE run_id = ? ORDER BY artifact_id LIMIT 100").all(input.run_id) as { artifact_id: string }[];
    return {
      run_id: input.run_id,
      run,
      artifact_ids: artifacts.map((a) => a.artifact_id),
      commit_id: evidence.reader.commit.commit_id,
      generations: gens,
      metrics,
      spans,
      tracks: gens.length ? await evidence.reader.run(tracksQuery, { generations: gens }) : [],
      sampled_tracks: metric ? (await sampledTracks(evidence, metric.name)).slice(0, 50) : [],
      track_coverage: tracks.coverage,
      top_frames: top.map(({ grand_total: _g, ...row }) => row),
      primary_metric: metric?.name ?? null,
      limitations: runLimitations(run, evidence),
      metadata: evidence.metadata,
      status: statusOf(evidence, input.run_id, evidence.metrics.length > 0 || top.length > 0 || hasSpans, "evidence rows"),
    };
  },
});

/** The run's own limitations, then its evidence's that the run does not already name. */
function runLimitations(run: z.infer<typeof Run>, evidence: RunEvidence): Limitation[] {
  return [...run.limitations, ...evidence.limitations.filter((l) => !run.limitations.some((r) => r.code === l.code))];
}

/**
 * What the run page needs before it can draw its workbench — the pinned commit, the run's metric
 * totals (every track), its primary metric, span totals, limitations and metadata — without the
 * summary's top frames and track lists: the page's body (and so its scripts) then does not wait
 * for queries it never shows, and they do not slow the flame tree asked beside them. In-process
 * only (the run page); agents and the CLI read evidence.summary.
 */
export const runViewFacts = defineService({
  name: "evidence.run_view",
  summary: "The run page's first facts: the pinned commit, metric totals, primary metric, span totals, limitations and metadata.",
  kind: "query",
  input: z.object({ run_id: RunId, commit_id: CommitArg }).strict(),
  output: z.object({
    commit_id: z.string(),
    metrics: z.array(MetricTotalRow),
    spans: SpanTotalsRow.nullable(),
    primary_metric: z.string().nullable(),
    limitations: z.array(Limitation),
    metadata: z.record(z.string(), z.string()),
  }),
  handler: async (input, { ws }) => {
    const evidence = await runEvidence(ws, input.run_id, input.commit_id);
    const run = getRun(ws.db, input.run_id);
    const gens = evidence.generations;
    return {
      commit_id: evidence.reader.commit.commit_id,
      metrics: evidence.metrics,
      spans: gens.length ? (await evidence.reader.run(spanTotalsQuery, { generations: gens }))[0] : null,
      primary_metric: chooseMetric(evidence, undefined)?.name ?? null,
      limitations: runLimitations(run, evidence),
      metadata: evidence.metadata,
    };
  },
});
