"use client";

import { extent, scaleLinear, scalePoint } from "d3";
import { useEffect, useState } from "react";
import type { z } from "zod";
import { formatValue } from "../../../analysis/flame/format";
import type { ErrorDocument } from "../../../server/domain/errors";
import type { resumeExperiment, showExperiment } from "../../../server/services/experiments";
import type { cancelOperation } from "../../../server/services/operations";
import { callMutation } from "../../home/trpc-client";
import { OperationProgress } from "../../home/OperationProgress";
import { ErrorPanel } from "../../ErrorPanel";
import { errorDocumentOf, queryService } from "../../trpc-client";
import type { CellViewProps } from "../context";

type Shown = z.output<(typeof showExperiment)["output"]>;
type Analysis = NonNullable<Shown["experiment"]["analysis"]>;

const W = 640;
const H = 170;
const PAD = { left: 64, right: 16, top: 12, bottom: 26 };
const COLOURS = ["#3b6fd8", "#d8663b", "#3ba86b", "#a83b9c", "#8a8a2a", "#2aa0a8"];
/** While trials run, the cell asks again this often. */
const POLL_MS = 2000;

const DECISION_TEXT: Record<string, string> = {
  meaningful_improvement: "meaningful improvement",
  meaningful_regression: "meaningful regression",
  no_meaningful_difference: "no meaningful difference",
  inconclusive: "inconclusive",
};

/** The metric's unit for display: ns metrics as durations, bytes as sizes, counts as they are. */
function unitOf(metric: string): string | null {
  return metric.endsWith("_ns") ? "ns" : metric.endsWith("_bytes") ? "bytes" : null;
}

function useExperiment(id: string, generation: number): Shown | ErrorDocument | null {
  const [answer, setAnswer] = useState<Shown | ErrorDocument | null>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      queryService("experiments.get", { experiment_id: id })
        .then((shown) => {
          if (!live) return;
          setAnswer(shown);
          if (shown.experiment.state === "running" || shown.experiment.state === "planned") timer = setTimeout(load, POLL_MS);
        })
        .catch((e: unknown) => live && setAnswer(errorDocumentOf(e)));
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, generation]);
  return answer;
}

/**
 * An experiment: its decision with the ratio and CI, then the three pictures — paired deltas per
 * block against the CI and the practical band, every trial's value in run order (drift shows), and
 * each variant's distribution — and a compare of the two variants' last runs one click away.
 */
export function ExperimentCellView({ content }: CellViewProps<"experiment">) {
  const [generation, setGeneration] = useState(0);
  const [actionError, setActionError] = useState<ErrorDocument | null>(null);
  const answer = useExperiment(content.experiment_id, generation);
  if (answer === null) return <p className="tip-muted">Loading the experiment…</p>;
  if ("code" in answer) return <ErrorPanel error={answer} />;
  const { experiment, trials, counts, operation } = answer;
  const act = (call: () => Promise<unknown>) => {
    setActionError(null);
    call()
      .then(() => setGeneration((g) => g + 1))
      .catch((e: unknown) => setActionError(errorDocumentOf(e)));
  };
  const analysis = experiment.analysis;
  const unit = unitOf(experiment.design.metric);
  return (
    <div className="experiment-cell" data-testid="experiment-cell">
      <p>
        <strong>{experiment.title}</strong> · {experiment.design.metric} under {experiment.design.adapter}, {experiment.design.polarity.replaceAll("_", " ")} · threshold{" "}
        {(experiment.design.threshold * 100).toFixed(1)} % · {Math.round(experiment.design.confidence * 100)} % CI ·{" "}
        <span data-testid="experiment-state">{experiment.state}</span> ({counts.ok} ok, {counts.failed} failed, {counts.pending} pending of {counts.total} trials)
      </p>
      {experiment.state === "running" && operation ? (
        <div className="progress-line" data-testid="experiment-progress" aria-live="polite">
          Running trials… <OperationProgress op={operation} />{" "}
          <button type="button" className="plain-button" onClick={() => act(() => callMutation<typeof cancelOperation>("operations.cancel", { operation_id: operation.operation_id }))} data-testid="experiment-cancel">
            Cancel
          </button>
        </div>
      ) : null}
      {["interrupted", "cancelled", "failed"].includes(experiment.state) ? (
        <div className="progress-line">
          {counts.pending} trial(s) did not run.{" "}
          <button type="button" className="plain-button" onClick={() => act(() => callMutation<typeof resumeExperiment>("experiments.resume", { experiment_id: experiment.experiment_id }))} data-testid="experiment-resume">
            Resume
          </button>
        </div>
      ) : null}
      {actionError ? <ErrorPanel error={actionError} /> : null}
      {analysis ? <Comparisons analysis={analysis} /> : null}
      {analysis?.warnings.length ? (
        <ul className="tip-muted">
          {analysis.warnings.map((w, i) => (
            <li key={i}>{w.message}</li>
          ))}
        </ul>
      ) : null}
      {analysis ? (
        <>
          <DeltasPicture analysis={analysis} />
          <RunOrderPicture analysis={analysis} unit={unit} />
          <DistributionPicture analysis={analysis} unit={unit} />
        </>
      ) : null}
      <CompareLink trials={trials} baseline={experiment.design.baseline} />
    </div>
  );
}

function Comparisons({ analysis }: { analysis: Analysis }) {
  return (
    <ul className="experiment-decisions" data-testid="experiment-decisions">
      {analysis.comparisons.map((c) => (
        <li key={c.variant}>
          <strong data-testid="experiment-decision">{DECISION_TEXT[c.decision] ?? c.decision}</strong>: {c.variant} / {c.baseline} ={" "}
          {c.ratio === null ? "–" : c.ratio.toFixed(3)}
          {c.ci ? ` (CI ${c.ci[0].toFixed(3)}–${c.ci[1].toFixed(3)})` : ""} over {c.pairs} pairs{c.excluded_blocks ? `, ${c.excluded_blocks} block(s) excluded` : ""}
        </li>
      ))}
    </ul>
  );
}

/** Per block, each variant's paired ratio to the baseline; the CI as a shaded band, the practical band dashed. */
function DeltasPicture({ analysis }: { analysis: Analysis }) {
  const ratios = analysis.comparisons.flatMap((c) => c.deltas.map((d) => Math.exp(d.log_ratio)));
  const cis = analysis.comparisons.flatMap((c) => c.ci ?? []);
  const band = [1 / (1 + analysis.threshold), 1 + analysis.threshold];
  const [lo, hi] = extent([...ratios, ...cis, ...band, 1]) as [number, number];
  const blocks = Math.max(1, ...analysis.comparisons.flatMap((c) => c.deltas.map((d) => d.block + 1)));
  const x = scaleLinear().domain([-0.5, blocks - 0.5]).range([PAD.left, W - PAD.right]);
  const y = scaleLinear().domain([lo, hi]).nice().range([H - PAD.bottom, PAD.top]);
  return (
    <figure data-testid="experiment-deltas">
      <figcaption>Paired ratio to the baseline per block, with the CI (shaded) and the ±{(analysis.threshold * 100).toFixed(1)} % band (dashed)</figcaption>
      <svg width={W} height={H} role="img" aria-label="paired ratios per block">
        <rect x={PAD.left} width={W - PAD.left - PAD.right} y={y(band[1])} height={Math.max(0, y(band[0]) - y(band[1]))} fill="none" stroke="#999" strokeDasharray="4 3" />
        {analysis.comparisons.map((c, k) =>
          c.ci ? <rect key={`ci-${c.variant}`} x={PAD.left} width={W - PAD.left - PAD.right} y={y(c.ci[1])} height={Math.max(1, y(c.ci[0]) - y(c.ci[1]))} fill={COLOURS[(k + 1) % COLOURS.length]} opacity={0.15} /> : null,
        )}
        <line x1={PAD.left} x2={W - PAD.right} y1={y(1)} y2={y(1)} stroke="#666" />
        {analysis.comparisons.map((c, k) =>
          c.deltas.map((d) => <circle key={`${c.variant}-${d.block}`} cx={x(d.block)} cy={y(Math.exp(d.log_ratio))} r={3.5} fill={COLOURS[(k + 1) % COLOURS.length]} />),
        )}
        <Axis y={y} format={(v) => `${v.toFixed(2)}×`} />
        <text x={W / 2} y={H - 6} textAnchor="middle" fontSize={11}>
          block
        </text>
      </svg>
    </figure>
  );
}

/** Every trial's value in run order, one colour per variant: drift over the run shows as a slope. */
function RunOrderPicture({ analysis, unit }: { analysis: Analysis; unit: string | null }) {
  const points = analysis.variants.flatMap((v, k) => v.values.map((p) => ({ ...p, colour: COLOURS[k % COLOURS.length] })));
  const [lo, hi] = extent(points.map((p) => p.value)) as [number, number];
  const [first, last] = extent(points.map((p) => p.index)) as [number, number];
  const x = scaleLinear().domain([first - 0.5, last + 0.5]).range([PAD.left, W - PAD.right]);
  const y = scaleLinear().domain([lo, hi]).nice().range([H - PAD.bottom, PAD.top]);
  return (
    <figure data-testid="experiment-run-order">
      <figcaption>
        Values in run order:{" "}
        {analysis.variants.map((v, k) => (
          <span key={v.variant} style={{ color: COLOURS[k % COLOURS.length] }}>
            ● {v.variant}{" "}
          </span>
        ))}
      </figcaption>
      <svg width={W} height={H} role="img" aria-label="values in run order">
        {points.map((p) => (
          <circle key={p.index} cx={x(p.index)} cy={y(p.value)} r={3} fill={p.colour} />
        ))}
        <Axis y={y} format={(v) => formatValue(v, unit)} />
        <text x={W / 2} y={H - 6} textAnchor="middle" fontSize={11}>
          trial (run order)
        </text>
      </svg>
    </figure>
  );
}

/** Each variant's values as a strip, with its median (bar) and median ± MAD (box). */
function DistributionPicture({ analysis, unit }: { analysis: Analysis; unit: string | null }) {
  const all = analysis.variants.flatMap((v) => v.values.map((p) => p.value));
  const [lo, hi] = extent(all) as [number, number];
  const x = scalePoint<string>().domain(analysis.variants.map((v) => v.variant)).range([PAD.left + 60, W - PAD.right - 60]);
  const y = scaleLinear().domain([lo, hi]).nice().range([H - PAD.bottom, PAD.top]);
  return (
    <figure data-testid="experiment-distribution">
      <figcaption>Each variant&apos;s values, median and ± MAD</figcaption>
      <svg width={W} height={H} role="img" aria-label="per-variant distribution">
        {analysis.variants.map((v, k) => {
          const cx = x(v.variant)!;
          const colour = COLOURS[k % COLOURS.length];
          return (
            <g key={v.variant}>
              {v.median !== null && v.mad !== null ? <rect x={cx - 22} width={44} y={y(v.median + v.mad)} height={Math.max(1, y(v.median - v.mad) - y(v.median + v.mad))} fill={colour} opacity={0.15} /> : null}
              {v.median !== null ? <line x1={cx - 26} x2={cx + 26} y1={y(v.median)} y2={y(v.median)} stroke={colour} strokeWidth={2} /> : null}
              {v.values.map((p, i) => (
                <circle key={p.index} cx={cx - 14 + ((i * 7) % 29)} cy={y(p.value)} r={2.5} fill={colour} />
              ))}
              <text x={cx} y={H - 6} textAnchor="middle" fontSize={11}>
                {v.variant}
              </text>
            </g>
          );
        })}
        <Axis y={y} format={(v) => formatValue(v, unit)} />
      </svg>
    </figure>
  );
}

function Axis({ y, format }: { y: ReturnType<typeof scaleLinear<number, number>>; format: (v: number) => string }) {
  return (
    <g fontSize={10}>
      {y.ticks(4).map((t) => (
        <g key={t}>
          <line x1={PAD.left - 4} x2={PAD.left} y1={y(t)} y2={y(t)} stroke="#999" />
          <text x={PAD.left - 6} y={y(t) + 3} textAnchor="end">
            {format(t)}
          </text>
        </g>
      ))}
    </g>
  );
}

/** The baseline's and the first other variant's last successful runs, side by side on /compare. */
function CompareLink({ trials, baseline }: { trials: Shown["trials"]; baseline: string }) {
  const lastRun = (pick: (variant: string) => boolean) => [...trials].reverse().find((t) => t.outcome === "ok" && !t.warmup && t.run_id && pick(t.variant))?.run_id;
  const base = lastRun((v) => v === baseline);
  const candidate = lastRun((v) => v !== baseline);
  if (!base || !candidate) return null;
  return (
    <p>
      <a href={`/compare?base=${encodeURIComponent(base)}&candidate=${encodeURIComponent(candidate)}`} data-testid="experiment-compare">
        Compare the two variants&apos; last runs ↗
      </a>{" "}
      <span className="tip-muted">(a profile compare when the adapter captured profiles; measure keeps measurements only)</span>
    </p>
  );
}
