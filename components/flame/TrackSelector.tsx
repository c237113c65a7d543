"use client";

import { useEffect, useRef } from "react";
import { formatValue } from "../../analysis/flame/format";

/** A track as the selector lists it (evidence.flame_tree's track_choices). */
export interface TrackChoice {
  track_key: string;
  label: string;
  process_id: string | null;
  process_name: string | null;
  thread_id: string | null;
  thread_name: string | null;
  kind: string;
  samples: number;
  value: number;
}

// The URL form is read by the run page's server side too, so it lives in a module without "use client".
export { formatTrackSelection, parseTrackSelection, type TrackSelection } from "./track-selection";
import type { TrackSelection } from "./track-selection";

interface ProcessGroup {
  id: string;
  label: string;
  tracks: TrackChoice[];
  value: number;
}

/** A thread under its process's heading: its name and id, without the process again. */
function threadLabel(t: TrackChoice): string {
  if (t.thread_id !== null && t.thread_id === t.process_id) return `${t.thread_name ?? "thread"} (main thread)`;
  return [t.thread_name, t.thread_id === null ? null : `tid ${t.thread_id}`].filter(Boolean).join(" ") || t.label;
}

/** Tracks grouped by process (threads of one pid together), groups and tracks heaviest first. */
function byProcess(choices: readonly TrackChoice[]): ProcessGroup[] {
  const groups = new Map<string, ProcessGroup>();
  for (const t of choices) {
    const id = t.process_id === null ? `track:${t.track_key}` : `pid:${t.process_id}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { id, label: t.process_id === null ? "" : `${t.process_name ?? "process"} · pid ${t.process_id}`, tracks: [], value: 0 }));
    g.tracks.push(t);
    g.value += t.value;
  }
  return [...groups.values()].sort((a, b) => b.value - a.value);
}

export interface TrackSelectorProps {
  choices: readonly TrackChoice[];
  /** The keys the shown answer covers (the busiest resolved to its key). */
  covered: readonly string[];
  selection: TrackSelection;
  onChange: (selection: TrackSelection) => void;
  unit: string | null;
  metric: string | null;
}

/**
 * The thread / process / profile selector of every sample view: all tracks merged, one, or several
 * (a process's threads at once), each with its share of the metric, in the URL. Like speedscope's
 * profile picker and Firefox Profiler's thread list, it opens on the busiest track.
 */
export function TrackSelector(props: TrackSelectorProps) {
  const details = useRef<HTMLDetailsElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  // Opened near the window's right edge, the list moves left to stay in view.
  const place = () => {
    const el = panel.current;
    if (!el || !details.current?.open) return;
    el.style.left = "0px";
    const overflow = el.getBoundingClientRect().right - (window.innerWidth - 8);
    if (overflow > 0) el.style.left = `${-overflow}px`;
  };
  const { choices, unit, metric } = props;
  const total = choices.reduce((sum, t) => sum + t.value, 0);
  const covered = new Set(props.covered);
  const all = props.selection === "all" || (choices.length > 0 && choices.every((t) => covered.has(t.track_key)));
  const groups = byProcess(choices);
  // Escape or a click elsewhere closes the list.
  useEffect(() => {
    const close = (e: Event) => {
      const el = details.current;
      if (!el?.open) return;
      if (e instanceof KeyboardEvent ? e.key === "Escape" : !el.contains(e.target as Node)) el.open = false;
    };
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", close);
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", close);
    };
  }, []);
  if (choices.length < 2) return null;

  const choose = (keys: string[]) => {
    const set = new Set(keys);
    if (set.size === 0) return;
    props.onChange(set.size === choices.length ? "all" : [...set].sort());
  };
  const toggle = (keys: string[], on: boolean) => {
    const next = new Set(all ? choices.map((t) => t.track_key) : covered);
    for (const k of keys) {
      if (on) next.add(k);
      else next.delete(k);
    }
    choose([...next]);
  };
  const share = (value: number) => (total > 0 ? `${((100 * value) / total).toFixed(1)} %` : "");
  const shown = choices.filter((t) => covered.has(t.track_key));
  const summary = all
    ? `All ${choices.length} tracks (merged)`
    : shown.length === 1
      ? shown[0].label
      : `${shown.length} of ${choices.length} tracks`;

  return (
    <details className="track-selector" ref={details} onToggle={place} data-testid="track-selector">
      <summary className="plain-button" title="Threads, processes or profiles whose samples the views show" data-testid="track-summary">
        <span className="track-summary-label">Tracks:</span> <span className="track-summary-value">{summary}</span>
        {props.selection === "busiest" && !all ? <span className="tip-muted"> (busiest)</span> : null}
      </summary>
      <div className="track-panel" ref={panel} role="group" aria-label="Tracks">
        <div className="track-panel-head">
          <button type="button" className="plain-button" onClick={() => props.onChange("all")} aria-pressed={all} data-testid="track-all">
            All tracks, merged
          </button>
          <button type="button" className="plain-button" onClick={() => props.onChange("busiest")} aria-pressed={props.selection === "busiest"} data-testid="track-busiest">
            Busiest only
          </button>
          <span className="tip-muted num">
            {choices.length} tracks · {formatValue(total, unit, metric)}
          </span>
        </div>
        <ul className="track-list">
          {groups.map((g) => {
            const keys = g.tracks.map((t) => t.track_key);
            const inGroup = keys.filter((k) => all || covered.has(k)).length;
            return (
              <li key={g.id} className="track-group">
                {g.label && g.tracks.length > 1 ? (
                  <div className="track-row track-process">
                    <input
                      type="checkbox"
                      checked={inGroup === keys.length}
                      ref={(el) => {
                        if (el) el.indeterminate = inGroup > 0 && inGroup < keys.length;
                      }}
                      onChange={(e) => toggle(keys, e.target.checked)}
                      aria-label={`Every thread of ${g.label}`}
                      data-testid={`track-process-${g.id}`}
                    />
                    <button type="button" className="row-button track-name" onClick={() => choose(keys)} title="Show only this process" data-testid={`track-process-only-${g.id}`}>
                      {g.label} <span className="tip-muted">({g.tracks.length} threads)</span>
                    </button>
                    <span className="num track-value">{formatValue(g.value, unit, metric)}</span>
                    <span className="num track-share">{share(g.value)}</span>
                  </div>
                ) : null}
                <ul>
                  {g.tracks.map((t) => {
                    const nested = Boolean(g.label) && g.tracks.length > 1;
                    return (
                      <li key={t.track_key} className={`track-row${nested ? " track-thread" : ""}`}>
                        <input type="checkbox" checked={all || covered.has(t.track_key)} onChange={(e) => toggle([t.track_key], e.target.checked)} aria-label={t.label} data-testid={`track-check-${t.track_key}`} />
                        <button type="button" className="row-button track-name" onClick={() => choose([t.track_key])} title={`Show only ${t.label}`} data-testid={`track-only-${t.track_key}`}>
                          {nested ? threadLabel(t) : t.label}
                        </button>
                        <span className="num track-value">{formatValue(t.value, unit, metric)}</span>
                        <span className="num track-share">{share(t.value)}</span>
                      </li>
                    );
                  })}
                </ul>
              </li>
            );
          })}
        </ul>
        <p className="tip-muted track-hint">A name shows that track alone; the boxes add or remove tracks (several are merged).</p>
      </div>
    </details>
  );
}
