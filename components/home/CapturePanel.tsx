"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import type { z } from "zod";
import type { ErrorDocument } from "../../server/domain/errors";
import type { executeCapturePlan, listCapabilities, listWorkloads, planCapture } from "../../server/services/captures";
import type { listOperations, showOperation } from "../../server/services/operations";
import type { Operation } from "../../server/store/operations";
import { ErrorPanel } from "../ErrorPanel";
import { CancelOperation } from "./CancelOperation";
import { CaptureClock } from "./CaptureClock";
import { OperationProgress } from "./OperationProgress";
import { callMutation, callQuery, errorDocumentOf } from "./trpc-client";

export type Workload = z.output<(typeof listWorkloads)["output"]>["workloads"][number];
export type Adapter = z.output<(typeof listCapabilities)["output"]>["adapters"][number];
type Plan = z.output<(typeof planCapture)["output"]>;
type Outcome = z.output<(typeof executeCapturePlan)["output"]>;

type Step =
  | { step: "choose" }
  | { step: "planning" }
  | { step: "review"; plan: Plan; plannedAt: string }
  | { step: "running"; plan: Plan; op: Operation | null }
  | { step: "done"; outcome: Outcome }
  | { step: "failed"; error: ErrorDocument; plan?: Plan };

interface Intent {
  argv?: string[];
  cwd?: string;
  timeout_s?: number;
  executable?: { path: string; sha256: string };
  adapter?: { name: string; version: string | null; options: Record<string, unknown> };
  workload?: { name: string; parameters: Record<string, unknown> };
  environment?: { inherited?: string[]; set?: Record<string, string>; withheld?: string[] };
}

/**
 * Capture a declared workload: choose workload and adapter → review the resolved plan (program,
 * arguments, environment, timeout) → execute with the plan's single-use token → live progress
 * (operations.get) → open the run.
 */
export function CapturePanel(props: { workloads: Workload[]; adapters: Adapter[]; initialWorkload?: string; initialAdapter?: string; autoPlan?: boolean; title?: string }) {
  const available = props.adapters.filter((a) => a.available);
  const [workload, setWorkload] = useState(props.initialWorkload ?? props.workloads[0]?.name ?? "");
  const [adapter, setAdapter] = useState(props.initialAdapter && available.some((a) => a.adapter === props.initialAdapter) ? props.initialAdapter : (available.find((a) => a.adapter === "node-cpuprofile") ?? available[0])?.adapter ?? "");
  const spec = props.workloads.find((w) => w.name === workload);
  const [params, setParams] = useState<Record<string, string>>({});
  const [step, setStep] = useState<Step>({ step: "choose" });
  const autoPlanned = useRef(false);

  const parameters = useMemo(() => {
    const out: Record<string, string | number | boolean> = {};
    for (const [name, p] of Object.entries(spec?.parameters ?? {})) {
      const raw = params[name];
      if (raw === undefined || raw === "") continue;
      out[name] = p.type === "number" || p.type === "integer" ? Number(raw) : p.type === "boolean" ? raw === "true" : raw;
    }
    return out;
  }, [params, spec]);

  const plan = async () => {
    setStep({ step: "planning" });
    try {
      const planned = await callMutation<typeof planCapture>("captures.plan", { workload, adapter, parameters });
      setStep({ step: "review", plan: planned, plannedAt: new Date().toISOString() });
    } catch (e) {
      setStep({ step: "failed", error: errorDocumentOf(e) });
    }
  };

  useEffect(() => {
    if (props.autoPlan && !autoPlanned.current && workload && adapter) {
      autoPlanned.current = true;
      void plan();
    }
  }, [props.autoPlan]);

  const execute = async (reviewed: Plan, plannedAt: string) => {
    setStep({ step: "running", plan: reviewed, op: null });
    let finished = false;
    // The execute call answers when the capture ends; meanwhile its operation reports progress.
    const poll = (async () => {
      let opId: string | null = null;
      while (!finished) {
        try {
          if (!opId) {
            const active = await callQuery<typeof listOperations>("operations.list", { limit: 20 });
            const mine = active.items.find((o) => o.kind === "capture" && o.created_at >= plannedAt);
            opId = mine?.operation_id ?? null;
            if (mine) setStep((s) => (s.step === "running" ? { ...s, op: mine } : s));
          } else {
            const op = await callQuery<typeof showOperation>("operations.get", { operation_id: opId });
            setStep((s) => (s.step === "running" ? { ...s, op } : s));
          }
        } catch {
          // progress is best effort; the execute call reports the outcome
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    try {
      const outcome = await callMutation<typeof executeCapturePlan>("captures.execute", { plan_token: reviewed.plan_token, expected_plan_id: reviewed.plan_id });
      finished = true;
      await poll;
      setStep({ step: "done", outcome });
      if (outcome.status === "succeeded") window.location.assign(`/runs/${outcome.run_id}`);
    } catch (e) {
      finished = true;
      await poll;
      setStep({ step: "failed", error: errorDocumentOf(e), plan: reviewed });
    }
  };

  if (props.workloads.length === 0) {
    return (
      <section className="home-panel" aria-labelledby="capture-heading">
        <h3 id="capture-heading">{props.title ?? "Capture a workload"}</h3>
        <div className="empty" data-testid="capture-no-workloads">
          <strong>No workloads are declared.</strong> Emberscope runs only what a person declares in <code>emberscope.toml</code> at the project root, e.g.:
          <pre className="mono">{`[workloads.app]\nargv = ["node", "app.js"]\ntimeout = 60`}</pre>
          then reload this page.
        </div>
      </section>
    );
  }

  const intent = (step.step === "review" || step.step === "running" ? step.plan.plan : {}) as Intent;
  return (
    <section className="home-panel" aria-labelledby="capture-heading" data-testid="capture-panel" data-step={step.step}>
      <h3 id="capture-heading">{props.title ?? "Capture a workload"}</h3>
      <div className="capture-form">
        <label>
          Workload{" "}
          <select value={workload} onChange={(e) => (setWorkload(e.target.value), setParams({}), setStep({ step: "choose" }))} data-testid="capture-workload" disabled={step.step === "running"}>
            {props.workloads.map((w) => (
              <option key={w.name} value={w.name}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Adapter{" "}
          <select value={adapter} onChange={(e) => (setAdapter(e.target.value), setStep({ step: "choose" }))} data-testid="capture-adapter" disabled={step.step === "running"}>
            {props.adapters.map((a) => (
              <option key={a.adapter} value={a.adapter} disabled={!a.available} title={a.reason ?? a.summary}>
                {a.adapter}
                {a.available ? "" : ` (unavailable: ${a.reason ?? "not installed"})`}
              </option>
            ))}
          </select>
        </label>
        {Object.entries(spec?.parameters ?? {}).map(([name, p]) => (
          <label key={name} title={p.description}>
            {name}{" "}
            <input
              className="param"
              value={params[name] ?? ""}
              placeholder={String(p.default)}
              onChange={(e) => (setParams((old) => ({ ...old, [name]: e.target.value })), setStep({ step: "choose" }))}
              data-testid={`capture-param-${name}`}
              disabled={step.step === "running"}
            />
          </label>
        ))}
        <button type="button" className="button" onClick={() => void plan()} disabled={!workload || !adapter || step.step === "planning" || step.step === "running"} data-testid="capture-plan">
          {step.step === "planning" ? "Planning…" : "Plan capture"}
        </button>
      </div>
      {spec?.description ? <p className="muted">{spec.description}</p> : null}
      {step.step === "review" || step.step === "running" ? (
        <div className="plan-review" data-testid="capture-plan-review">
          <h4>
            Plan <code>{step.plan.plan_id}</code> <span className="muted">· review before running · expires {step.plan.expires_at.replace("T", " ").slice(0, 19)}</span>
          </h4>
          <dl className="plan-facts">
            <dt>Runs</dt>
            <dd className="mono" data-testid="capture-plan-argv">
              {(intent.argv ?? []).join(" ")}
            </dd>
            <dt>In</dt>
            <dd className="mono">{intent.cwd}</dd>
            <dt>Program</dt>
            <dd className="mono">
              {intent.executable?.path} <span className="muted">sha256 {intent.executable?.sha256.slice(0, 12)}…</span>
            </dd>
            <dt>Adapter</dt>
            <dd>
              {intent.adapter?.name} {intent.adapter?.version ? <span className="muted">({intent.adapter.version})</span> : null} {Object.keys(intent.adapter?.options ?? {}).length ? <code>{JSON.stringify(intent.adapter?.options)}</code> : null}
            </dd>
            <dt>Parameters</dt>
            <dd>
              <code>{JSON.stringify(intent.workload?.parameters ?? {})}</code>
            </dd>
            <dt>Environment</dt>
            <dd>
              {(intent.environment?.inherited ?? []).length} inherited names, {Object.keys(intent.environment?.set ?? {}).length} set, {(intent.environment?.withheld ?? []).length} withheld (credential-like)
            </dd>
            <dt>Timeout</dt>
            <dd className="num" style={{ textAlign: "left" }}>
              {intent.timeout_s} s
            </dd>
          </dl>
          {step.step === "review" ? (
            <button type="button" className="button" onClick={() => void execute(step.plan, step.plannedAt)} data-testid="capture-execute">
              Execute this plan
            </button>
          ) : (
            <div className="progress-line" data-testid="capture-progress" aria-live="polite">
              Capturing… {step.op ? <OperationProgress op={step.op} /> : <span className="muted">starting</span>}{" "}
              {step.op ? (
                <>
                  · <CaptureClock since={step.op.created_at} timeoutS={intent.timeout_s} /> <CancelOperation operationId={step.op.operation_id} requested={step.op.cancel_requested} />
                </>
              ) : null}
            </div>
          )}
        </div>
      ) : null}
      {step.step === "done" ? (
        <p className="ok-line" data-testid="capture-done">
          Capture {step.outcome.status} · run <a href={`/runs/${step.outcome.run_id}`}>{step.outcome.run_id}</a> · opening it…
        </p>
      ) : null}
      {step.step === "failed" ? (
        <>
          <ErrorPanel error={step.error} command={`npx emberscope capture run ${adapter} --workload ${workload}`} />
          {typeof step.error.details?.run_id === "string" ? (
            <p>
              <a href={`/runs/${step.error.details.run_id}`} data-testid="capture-failed-run">
                Open the {step.error.code === "CANCELLED" ? "cancelled" : "failed"} run
              </a>{" "}
              <span className="muted">for why it ended and the end of the workload&apos;s stderr.</span>
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
