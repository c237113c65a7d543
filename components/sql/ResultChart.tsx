"use client";

import { scaleBand, scaleLinear } from "d3";
import { useMemo, useState } from "react";
import { formatCell } from "./ResultTable";
import { axisTitle, measureUnit, type MeasureUnit } from "./chart-units";
import type { QueryResult } from "./duckdb-session";

const WIDTH = 720;
const MAX_BARS = 30;

/** A simple chart of a result: bars of one numeric column by a label column, or a line over rows. */
/** `metric`: the metric the query reads, when known (a preset's), for the unit of its value columns. */
export function ResultChart({ result, metric }: { result: QueryResult; metric?: string | null }) {
  const numeric = useMemo(() => result.columns.filter((c) => result.rows.some((r) => typeof r[c.name] === "number")).map((c) => c.name), [result]);
  const labels = useMemo(() => result.columns.map((c) => c.name).filter((n) => !numeric.includes(n)), [result, numeric]);
  const [kind, setKind] = useState<"bar" | "line">("bar");
  const [measure, setMeasure] = useState<string | null>(null);
  const y = measure && numeric.includes(measure) ? measure : (numeric.find((n) => n !== numeric[0] || numeric.length === 1) ?? null);
  if (!y || result.rows.length === 0) return null;
  const label = labels.includes("name") ? "name" : (labels[0] ?? null);
  const rows = result.rows.filter((r) => typeof r[y] === "number");
  const unit = measureUnit(y, result.rows, metric);

  return (
    <figure className="sql-chart" data-testid="sql-chart">
      <figcaption>
        <label>
          Chart{" "}
          <select value={kind} onChange={(e) => setKind(e.target.value as "bar" | "line")} aria-label="Chart kind">
            <option value="bar">bars</option>
            <option value="line">line</option>
          </select>
        </label>{" "}
        <label>
          of{" "}
          <select value={y} onChange={(e) => setMeasure(e.target.value)} aria-label="Measure">
            {numeric.map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
        {label ? <span className="muted"> by {label}</span> : <span className="muted"> by row</span>}
      </figcaption>
      {kind === "bar" ? <Bars rows={rows.slice(0, MAX_BARS)} y={y} label={label} unit={unit} /> : <Line rows={rows} y={y} unit={unit} />}
    </figure>
  );
}

/** Room under the plot for the value axis: its ticks and its title with the unit. */
const AXIS_ROOM = 34;

function Bars({ rows, y, label, unit }: { rows: Record<string, unknown>[]; y: string; label: string | null; unit: MeasureUnit }) {
  const barHeight = 18;
  const left = 220;
  const plotHeight = rows.length * barHeight + 4;
  const height = plotHeight + AXIS_ROOM;
  const max = Math.max(0, ...rows.map((r) => r[y] as number));
  const min = Math.min(0, ...rows.map((r) => r[y] as number));
  // Room at the right for the longest value label (about 7 px a character at the chart's font size).
  const valueRoom = Math.min(200, 12 + Math.max(0, ...rows.map((r) => unit.format(r[y] as number).length)) * 7);
  const x = scaleLinear().domain([min, max || 1]).range([left, WIDTH - valueRoom]);
  const band = scaleBand<number>().domain(rows.map((_, i) => i)).range([2, plotHeight - 2]).padding(0.15);
  return (
    <svg width={WIDTH} height={height} viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={`Bar chart of ${axisTitle(y, unit)}`}>
      {rows.map((r, i) => {
        const v = r[y] as number;
        const name = label ? formatCell(r[label]) : `#${i + 1}`;
        return (
          <g key={i}>
            <text x={left - 6} y={(band(i) ?? 0) + band.bandwidth() / 2} dy="0.35em" textAnchor="end" className="chart-label">
              {name.length > 34 ? `${name.slice(0, 33)}…` : name}
            </text>
            <rect x={Math.min(x(0), x(v))} y={band(i)} width={Math.abs(x(v) - x(0))} height={band.bandwidth()} className="chart-bar" />
            <text x={Math.max(x(0), x(v)) + 4} y={(band(i) ?? 0) + band.bandwidth() / 2} dy="0.35em" className="chart-value">
              {unit.format(v)}
            </text>
          </g>
        );
      })}
      <g className="chart-axis" data-testid="sql-chart-x-axis">
        <line x1={x.range()[0]} x2={x.range()[1]} y1={plotHeight} y2={plotHeight} className="chart-grid" />
        {x.ticks(4).map((t) => (
          <text key={t} x={x(t)} y={plotHeight + 12} textAnchor="middle" className="chart-label">
            {unit.format(t)}
          </text>
        ))}
        <text x={(x.range()[0] + x.range()[1]) / 2} y={plotHeight + 28} textAnchor="middle" className="chart-axis-title">
          {axisTitle(y, unit)}
        </text>
      </g>
    </svg>
  );
}

function Line({ rows, y, unit }: { rows: Record<string, unknown>[]; y: string; unit: MeasureUnit }) {
  const height = 200;
  const left = 96;
  const values = rows.map((r) => r[y] as number);
  const x = scaleLinear().domain([0, Math.max(1, values.length - 1)]).range([left, WIDTH - 10]);
  const yScale = scaleLinear().domain([Math.min(0, ...values), Math.max(...values, 1)]).nice().range([height - AXIS_ROOM, 18]);
  const path = values.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${yScale(v).toFixed(1)}`).join("");
  return (
    <svg width={WIDTH} height={height} viewBox={`0 0 ${WIDTH} ${height}`} role="img" aria-label={`Line chart of ${axisTitle(y, unit)} by row`}>
      <text x={4} y={10} className="chart-axis-title" data-testid="sql-chart-y-axis">
        {axisTitle(y, unit)}
      </text>
      {yScale.ticks(4).map((t) => (
        <g key={t}>
          <line x1={left} x2={WIDTH - 10} y1={yScale(t)} y2={yScale(t)} className="chart-grid" />
          <text x={left - 6} y={yScale(t)} dy="0.35em" textAnchor="end" className="chart-label">
            {unit.format(t)}
          </text>
        </g>
      ))}
      {x.ticks(Math.min(6, values.length)).filter(Number.isInteger).map((t) => (
        <text key={t} x={x(t)} y={height - AXIS_ROOM + 14} textAnchor="middle" className="chart-label">
          {t + 1}
        </text>
      ))}
      <text x={(left + WIDTH - 10) / 2} y={height - 4} textAnchor="middle" className="chart-axis-title">
        row (in the result&apos;s order)
      </text>
      <path d={path} className="chart-line" />
    </svg>
  );
}
