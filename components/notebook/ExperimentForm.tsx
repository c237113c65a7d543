"use client";

import { useEffect, useState, type FormEvent } from "react";
import type { z } from "zod";
import type { ErrorDocument } from "../../server/domain/errors";
import type { listCapabilities, listWorkloads } from "../../server/services/captures";
import type { planExperiment, runExperiment } from "../../server/services/experiments";
import { ErrorPanel } from "../ErrorPanel";
import { callMutation, callQuery, errorDocumentOf } from "../home/trpc-client";
import { useNotebook } from "./context";

type Workload = z.output<(typeof listWorkloads)["output"]>["workloads"][number];
type Adapter = z.output<(typeof listCapabilities)["output"]>["adapters"][number];
type Plan = z.output<(typeof planExperiment)["output"]>;

/** The primary metrics each adapter's runs yield (others: named by hand). */
const METRICS: Record<string, string[]> = {
  measure: ["wall_ns", "cpu_ns", "user_ns", "sys_ns", "max_rss_bytes"],
  callgrind: ["instructions"],
};

interface VariantDraft {
  name: string;
  workload: string;
  /** Parameter values as typed; empty means the declared default. */
  params: Record<string, string>;
}

type Step = { step: "choose" } | { step: "planning" } | { step: "review"; plan: Plan } | { step: "starting"; plan: Plan };

function typedParameters(spec: Workload | undefined, raw: Record<string, string>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [name, p] of Object.entries(spec?.parameters ?? {})) {
    const value = raw[name];
    if (value === undefined || value === "") continue;
    out[name] = p.type === "number" || p.type === "integer" ? Number(value) : p.type === "boolean" ? value === "true" : value;
  }
  return out;
}

/**
 * Plan an experiment from a notebook: variants (a declared workload with parameter values, or
 * another workload), adapter, metric, polarity, threshold, trials, warm-ups and seed → review every
 * trial's command line in run order (blocks, warm-ups first) → Run with the plan's single-use token.
 * The experiment's cell is added when it starts; it shows progress, cancel and then the result.
 */
export function ExperimentForm(props: { onStarted: (experimentId: string) => Promise<void> | void; onCancel: () => void }) {
  const nb = useNotebook();
  const [workloads, setWorkloads] = useState<Workload[] | null>(null);
  const [adapters, setAdapters] = useState<Adapter[]>([]);
  const [loadError, setLoadError] = useState<ErrorDocument | null>(null);
  const [title, setTitle] = useState("");
  const [variants, setVariants] = useState<VariantDraft[]>([]);
  const [adapter, setAdapter] = useState("measure");
  const [metric, setMetric] = useState("wall_ns");
  const [polarity, setPolarity] = useState<"lower_is_better" | "higher_is_better">("lower_is_better");
  const [thresholdPct, setThresholdPct] = useState("2");
  const [trials, setTrials] = useState("10");
  const [warmups, setWarmups] = useState("1");
  const [seed, setSeed] = useState("");
  const [step, setStep] = useState<Step>({ step: "choose" });
  const [error, setError] = useState<ErrorDocument | null>(null);

  useEffect(() => {
    Promise.all([callQuery<typeof listWorkloads>("workloads.list", {}), callQuery<typeof listCapabilities>("captures.capabilities", {})])
      .then(([w, a]) => {
        setWorkloads(w.workloads);
        setAdapters(a.adapters);
        const first = w.workloads[0]?.name ?? "";
        setVariants([
          { name: "A", workload: first, params: {} },
          { name: "B", workload: first, params: {} },
        ]);
      })
      .catch((e: unknown) => setLoadError(errorDocumentOf(e)));
  }, []);

  const changed = () => {
    setStep({ step: "choose" });
    setError(null);
  };
  const setVariant = (i: number, change: Partial<VariantDraft>) => {
    setVariants((old) => old.map((v, j) => (j === i ? { ...v, ...change } : v)));
    changed();
  };

  const plan = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setStep({ step: "planning" });
    try {
      const planned = await callMutation<typeof planExperiment>("experiments.plan", {
        investigation_id: nb.investigationId,
        ...(title.trim() ? { title: title.trim() } : {}),
        variants: variants.map((v) => ({ name: v.name, workload: v.workload, parameters: typedParameters(workloads?.find((w) => w.name === v.workload), v.params) })),
        adapter,
        metric,
        polarity,
        threshold: Number(thresholdPct) / 100,
        trials: Number(trials),
        warmups: Number(warmups),
        ...(seed.trim() ? { seed: Number(seed) } : {}),
      });
      setStep({ step: "review", plan: planned });
    } catch (x) {
      setError(errorDocumentOf(x));
      setStep({ step: "choose" });
    }
  };

  const run = async (reviewed: Plan) => {
    setStep({ step: "starting", plan: reviewed });
    try {
      const started = await callMutation<typeof runExperiment>("experiments.run", { plan_token: reviewed.plan_token, expected_plan_id: reviewed.plan_id, idempotency_key: `notebook-${reviewed.plan_id}` });
      await props.onStarted(started.experiment_id);
    } catch (x) {
      setError(errorDocumentOf(x));
      setStep({ step: "review", plan: reviewed });
    }
  };

  if (loadError) return <ErrorPanel error={loadError} />;
  if (!workloads) return <p className="tip-muted">Loading the declared workloads…</p>;
  if (workloads.length === 0) {
    return (
      <div className="empty" data-testid="experiment-no-workloads">
        <strong>No workloads are declared.</strong> Experiments run only what a person declares in <code>emberscope.toml</code>.
        <div className="nb-form-actions">
          <button type="button" className="plain-button" onClick={props.onCancel}>
            Close
          </button>
        </div>
      </div>
    );
  }

  const metricChoices = METRICS[adapter];
  const reviewing = step.step === "review" || step.step === "starting" ? step.plan : null;
  return (
    <div data-testid="experiment-form" data-step={step.step}>
      <form className="nb-form" onSubmit={(e) => void plan(e)}>
        <h2>Plan an experiment</h2>
        <label>
          Title
          <input value={title} placeholder="the variants' names" onChange={(e) => (setTitle(e.target.value), changed())} data-testid="experiment-title" />
        </label>
        <fieldset className="experiment-variants" data-testid="experiment-variants">
          <legend>Variants (the first is the baseline)</legend>
          {variants.map((v, i) => {
            const spec = workloads.find((w) => w.name === v.workload);
            return (
              <div key={i} className="nb-form-row" data-testid={`experiment-variant-${i}`}>
                <label>
                  Name
                  <input required size={8} value={v.name} onChange={(e) => setVariant(i, { name: e.target.value })} data-testid={`experiment-variant-${i}-name`} />
                </label>
                <label>
                  Workload
                  <select value={v.workload} onChange={(e) => setVariant(i, { workload: e.target.value, params: {} })} data-testid={`experiment-variant-${i}-workload`}>
                    {workloads.map((w) => (
                      <option key={w.name} value={w.name}>
                        {w.name}
                      </option>
                    ))}
                  </select>
                </label>
                {Object.entries(spec?.parameters ?? {}).map(([name, p]) => (
                  <label key={name} title={p.description}>
                    {name}
                    <input size={10} value={v.params[name] ?? ""} placeholder={String(p.default)} onChange={(e) => setVariant(i, { params: { ...v.params, [name]: e.target.value } })} data-testid={`experiment-variant-${i}-param-${name}`} />
                  </label>
                ))}
                {variants.length > 2 ? (
                  <button type="button" className="link-button" onClick={() => (setVariants((old) => old.filter((_, j) => j !== i)), changed())} aria-label={`Remove variant ${v.name}`}>
                    remove
                  </button>
                ) : null}
              </div>
            );
          })}
          <button
            type="button"
            className="link-button"
            onClick={() => (setVariants((old) => [...old, { name: String.fromCharCode(65 + old.length), workload: workloads[0].name, params: {} }]), changed())}
            data-testid="experiment-add-variant"
          >
            + variant
          </button>
        </fieldset>
        <div className="nb-form-row">
          <label>
            Adapter
            <select
              value={adapter}
              onChange={(e) => {
                setAdapter(e.target.value);
                setMetric(METRICS[e.target.value]?.[0] ?? "");
                changed();
              }}
              data-testid="experiment-adapter"
            >
              {adapters.map((a) => (
                <option key={a.adapter} value={a.adapter} disabled={!a.available} title={a.reason ?? a.summary}>
                  {a.adapter}
                  {a.available ? "" : " (unavailable)"}
                </option>
              ))}
            </select>
          </label>
          <label>
            Metric
            {metricChoices ? (
              <select value={metric} onChange={(e) => (setMetric(e.target.value), changed())} data-testid="experiment-metric">
                {metricChoices.map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
            ) : (
              <input required size={12} value={metric} placeholder="metric name" onChange={(e) => (setMetric(e.target.value), changed())} data-testid="experiment-metric" />
            )}
          </label>
          <label>
            Better when
            <select value={polarity} onChange={(e) => (setPolarity(e.target.value as typeof polarity), changed())} data-testid="experiment-polarity">
              <option value="lower_is_better">lower</option>
              <option value="higher_is_better">higher</option>
            </select>
          </label>
        </div>
        <div className="nb-form-row">
          <label title="The smallest change that matters">
            Threshold %
            <input type="number" min="0.1" max="99" step="0.1" size={4} value={thresholdPct} onChange={(e) => (setThresholdPct(e.target.value), changed())} data-testid="experiment-threshold" />
          </label>
          <label title="Measured trials per variant (one per block)">
            Trials
            <input type="number" min="2" max="200" size={4} value={trials} onChange={(e) => (setTrials(e.target.value), changed())} data-testid="experiment-trials" />
          </label>
          <label title="Warm-up blocks, run first and discarded">
            Warm-ups
            <input type="number" min="0" size={3} value={warmups} onChange={(e) => (setWarmups(e.target.value), changed())} data-testid="experiment-warmups" />
          </label>
          <label title="Seeds the run order and the bootstrap (drawn at random when empty)">
            Seed
            <input type="number" min="0" size={8} value={seed} placeholder="random" onChange={(e) => (setSeed(e.target.value), changed())} data-testid="experiment-seed" />
          </label>
        </div>
        {error ? <ErrorPanel error={error} /> : null}
        <div className="nb-form-actions">
          <button type="submit" className="button" disabled={step.step === "planning" || step.step === "starting"} data-testid="experiment-plan">
            {step.step === "planning" ? "Planning…" : reviewing ? "Plan again" : "Plan experiment"}
          </button>
          <button type="button" className="plain-button" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </form>
      {reviewing ? <PlanReview plan={reviewing} starting={step.step === "starting"} onRun={() => void run(reviewing)} /> : null}
    </div>
  );
}

/** Every trial in run order with its command line, before anything runs. */
function PlanReview(props: { plan: Plan; starting: boolean; onRun: () => void }) {
  const { plan } = props;
  const d = plan.experiment.design;
  const warm = plan.plan.trials.filter((t) => t.warmup).length;
  return (
    <div className="plan-review experiment-plan-review" data-testid="experiment-plan-review">
      <h3>
        Plan <code>{plan.plan_id}</code> <span className="muted">· review before running · expires {plan.expires_at.replace("T", " ").slice(0, 19)}</span>
      </h3>
      <p>
        {plan.plan.trials.length} trials ({warm} warm-up, discarded) of {d.variants.map((v) => v.name).join(", ")} under <strong>{d.adapter}</strong> on <code>{d.metric}</code>, baseline {d.baseline}, threshold {(d.threshold * 100).toFixed(1)} %, seed {d.seed}. Each block runs every
        variant once, in a random order.
      </p>
      <div className="experiment-trial-list">
        <table className="data-table" data-testid="experiment-plan-trials">
          <thead>
            <tr>
              <th>#</th>
              <th>block</th>
              <th>variant</th>
              <th>command line (run under {d.adapter})</th>
            </tr>
          </thead>
          <tbody>
            {plan.plan.trials.map((t) => (
              <tr key={t.index} className={`${t.warmup ? "muted " : ""}${(t.block + d.warmups) % 2 ? "experiment-block-odd" : ""}`}>
                <td className="num">{t.index + 1}</td>
                <td>{t.warmup ? `warm-up ${t.block + d.warmups + 1}` : t.block + 1}</td>
                <td>{t.variant}</td>
                <td className="mono">{t.argv.join(" ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <button type="button" className="button" onClick={props.onRun} disabled={props.starting} data-testid="experiment-run">
        {props.starting ? "Starting…" : `Run ${plan.plan.trials.length} trials`}
      </button>
    </div>
  );
}
