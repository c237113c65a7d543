"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";
import type { z } from "zod";
import type { listRunFacets } from "../../server/services/runs";
import { hasFilters, RUN_FILTER_KEYS, type RunsUrlState } from "./library-query";
import { useSettledValue } from "./use-runs-page";

export type RunFacets = z.output<typeof listRunFacets.output>;

/** The choices the bar offers: kinds and statuses from the run model, sources and workloads from runs.facets. */
export interface RunFilterChoices {
  kinds: readonly string[];
  statuses: readonly string[];
  facets: RunFacets;
}

const SOURCE_GROUPS: Record<string, string> = { import: "Formats (imports)", capture: "Adapters (captures)", extraction: "Extractions" };

/**
 * A select of one filter: "any" or one value (`options`, or grouped `children`); a value the URL
 * names that the choices lack is kept as a choice.
 */
function FilterSelect(props: { label: string; value: string | null; onChange: (value: string | null) => void; testId: string; options?: readonly string[]; children?: ReactNode; extra?: string | null }) {
  return (
    <label className="runs-filter">
      <span>{props.label}</span>
      <select value={props.value ?? ""} onChange={(e) => props.onChange(e.target.value || null)} data-testid={props.testId}>
        <option value="">any</option>
        {props.extra ? <option value={props.extra}>{props.extra}</option> : null}
        {props.options?.map((value) => (
          <option key={value} value={value}>
            {value}
          </option>
        ))}
        {props.children}
      </select>
    </label>
  );
}

/**
 * The runs library's filters: text (asked once typing pauses; `/` focuses it), kind, status,
 * format or adapter, workload and a range of UTC days. Each change starts at the first page.
 */
export function RunFilterBar({ state, choices, onChange }: { state: RunsUrlState; choices: RunFilterChoices; onChange: (patch: Partial<RunsUrlState>) => void }) {
  const [text, setText] = useState(state.q ?? "");
  const settled = useSettledValue(text, 300);
  const search = useRef<HTMLInputElement>(null);
  // Only a pause in typing asks again: a change made elsewhere (Clear filters) is not undone by stale text.
  const asked = useRef(settled);
  useEffect(() => {
    if (settled === asked.current) return;
    asked.current = settled;
    onChange({ q: settled.trim() || null, cursor: null });
  }, [settled, onChange]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = e.target instanceof HTMLElement && e.target.closest("input, select, textarea");
      if (e.key === "/" && !typing) {
        e.preventDefault();
        search.current?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  const set = (key: keyof RunsUrlState) => (value: string | null) => onChange({ [key]: value, cursor: null });
  const { facets } = choices;
  const sourceKnown = !state.source || facets.sources.some((s) => s.source === state.source);
  const workloadKnown = !state.workload || facets.workloads.some((w) => w.workload === state.workload);
  return (
    <div className="runs-filters" role="search" data-testid="runs-filters">
      <label className="runs-filter runs-filter-text">
        <span>Search</span>
        <input
          ref={search}
          type="search"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="title, file name, source or run id  ( / )"
          maxLength={200}
          data-testid="runs-search"
        />
      </label>
      <FilterSelect label="Kind" value={state.kind} onChange={set("kind")} testId="filter-kind" options={choices.kinds} />
      <FilterSelect label="Status" value={state.status} onChange={set("status")} testId="filter-status" options={choices.statuses} />
      <FilterSelect label="Format / adapter" value={state.source} onChange={set("source")} testId="filter-source" extra={sourceKnown ? null : state.source}>
        {Object.entries(SOURCE_GROUPS).map(([kind, label]) => {
          const sources = facets.sources.filter((s) => s.kind === kind);
          return sources.length ? (
            <optgroup key={kind} label={label}>
              {sources.map((s) => (
                <option key={s.source} value={s.source}>
                  {s.source} ({s.runs.toLocaleString("en-US")})
                </option>
              ))}
            </optgroup>
          ) : null;
        })}
      </FilterSelect>
      <FilterSelect label="Workload" value={state.workload} onChange={set("workload")} testId="filter-workload" extra={workloadKnown ? null : state.workload}>
        {facets.workloads.map((w) => (
          <option key={w.workload} value={w.workload}>
            {w.workload} ({w.runs.toLocaleString("en-US")})
          </option>
        ))}
      </FilterSelect>
      <label className="runs-filter">
        <span>From (UTC)</span>
        <input type="date" value={state.from ?? ""} onChange={(e) => set("from")(e.target.value || null)} data-testid="filter-from" />
      </label>
      <label className="runs-filter">
        <span>To (UTC)</span>
        <input type="date" value={state.to ?? ""} onChange={(e) => set("to")(e.target.value || null)} data-testid="filter-to" />
      </label>
      {hasFilters(state) ? (
        <button
          type="button"
          className="runs-clear"
          onClick={() => {
            setText("");
            onChange({ ...Object.fromEntries(RUN_FILTER_KEYS.map((key) => [key, null])), cursor: null });
          }}
          data-testid="runs-clear"
        >
          Clear filters
        </button>
      ) : null}
    </div>
  );
}
