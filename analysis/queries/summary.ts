import { z } from "zod";
import { defineQuery } from "./define";
import { GenerationList } from "./columns";

export const MetricTotalRow = z.object({
  name: z.string(),
  unit: z.string(),
  kind: z.string(),
  total: z.number(),
  samples: z.number().int(),
  first_ns: z.number().nullable(),
  last_ns: z.number().nullable(),
});

/** Per metric: summed value, sample rows and the time span of time-stamped samples (derived at extraction). */
export const metricTotalsQuery = defineQuery({
  name: "metric_totals",
  description: "Total value, sample count and time span per metric.",
  params: z.object({ generations: GenerationList }),
  row: MetricTotalRow,
  sql: `SELECT m.name, any_value(m.unit) AS unit, any_value(m.kind) AS kind,
       coalesce(sum(m.total), 0)::DOUBLE AS total, coalesce(sum(m.sample_count), 0)::INTEGER AS samples,
       min(m.first_ns)::DOUBLE AS first_ns, max(m.last_ns)::DOUBLE AS last_ns
FROM metrics m
WHERE list_contains($generations, m.generation_id)
GROUP BY m.name
ORDER BY samples DESC, m.name`,
});

export const SpanTotalsRow = z.object({
  spans: z.number().int(),
  edges: z.number().int(),
  measurements: z.number().int(),
  first_ns: z.number().nullable(),
  last_ns: z.number().nullable(),
});

export const spanTotalsQuery = defineQuery({
  name: "span_totals",
  description: "Span, edge and measurement counts and the time span covered by spans.",
  params: z.object({ generations: GenerationList }),
  row: SpanTotalsRow,
  sql: `SELECT (SELECT count(*) FROM spans WHERE list_contains($generations, generation_id))::INTEGER AS spans,
       (SELECT count(*) FROM edges WHERE list_contains($generations, generation_id))::INTEGER AS edges,
       (SELECT count(*) FROM measurements WHERE list_contains($generations, generation_id))::INTEGER AS measurements,
       (SELECT min(start_ns) FROM spans WHERE list_contains($generations, generation_id))::DOUBLE AS first_ns,
       (SELECT max(start_ns + dur_ns) FROM spans WHERE list_contains($generations, generation_id))::DOUBLE AS last_ns`,
});

export const MeasurementTotalRow = z.object({
  name: z.string(),
  // A trace's counters carry no unit.
  unit: z.string().nullable(),
  mean: z.number(),
  count: z.number().int(),
});

/** Per measurement name: the mean of the measured (not warm-up) values and how many there are. */
export const measurementTotalsQuery = defineQuery({
  name: "measurement_totals",
  description: "Mean and count of the measured (not warm-up) values per measurement name.",
  params: z.object({ generations: GenerationList }),
  row: MeasurementTotalRow,
  sql: `SELECT name, any_value(unit) AS unit, avg(value)::DOUBLE AS mean, count(*)::INTEGER AS count
FROM measurements
WHERE list_contains($generations, generation_id) AND NOT coalesce(is_warmup, FALSE)
GROUP BY name
ORDER BY name`,
});
