import { z } from "zod";
import { EmberscopeError } from "../domain/errors";
import { CursorArg, Limit, Run, RunKind, RunStatus, pageOf } from "../domain/models";
import { Title } from "../domain/notebook";
import { countRunRows, getRun, listRunRows, patchRun, RUN_ORDERS, runFacets, runOrderKey, updateRun, type RunFilters, type RunPosition } from "../store/runs";
import { Revision } from "./investigations";
import { twoWayKeysetPage } from "./pagination";
import { defineService } from "./service";

const RunOrder = z.enum(Object.keys(RUN_ORDERS) as [keyof typeof RUN_ORDERS, ...(keyof typeof RUN_ORDERS)[]]);

/** A day (UTC) or an exact time; a day as the end of a range includes the whole day. */
const TimeBound = z.union([z.iso.date(), z.iso.datetime({ offset: true })], { error: "a UTC day (YYYY-MM-DD) or an ISO time (2026-12-01T10:00:00Z)" });

const DAY_MS = 86_400_000;

export const RunListInput = z
  .object({
    limit: Limit,
    cursor: CursorArg,
    text: z.string().trim().max(200).optional().describe("Case-insensitive substring of the title, run id, source, file name or workload."),
    kind: RunKind.optional(),
    status: RunStatus.optional(),
    source: z.string().min(1).max(128).optional().describe("An import's format or a capture's adapter, exactly (runs.facets lists them)."),
    workload: z.string().min(1).max(128).optional().describe("A capture's workload, exactly."),
    created_from: TimeBound.optional().describe("Runs created at or after this day (UTC) or time."),
    created_to: TimeBound.optional().describe("Runs created on or before this day (UTC) or at or before this time."),
    order: RunOrder.default("newest").describe("newest or oldest first (by creation), or by title (A to Z)."),
  })
  .strict();

/** The store's filters for the given arguments: times made exact, a day as `created_to` running to its end. */
function filtersOf(input: z.output<typeof RunListInput>): RunFilters {
  const from = input.created_from === undefined ? undefined : new Date(input.created_from.length === 10 ? `${input.created_from}T00:00:00Z` : input.created_from).getTime();
  const to = input.created_to === undefined ? undefined : new Date(input.created_to.length === 10 ? `${input.created_to}T00:00:00Z` : input.created_to).getTime() + (input.created_to.length === 10 ? DAY_MS : 1);
  if (from !== undefined && to !== undefined && to <= from) {
    throw new EmberscopeError("INVALID_ARGUMENTS", "Invalid argument created_to: the range ends before it starts.", {
      details: { argument: "created_to", created_from: input.created_from, created_to: input.created_to },
    });
  }
  return {
    text: input.text || undefined,
    kind: input.kind,
    status: input.status,
    source: input.source,
    workload: input.workload,
    created_from: from === undefined ? undefined : new Date(from).toISOString(),
    created_before: to === undefined ? undefined : new Date(to).toISOString(),
  };
}

export const listRuns = defineService({
  name: "runs.list",
  summary: "List runs (imports and captures), newest first by default; filter by text, kind, status, source, workload and creation time; pages both ways.",
  kind: "query",
  input: RunListInput,
  output: pageOf(Run).extend({
    previous_cursor: z.string().nullable().describe("The page before this one; null on the first page."),
    matching: z.number().int().describe("How many runs the filters match, in every page together."),
  }),
  handler: (input, { ws }) => {
    const { limit, cursor, order, ...given } = input;
    const filters = filtersOf(input);
    // The arguments as given bind the cursor (a day stays a day), an empty text as none.
    const bound = { ...given, text: filters.text };
    const page = twoWayKeysetPage({
      ws,
      binding: { query: "runs.list", filters: bound, order, commit: null },
      cursor,
      limit,
      restart: { operation: "runs.list", arguments: { ...bound, order, limit } },
      fetch: (position: RunPosition | null, rows) => listRunRows(ws.db, filters, order, position, rows),
      keyOf: (run): [string, string] => runOrderKey(run, order),
    });
    return { ...page, matching: countRunRows(ws.db, filters) };
  },
});

/** Most values of a facet the runs page offers. */
const MAX_FACET_VALUES = 200;

export const listRunFacets = defineService({
  name: "runs.facets",
  summary: "The sources (formats and adapters) and workloads runs have, with how many runs each: the values runs.list filters by.",
  kind: "query",
  input: z.object({}).strict(),
  output: z.object({
    sources: z.array(z.object({ source: z.string(), kind: RunKind, runs: z.number().int() })),
    workloads: z.array(z.object({ workload: z.string(), runs: z.number().int() })),
    total: z.number().int(),
    truncated: z.boolean().describe(`More than ${MAX_FACET_VALUES} sources or workloads exist; the ones with most runs are listed.`),
  }),
  handler: (_input, { ws }) => {
    const facets = runFacets(ws.db, MAX_FACET_VALUES + 1);
    return {
      sources: facets.sources.slice(0, MAX_FACET_VALUES),
      workloads: facets.workloads.slice(0, MAX_FACET_VALUES),
      total: facets.total,
      truncated: facets.sources.length > MAX_FACET_VALUES || facets.workloads.length > MAX_FACET_VALUES,
    };
  },
});

export const showRun = defineService({
  name: "runs.get",
  summary: "Show one run: its states, limitations and revision.",
  kind: "query",
  input: z.object({ run_id: z.string().min(1).max(128) }).strict(),
  output: Run,
  handler: (input, { ws }) => getRun(ws.db, input.run_id),
});

export const renameRun = defineService({
  name: "runs.update",
  summary: "Give a run a new title, by compare-and-set on the revision you read (without one, on the current revision).",
  kind: "mutation",
  input: z
    .object({
      run_id: z.string().min(1).max(128),
      title: Title,
      expected_revision: Revision.optional(),
    })
    .strict(),
  output: Run,
  handler: (input, { ws }) =>
    input.expected_revision === undefined ? patchRun(ws.db, input.run_id, { title: input.title }) : updateRun(ws.db, input.run_id, input.expected_revision, { title: input.title }),
});
