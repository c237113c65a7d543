import { EVIDENCE_QUERIES, hotspotsQuery, metricTotalsQuery, renderSql, spanIndexQuery, spanTotalsQuery, type EvidenceQuery } from "../../analysis/queries";
import { TABLE_NAMES } from "../../analysis/evidence/schema";

/** What the presets are filled from: the pinned commit's (or run's) generations and a few facts about them. */
export interface PresetContext {
  generations: string[];
  metric: string | null;
  frameKey: string | null;
  firstNs: number | null;
  lastNs: number | null;
}

export interface Preset {
  name: string;
  description: string;
  query: EvidenceQuery<any, any>;
  params: Record<string, unknown> | null;
  /** The SQL with parameters filled, or why it could not be filled. */
  sql: string | null;
  problem: string | null;
}

/** Same preference as the server's evidence services: time first, then samples. */
export const METRIC_PREFERENCE = ["cpu_ns", "wall_ns", "samples", "alloc_bytes", "instructions", "Ir"];

/** Every named query but span_index, which reads all of a run's spans (it loads the server's index). */
export const PRESET_QUERIES: readonly EvidenceQuery<any, any>[] = EVIDENCE_QUERIES.filter((q) => q !== spanIndexQuery);

function guesses(ctx: PresetContext): Record<string, unknown> {
  return {
    generations: ctx.generations,
    // Queries of one generation (the critical path's): the newest.
    generation: ctx.generations[ctx.generations.length - 1],
    base_generations: ctx.generations,
    candidate_generations: ctx.generations,
    metric: ctx.metric,
    frame_key: ctx.frameKey,
    limit: 20,
    budget: 500,
    start_ns: Math.floor(ctx.firstNs ?? 0),
    end_ns: Math.ceil((ctx.lastNs ?? 0) + 1),
    normalize: false,
    collection: "changed",
    track_id: null,
    min_width_ns: 0,
  };
}

/** Each named server query as a preset, with parameters filled from the context and validated by its own schema. */
export function buildPresets(ctx: PresetContext): Preset[] {
  const guessed = guesses(ctx);
  return PRESET_QUERIES.map((query) => {
    const shape = (query.params as unknown as { shape: Record<string, { safeParse(v: unknown): { success: boolean } }> }).shape;
    // Only required parameters are filled; optional ones (filters, keyset positions) keep their defaults.
    const required = Object.keys(shape).filter((k) => !shape[k].safeParse(undefined).success);
    // A null guess stands where the parameter takes null (track_id: every track), else it is missing.
    const raw = Object.fromEntries(required.filter((k) => guessed[k] !== undefined && (guessed[k] !== null || shape[k].safeParse(null).success)).map((k) => [k, guessed[k]]));
    const parsed = query.params.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { name: query.name, description: query.description, query, params: null, sql: null, problem: `needs ${issue.path.join(".") || "parameters"} (${issue.message})` };
    }
    const params = parsed.data as Record<string, unknown>;
    return { name: query.name, description: query.description, query, params, sql: renderSql(query.sql, params), problem: null };
  });
}

/** Fills the context with the named queries themselves (metric totals, span totals, top hotspot). */
export async function presetContext(generations: string[], run: (sql: string) => Promise<Record<string, unknown>[]>): Promise<PresetContext> {
  const ctx: PresetContext = { generations, metric: null, frameKey: null, firstNs: null, lastNs: null };
  if (!generations.length) return ctx;
  const metrics = (await run(renderSql(metricTotalsQuery.sql, { generations }))) as { name: string; samples: number }[];
  const present = metrics.filter((m) => Number(m.samples) > 0);
  ctx.metric = (METRIC_PREFERENCE.map((n) => present.find((m) => m.name === n)).find(Boolean) ?? present[0])?.name ?? null;
  const spans = (await run(renderSql(spanTotalsQuery.sql, { generations })))[0] as { first_ns: number | null; last_ns: number | null } | undefined;
  ctx.firstNs = spans?.first_ns ?? null;
  ctx.lastNs = spans?.last_ns ?? null;
  if (ctx.metric) {
    const top = await run(renderSql(hotspotsQuery.sql, hotspotsQuery.params.parse({ generations, metric: ctx.metric, limit: 1 })));
    ctx.frameKey = (top[0]?.frame_key as string | undefined) ?? null;
  }
  return ctx;
}

export const STARTER_SQL = `-- Views: ${TABLE_NAMES.join(", ")}
SELECT f.name, count(*) AS samples
FROM samples s
JOIN stacks st ON st.generation_id = s.generation_id AND st.stack_id = s.stack_id
JOIN frames f ON f.generation_id = st.generation_id AND f.frame_id = st.frame_id
GROUP BY f.name
ORDER BY samples DESC
LIMIT 20`;
