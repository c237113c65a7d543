"use client";

import { scaleLinear } from "d3";
import { useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import "./trace.css";
import { ErrorPanel } from "../ErrorPanel";
import { errorDocumentOf } from "../home/trpc-client";
import type { ErrorDocument } from "../../server/domain/errors";
import { AXIS, layoutTracks, ROW, TRACK_HEADER } from "./layout";
import { RangeFlame } from "./RangeFlame";
import { colourFor, formatNs } from "./time-format";
import { loadFlows, loadWindow, shownTrackKeys, spanTrackChoices, tracksToLoad, TraceSourceContext, type Flow, type LoadedWindow, type Span, type TraceSummary } from "./trace-data";
import { fitText, hiDpiContext, prefersDark } from "../canvas";
import { useElementWidth } from "../use-element-width";
import { TrackSelector, type TrackChoice, type TrackSelection } from "../flame/TrackSelector";

/** The label column's width to open with, and its bounds when dragged (its right edge is a handle). */
const GUTTER = 260;
const MIN_GUTTER = 140;
const MAX_GUTTER = 720;
/** The pin control at the right of a track's header in the gutter. */
const PIN_BOX = 44;
const BUDGET = 60_000;
const MAX_CANVAS_HEIGHT = 6000;

interface View {
  start: number;
  end: number;
}

/** A time range in nanoseconds (the visible window or a selection). */
export type TimeWindow = View;

/**
 * The trace window: one row group per process/thread track, spans by depth on a shared time axis,
 * zoom (wheel, W/S) and pan (shift+wheel, A/D, minimap), flows as arrows; dragging selects a time
 * range, which shows the flame graph of that range's samples and its spans. Canvas throughout.
 */
export function TraceWindow(props: {
  runId: string;
  commitId: string;
  /** The visible range to open with (clamped to the run); the whole run when absent. */
  initialView?: View;
  /** The selected range to open with. */
  initialSelection?: View;
  /** Called when the visible range (null: the whole run) or the selection changes. */
  onViewChange?: (view: View | null, selection: View | null) => void;
  /** Spans to mark (`generation_id:span_id`): the critical path. */
  marked?: ReadonlySet<string> | null;
  /** Controls placed in the toolbar (e.g. the critical-path toggle). */
  toolbar?: React.ReactNode;
  /** Told what the run's summary says of its spans once it is read (e.g. no causal edges: no critical path to compute). */
  onFacts?: (facts: { spans: number; edges: number }) => void;
  /** The tracks shown (all when absent; "busiest": the one with the most spans), and where a choice goes (the URL's `tracks`). */
  tracks?: TrackSelection;
  onTracksChange?: (tracks: TrackSelection) => void;
}) {
  const { runId, commitId } = props;
  const source = useContext(TraceSourceContext);
  const [summary, setSummary] = useState<TraceSummary | null>(null);
  const [error, setError] = useState<ErrorDocument | null>(null);
  const [data, setData] = useState<LoadedWindow | null>(null);
  const [loading, setLoading] = useState(true);
  const [flows, setFlows] = useState<Flow[]>([]);
  const [view, setView] = useState<View | null>(null);
  const [selection, setSelection] = useState<View | null>(props.initialSelection ?? null);
  const [picked, setPicked] = useState<Span | null>(null);
  const [hover, setHover] = useState<{ span: Span; x: number; y: number } | null>(null);
  const [openedMs, setOpenedMs] = useState<number | null>(null);
  const [width, wrapRef] = useElementWidth<HTMLDivElement>(400);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const miniRef = useRef<HTMLCanvasElement>(null);
  const drag = useRef<{ x0: number; t0: number; moved: boolean } | null>(null);
  const [dragNow, setDragNow] = useState<View | null>(null);
  const opened = useRef(performance.now());
  // Tracks the person collapsed or pinned, the search and its current match, and where the pointer rests (W/S zoom around it).
  const [collapsed, setCollapsed] = useState<ReadonlySet<number>>(new Set());
  const [pinned, setPinned] = useState<ReadonlySet<number>>(new Set());
  // How far the track area is scrolled: the axis and the pinned tracks are drawn that far down, so they stay in view.
  const [stickyTop, setStickyTop] = useState(0);
  const [query, setQuery] = useState("");
  const [matchIndex, setMatchIndex] = useState(-1);
  const pointerPx = useRef<number | null>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  // The label column: wide enough for most "process · thread" names, resizable by its edge; a cut label's full name is the header's title.
  const [gutterWanted, setGutter] = useState(GUTTER);
  const gutter = Math.max(MIN_GUTTER, Math.min(gutterWanted, MAX_GUTTER, Math.floor(width * 0.6)));
  const [headerTitle, setHeaderTitle] = useState<string | null>(null);
  const resizing = useRef<{ x0: number; g0: number } | null>(null);

  const full = useMemo<View | null>(() => {
    const s = summary?.spans;
    if (!s || s.first_ns === null || s.last_ns === null || s.spans === 0) return null;
    return { start: s.first_ns, end: Math.max(s.last_ns, s.first_ns + 1) };
  }, [summary]);

  // Summary first (time range, tracks), then the spans of the whole run within the budget.
  useEffect(() => {
    let cancelled = false;
    opened.current = performance.now();
    setError(null);
    setLoading(true);
    source
      .summary(runId, commitId)
      .then((s) => {
        if (cancelled) return;
        setSummary(s);
        props.onFacts?.({ spans: s.spans?.spans ?? 0, edges: s.spans?.edges ?? 0 });
        if (!s.spans || s.spans.spans === 0 || s.spans.first_ns === null) setLoading(false);
        else {
          const whole = { start: s.spans.first_ns, end: Math.max(s.spans.last_ns ?? 0, s.spans.first_ns + 1) };
          const asked = props.initialView;
          // A range from a link is kept when it lies in the run; otherwise the whole run is shown.
          setView(asked && asked.start >= whole.start && asked.end <= whole.end && asked.end > asked.start ? asked : whole);
        }
      })
      .catch((e: unknown) => !cancelled && (setError(errorDocumentOf(e)), setLoading(false)));
    return () => {
      cancelled = true;
    };
  }, [runId, commitId]);

  // (Re)load spans when the view leaves what is loaded, or zooms into a window that was truncated.
  // Only the selected tracks' spans are read: a selection that shows a track not read yet reads again.
  const selectionKey = JSON.stringify(props.tracks ?? "all");
  const needsLoad = useMemo(() => {
    if (!view || !summary) return false;
    if (!data) return true;
    const outside = view.start < data.start_ns || view.end > data.end_ns;
    const finer = data.truncatedTracks.length > 0 && view.end - view.start < (data.end_ns - data.start_ns) * 0.6;
    const unread = tracksToLoad(summary.tracks, props.tracks ?? "all").some((t) => !data.trackIds.includes(t.track_id));
    return outside || finer || unread;
  }, [view, data, summary, selectionKey]);

  useEffect(() => {
    if (!needsLoad || !view || !summary) return;
    const signal = { cancelled: false };
    const timer = setTimeout(() => {
      setLoading(true);
      const span = view.end - view.start;
      // The first load, and one for a selection that shows tracks not read yet, read the whole run.
      const whole = full && (!data || tracksToLoad(summary.tracks, props.tracks ?? "all").some((t) => !data.trackIds.includes(t.track_id)));
      const start = whole ? full.start : Math.max(full?.start ?? view.start, view.start - span * 0.25);
      const end = whole ? full.end + 1 : Math.min((full?.end ?? view.end) + 1, view.end + span * 0.25);
      loadWindow(source, { runId, commitId, tracks: summary.tracks, selection: props.tracks ?? "all", start_ns: start, end_ns: end, budget: BUDGET, signal })
        .then((w) => {
          if (signal.cancelled) return;
          setData(w);
          setLoading(false);
          setOpenedMs((ms) => ms ?? performance.now() - opened.current);
        })
        .catch((e: unknown) => !signal.cancelled && (setError(errorDocumentOf(e)), setLoading(false)));
    }, data ? 200 : 0);
    return () => {
      signal.cancelled = true;
      clearTimeout(timer);
    };
  }, [needsLoad, view, summary]);

  useEffect(() => {
    if (!data || (summary?.spans?.edges ?? 0) === 0) return;
    let cancelled = false;
    loadFlows(source, runId, commitId, data.start_ns, data.end_ns)
      .then((f) => !cancelled && setFlows(f.flows))
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, [data, runId, commitId, summary]);

  // Back and Forward: the page's URL brings another visible range or selection; follow it (the whole run when it has none).
  const askedView = props.initialView ? `${Math.round(props.initialView.start)}..${Math.round(props.initialView.end)}` : "";
  const askedSelection = props.initialSelection ? `${Math.round(props.initialSelection.start)}..${Math.round(props.initialSelection.end)}` : "";
  useEffect(() => {
    if (!full) return;
    setView((v) => {
      const asked = props.initialView;
      const next = asked && asked.start >= full.start && asked.end <= full.end && asked.end > asked.start ? asked : full;
      return v && Math.round(v.start) === Math.round(next.start) && Math.round(v.end) === Math.round(next.end) ? v : next;
    });
  }, [askedView, full]);
  useEffect(() => {
    setSelection((s) => {
      const asked = props.initialSelection ?? null;
      if (!asked) return null;
      return s && Math.round(s.start) === Math.round(asked.start) && Math.round(s.end) === Math.round(asked.end) ? s : asked;
    });
  }, [askedSelection]);

  // Reported once the view settles (150 ms): a wheel zoom changes it every frame.
  useEffect(() => {
    if (!view || !full) return;
    const whole = Math.round(view.start) <= full.start && Math.round(view.end) >= full.end;
    const timer = setTimeout(() => props.onViewChange?.(whole ? null : view, selection), 150);
    return () => clearTimeout(timer);
  }, [view, selection, full]);

  // The track selector's choices (tracks with spans, busiest first) and the tracks it leaves shown.
  const trackChoices = useMemo<TrackChoice[]>(() => spanTrackChoices(summary?.tracks ?? []), [summary]);
  const shownKeys = useMemo(() => shownTrackKeys(trackChoices, props.tracks ?? "all"), [trackChoices, props.tracks]);
  const layout = useMemo(
    () => layoutTracks((summary?.tracks ?? []).filter((t) => shownKeys === null || shownKeys.has(t.track_key)), data?.spans ?? [], { collapsed, pinned }),
    [summary, data, collapsed, pinned, shownKeys],
  );
  // Search: loaded spans whose name or category holds the text, in time order, and tracks whose label does.
  const search = useMemo(() => {
    const q = query.trim().toLowerCase();
    if (!q || !data) return null;
    const spans = data.spans.filter((sp) => sp.name.toLowerCase().includes(q) || (sp.category ?? "").toLowerCase().includes(q)).sort((a, b) => a.start_ns - b.start_ns || a.track_id - b.track_id || a.depth - b.depth);
    const tracks = new Set(layout.tracks.filter((t) => t.label.toLowerCase().includes(q)).map((t) => t.track.track_id));
    return { spans, keys: new Set(spans.map((sp) => `${sp.generation_id}:${sp.span_id}`)), tracks };
  }, [query, data, layout]);
  const x = useMemo(() => scaleLinear().domain(view ? [view.start, view.end] : [0, 1]).range([gutter, width]), [view, width, gutter]);
  // Draw the tracks, spans, flows, selection and axis.
  const drawnRef = useRef(0);
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !view) return;
    const height = Math.min(MAX_CANVAS_HEIGHT, layout.height + 4);
    const ctx = hiDpiContext(canvas, width, height, { sizeElement: true });
    const dark = prefersDark();
    const css = getComputedStyle(canvas);
    const fg = css.getPropertyValue("--fg").trim() || "#1d2228";
    const muted = css.getPropertyValue("--fg-muted").trim() || "#5b6570";
    const border = css.getPropertyValue("--border").trim() || "#d9dde2";
    const bgRail = css.getPropertyValue("--bg-rail").trim() || "#f4f5f7";
    ctx.clearRect(0, 0, width, height);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    let drawn = 0;
    let markedDrawn = 0;
    let cut = 0;
    const accent = css.getPropertyValue("--accent").trim() || "#c2410c";
    const marked = props.marked;
    const colours = new Map<string, string>();
    /** One track's header and spans, `dy` below its place in the layout (pinned tracks: the scroll offset, to stay on top). */
    const drawRow = (row: (typeof layout.tracks)[number], dy: number) => {
      const ry = row.y + dy;
      ctx.fillStyle = search?.tracks.has(row.track.track_id) ? accent : bgRail;
        ctx.globalAlpha = search?.tracks.has(row.track.track_id) ? 0.25 : 1;
        ctx.fillRect(0, ry, width, TRACK_HEADER);
        ctx.globalAlpha = 1;
        ctx.fillStyle = fg;
        // ▸/▾ collapses (click the header), the pin on the right of the gutter keeps the track on top.
        ctx.fillText(row.collapsed ? "▸" : "▾", 6, ry + TRACK_HEADER / 2);
        ctx.font = "600 11px system-ui, sans-serif";
        const shown = fitLabel(ctx, row.label, gutter - PIN_BOX - 22);
        if (shown !== row.label) cut++;
        ctx.fillText(shown, 18, ry + TRACK_HEADER / 2);
        ctx.font = "11px system-ui, sans-serif";
        ctx.fillStyle = row.pinned ? accent : muted;
        ctx.fillText(row.pinned ? "● pin" : "○ pin", gutter - PIN_BOX, ry + TRACK_HEADER / 2);
        ctx.fillStyle = muted;
        if (!row.collapsed) ctx.fillText(fitText(ctx, `${row.track.spans.toLocaleString("en-US")} spans`, gutter - 16), 8, ry + TRACK_HEADER + 9);
        ctx.strokeStyle = border;
        ctx.beginPath();
        ctx.moveTo(0, ry + row.height - 0.5);
        ctx.lineTo(width, ry + row.height - 0.5);
        ctx.stroke();
        ctx.save();
        ctx.beginPath();
        ctx.rect(gutter, ry, width - gutter, row.height);
        ctx.clip();
        // Per depth, the last pixel filled: spans narrower than a pixel merge into one mark.
        const lastPx = new Float64Array(row.depth).fill(-1);
        for (const s of row.collapsed ? [] : row.spans) {
          const x0 = x(s.start_ns);
          const x1 = x(s.start_ns + s.dur_ns);
          if (x1 < gutter || x0 > width) continue;
          drawn++;
          const y = ry + TRACK_HEADER + s.depth * ROW;
          const w = x1 - x0;
          const critical = marked?.has(`${s.generation_id}:${s.span_id}`) ?? false;
          if (w < 1 && !critical) {
            if (Math.floor(x0) <= lastPx[s.depth]) continue;
            lastPx[s.depth] = Math.floor(x0);
          }
          let colour = colours.get(s.name);
          if (!colour) colours.set(s.name, (colour = colourFor(s.name, dark)));
          ctx.fillStyle = colour;
          const selected = picked && picked.span_id === s.span_id && picked.generation_id === s.generation_id;
          // A search dims what does not match, as the flame graph does.
          ctx.globalAlpha = search && !search.keys.has(`${s.generation_id}:${s.span_id}`) ? 0.2 : 1;
          ctx.fillRect(Math.max(gutter, x0), y, Math.max(1, Math.min(x1, width) - Math.max(gutter, x0) - (w > 3 ? 1 : 0)), ROW - 2);
          ctx.globalAlpha = 1;
          if (critical) {
            // The critical path: an outline and a bar under the span.
            const left = Math.max(gutter, x0);
            const right = Math.max(left + 2, Math.min(x1, width));
            ctx.strokeStyle = accent;
            ctx.lineWidth = 1.5;
            ctx.strokeRect(left + 0.75, y + 0.75, right - left - 1.5, ROW - 3.5);
            ctx.fillStyle = accent;
            ctx.fillRect(left, y + ROW - 5, right - left, 3);
            ctx.lineWidth = 1;
            markedDrawn++;
          }
          if (selected) {
            ctx.strokeStyle = fg;
            ctx.lineWidth = 2;
            ctx.strokeRect(Math.max(gutter, x0) + 1, y + 1, Math.max(1, Math.min(x1, width) - Math.max(gutter, x0) - 2), ROW - 4);
            ctx.lineWidth = 1;
          }
          if (w > 28) {
            ctx.fillStyle = dark ? "#f3f4f6" : "#111827";
            const left = Math.max(gutter, x0) + 3;
            ctx.fillText(fitText(ctx, s.name, Math.min(x1, width) - left - 3), left, y + (ROW - 2) / 2);
          }
        }
        ctx.restore();
    };
    for (const row of layout.tracks) if (!row.pinned || stickyTop === 0) drawRow(row, 0);
    drawnRef.current = drawn;
    canvas.dataset.drawn = String(drawn);
    canvas.dataset.marked = String(markedDrawn);
    canvas.dataset.cutLabels = String(cut);
    // Flows: an arrow from the end of the source span to the start of the target.
    ctx.save();
    ctx.beginPath();
    ctx.rect(gutter, AXIS, width - gutter, height - AXIS);
    ctx.clip();
    ctx.strokeStyle = dark ? "#fbbf24" : "#b45309";
    ctx.fillStyle = ctx.strokeStyle;
    let arrows = 0;
    for (const f of flows) {
      const from = layout.tracks.find((t) => t.track.track_id === f.from_track_id);
      const to = layout.tracks.find((t) => t.track.track_id === f.to_track_id);
      if (!from || !to) continue;
      const x0 = x(f.from_end_ns);
      const x1 = x(f.to_start_ns);
      if ((x0 < gutter && x1 < gutter) || (x0 > width && x1 > width)) continue;
      const y0 = from.y + TRACK_HEADER + f.from_depth * ROW + ROW / 2;
      const y1 = to.y + TRACK_HEADER + f.to_depth * ROW + ROW / 2;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.bezierCurveTo(x0 + 30, y0, x1 - 30, y1, x1, y1);
      ctx.stroke();
      const angle = Math.atan2(0, 1);
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 7 * Math.cos(angle - 0.45), y1 - 7 * Math.sin(angle - 0.45));
      ctx.lineTo(x1 - 7 * Math.cos(angle + 0.45), y1 - 7 * Math.sin(angle + 0.45));
      ctx.closePath();
      ctx.fill();
      arrows++;
    }
    canvas.dataset.arrows = String(arrows);
    ctx.restore();
    // Selection (or the range being dragged).
    const sel = dragNow ?? selection;
    if (sel) {
      const a = Math.max(gutter, x(sel.start));
      const b = Math.min(width, x(sel.end));
      if (b > a) {
        ctx.fillStyle = dark ? "rgba(96,165,250,0.18)" : "rgba(37,99,235,0.12)";
        ctx.fillRect(a, AXIS, b - a, height - AXIS);
        ctx.strokeStyle = dark ? "#60a5fa" : "#2563eb";
        ctx.strokeRect(a + 0.5, AXIS + 0.5, b - a - 1, height - AXIS - 1);
      }
    }
    // Scrolled: the pinned tracks and the axis stay at the top of the track area, over the rest (Perfetto's pinned tracks).
    if (stickyTop > 0) {
      const band = layout.tracks.filter((r) => r.pinned);
      const bottom = band.reduce((b, r) => Math.max(b, r.y + r.height), AXIS);
      ctx.fillStyle = css.getPropertyValue("--bg").trim() || "#ffffff";
      ctx.fillRect(0, stickyTop, width, bottom);
      for (const row of band) drawRow(row, stickyTop);
      if (band.length) {
        ctx.fillStyle = border;
        ctx.fillRect(0, stickyTop + bottom - 2, width, 2);
      }
    }
    canvas.dataset.stickyTop = String(stickyTop);
    // Time axis (relative to the run's first span).
    const origin = full?.start ?? 0;
    ctx.save();
    ctx.translate(0, stickyTop);
    ctx.fillStyle = bgRail;
    ctx.fillRect(0, 0, width, AXIS);
    ctx.fillStyle = muted;
    ctx.strokeStyle = border;
    for (const t of x.ticks(Math.max(2, Math.floor((width - gutter) / 110)))) {
      const px = Math.round(x(t)) + 0.5;
      if (px < gutter) continue;
      ctx.beginPath();
      ctx.moveTo(px, AXIS - 6);
      ctx.lineTo(px, height);
      ctx.globalAlpha = 0.35;
      ctx.stroke();
      ctx.globalAlpha = 1;
      ctx.fillText(formatNs(t - origin), px + 3, AXIS / 2);
    }
    ctx.fillStyle = fg;
    ctx.fillText(`${formatNs(view.end - view.start)} visible`, 8, AXIS / 2);
    ctx.restore();
  }, [layout, view, width, x, flows, selection, dragNow, picked, full, props.marked, search, stickyTop]);

  // Minimap: span density of the whole run per track, with the visible window.
  useEffect(() => {
    const canvas = miniRef.current;
    if (!canvas || !full || !view) return;
    const h = 36;
    const ctx = hiDpiContext(canvas, width, h, { sizeElement: true });
    ctx.clearRect(0, 0, width, h);
    const mx = scaleLinear().domain([full.start, full.end]).range([gutter, width]);
    const bins = new Float64Array(Math.max(1, width - gutter));
    for (const s of data?.spans ?? []) {
      if (s.depth !== 0) continue;
      const a = Math.max(0, Math.floor(mx(s.start_ns) - gutter));
      const b = Math.min(bins.length - 1, Math.floor(mx(s.start_ns + s.dur_ns) - gutter));
      for (let i = a; i <= b; i++) bins[i]++;
    }
    const max = Math.max(1, ...bins);
    const dark = prefersDark();
    ctx.fillStyle = dark ? "#fb923c" : "#c2410c";
    for (let i = 0; i < bins.length; i++) {
      if (!bins[i]) continue;
      const bh = Math.max(1, (bins[i] / max) * (h - 6));
      ctx.globalAlpha = 0.55;
      ctx.fillRect(gutter + i, h - 3 - bh, 1, bh);
    }
    ctx.globalAlpha = 1;
    ctx.strokeStyle = dark ? "#60a5fa" : "#2563eb";
    ctx.lineWidth = 1.5;
    const a = mx(view.start);
    const b = mx(view.end);
    ctx.fillStyle = dark ? "rgba(96,165,250,0.15)" : "rgba(37,99,235,0.1)";
    ctx.fillRect(a, 1, Math.max(2, b - a), h - 2);
    ctx.strokeRect(a, 1, Math.max(2, b - a), h - 2);
    ctx.fillStyle = getComputedStyle(canvas).getPropertyValue("--fg-muted").trim() || "#5b6570";
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.fillText(`overview · ${formatNs(full.end - full.start)}`, 8, h / 2, gutter - 16);
  }, [full, view, width, data, gutter]);

  const clampView = useCallback(
    (v: View): View => {
      if (!full) return v;
      const span = Math.min(full.end - full.start, Math.max(1000, v.end - v.start));
      let start = v.start;
      if (start < full.start) start = full.start;
      if (start + span > full.end) start = full.end - span;
      return { start, end: start + span };
    },
    [full],
  );

  const zoom = useCallback(
    (factor: number, atPx?: number) => {
      setView((v) => {
        if (!v) return v;
        const at = atPx !== undefined ? x.invert(atPx) : (v.start + v.end) / 2;
        return clampView({ start: at - (at - v.start) * factor, end: at + (v.end - at) * factor });
      });
    },
    [x, clampView],
  );
  const pan = useCallback((fraction: number) => setView((v) => (v ? clampView({ start: v.start + (v.end - v.start) * fraction, end: v.end + (v.end - v.start) * fraction }) : v)), [clampView]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const rect = canvas.getBoundingClientRect();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan((e.shiftKey ? e.deltaY : e.deltaX) / 800);
      else zoom(Math.exp(e.deltaY / 400), e.clientX - rect.left);
    };
    canvas.addEventListener("wheel", onWheel, { passive: false });
    return () => canvas.removeEventListener("wheel", onWheel);
  }, [zoom, pan, summary]);

  // The sticky band's height (axis and pinned tracks), and a pointer's y in the layout: over the
  // band (drawn at the scroll offset) the band's own rows, elsewhere the scrolled ones.
  const bandBottom = useMemo(() => layout.tracks.reduce((b, r) => (r.pinned ? Math.max(b, r.y + r.height) : b), AXIS), [layout]);
  const layoutY = (py: number): number => (stickyTop > 0 && py >= stickyTop && py < stickyTop + bandBottom ? py - stickyTop : py);

  const spanAt = (px: number, rawY: number): Span | null => {
    const py = layoutY(rawY);
    const row = layout.tracks.find((t) => py >= t.y + TRACK_HEADER && py < t.y + t.height);
    if (!row) return null;
    const depth = Math.floor((py - row.y - TRACK_HEADER) / ROW);
    const t = x.invert(px);
    const slack = (x.invert(px + 2) - t) || 0;
    let best: Span | null = null;
    for (const s of row.spans) {
      if (s.depth === depth && s.start_ns - slack <= t && s.start_ns + s.dur_ns + slack >= t) best = s;
      if (s.start_ns > t + slack) break;
    }
    return best;
  };

  /** A click on a track's header: the pin toggles pinning, elsewhere it collapses or expands the track. */
  const onHeader = (px: number, rawY: number): boolean => {
    const py = layoutY(rawY);
    const row = layout.tracks.find((t) => py >= t.y && py < t.y + TRACK_HEADER);
    if (!row || px >= gutter) return false;
    const id = row.track.track_id;
    const flip = (set: ReadonlySet<number>) => {
      const next = new Set(set);
      if (!next.delete(id)) next.add(id);
      return next;
    };
    if (px >= gutter - PIN_BOX - 4) setPinned(flip);
    else setCollapsed(flip);
    return true;
  };

  const onMouseDown = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - rect.left;
    if (px < gutter) {
      onHeader(px, e.clientY - rect.top);
      return;
    }
    drag.current = { x0: px, t0: x.invert(px), moved: false };
  };
  const onMouseMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - rect.left;
    const py = e.clientY - rect.top;
    pointerPx.current = px >= gutter ? px : null;
    const header = px < gutter ? layout.tracks.find((t) => layoutY(py) >= t.y && layoutY(py) < t.y + TRACK_HEADER) : undefined;
    setHeaderTitle(header ? `${header.label} — ${header.track.spans.toLocaleString("en-US")} spans · click to ${header.collapsed ? "expand" : "collapse"}` : null);
    if (drag.current) {
      if (Math.abs(px - drag.current.x0) > 3) drag.current.moved = true;
      if (drag.current.moved) {
        const t = x.invert(Math.max(gutter, Math.min(width, px)));
        setDragNow({ start: Math.min(t, drag.current.t0), end: Math.max(t, drag.current.t0) });
      }
      return;
    }
    const s = px >= gutter ? spanAt(px, py) : null;
    setHover(s ? { span: s, x: px, y: py } : null);
  };
  const onMouseUp = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const d = drag.current;
    drag.current = null;
    if (!d) return;
    const rect = e.currentTarget.getBoundingClientRect();
    if (d.moved && dragNow) {
      setSelection(dragNow);
      setDragNow(null);
      return;
    }
    setPicked(spanAt(e.clientX - rect.left, e.clientY - rect.top));
  };

  /** Dragging the label column's edge widens or narrows it (double-click: wide enough for the longest label). */
  const onResizeStart = (e: React.MouseEvent) => {
    e.preventDefault();
    resizing.current = { x0: e.clientX, g0: gutter };
    const move = (ev: MouseEvent) => resizing.current && setGutter(resizing.current.g0 + ev.clientX - resizing.current.x0);
    const up = () => {
      resizing.current = null;
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
    };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  };
  const fitLabels = () => {
    const ctx = canvasRef.current?.getContext("2d");
    if (!ctx) return;
    ctx.font = "600 11px system-ui, sans-serif";
    setGutter(Math.ceil(Math.max(...layout.tracks.map((t) => ctx.measureText(t.label).width), 0)) + PIN_BOX + 30);
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    const k = e.key.toLowerCase();
    // W/S zoom around the pointer when it rests on the timeline (Perfetto's keys), else around the middle.
    if (k === "w" || k === "+" || k === "=") zoom(0.7, pointerPx.current ?? undefined);
    else if (k === "s" || k === "-") zoom(1 / 0.7, pointerPx.current ?? undefined);
    else if (k === "a" || e.key === "ArrowLeft") pan(-0.2);
    else if (k === "d" || e.key === "ArrowRight") pan(0.2);
    else if (k === "z" && selection) setView(clampView(selection));
    else if (e.key === "Escape") {
      if (selection) setSelection(null);
      else if (full) setView(full);
    } else return;
    e.preventDefault();
  };

  /** Steps to the next (+1) or previous (−1) match: selects it, brings it into view (zoom kept unless it is wider) and scrolls its track to it. */
  const stepMatch = (direction: 1 | -1) => {
    if (!search || search.spans.length === 0) return;
    const n = search.spans.length;
    const next = matchIndex < 0 ? (direction > 0 ? 0 : n - 1) : (matchIndex + direction + n) % n;
    const s = search.spans[next];
    setMatchIndex(next);
    setPicked(s);
    setView((v) => {
      if (!v) return v;
      const visible = Math.max(v.end - v.start, s.dur_ns * 1.2);
      if (s.start_ns >= v.start && s.start_ns + s.dur_ns <= v.end) return v;
      const mid = s.start_ns + s.dur_ns / 2;
      return clampView({ start: mid - visible / 2, end: mid + visible / 2 });
    });
    const row = layout.tracks.find((t) => t.track.track_id === s.track_id);
    const box = scrollRef.current;
    if (row && box) {
      const y = row.y + TRACK_HEADER + s.depth * ROW;
      if (y < box.scrollTop || y > box.scrollTop + box.clientHeight - ROW) box.scrollTop = Math.max(0, y - box.clientHeight / 3);
    }
  };

  const onMinimap = (e: React.MouseEvent<HTMLCanvasElement>) => {
    if (!full || !view || (e.type === "mousemove" && e.buttons !== 1)) return;
    const rect = e.currentTarget.getBoundingClientRect();
    const mx = scaleLinear().domain([full.start, full.end]).range([gutter, width]);
    const center = mx.invert(e.clientX - rect.left);
    const half = (view.end - view.start) / 2;
    setView(clampView({ start: center - half, end: center + half }));
  };

  const inSelection = useMemo(() => {
    if (!selection || !data) return [];
    return data.spans.filter((s) => s.start_ns < selection.end && s.start_ns + s.dur_ns >= selection.start).sort((a, b) => b.dur_ns - a.dur_ns);
  }, [selection, data]);

  const spanCount = data?.spans.length ?? 0;
  const totalSpans = summary?.spans?.spans ?? 0;
  const state = error ? "error" : !summary ? "loading" : totalSpans === 0 ? "empty" : loading && !data ? "loading" : "ready";
  const trackName = (id: number) => layout.tracks.find((t) => t.track.track_id === id)?.label ?? `track ${id}`;
  const origin = full?.start ?? 0;

  return (
    <section
      className="trace-window"
      data-testid="trace-window"
      data-state={state}
      data-span-count={spanCount}
      data-track-count={layout.tracks.length}
      data-opened-ms={openedMs !== null ? Math.round(openedMs) : undefined}
      data-view={view ? `${Math.round(view.start)}..${Math.round(view.end)}` : undefined}
      data-selection={selection ? `${Math.round(selection.start)}..${Math.round(selection.end)}` : undefined}
      data-picked={picked ? `${picked.generation_id}:${picked.span_id}` : undefined}
      data-pinned={[...pinned].join(",") || undefined}
      data-collapsed={[...collapsed].join(",") || undefined}
    >
      {/* Two fixed rows, each on one line at any width from 1024 px: what is loaded, then the controls (nothing moves while spans load or a search is typed). */}
      <div className="trace-toolbar trace-facts">
        <span className="muted">
          commit <code data-testid="trace-commit">{summary?.commit_id ?? commitId}</code>
        </span>
        {summary && totalSpans > 0 ? (
          <span data-testid="trace-counts">
            <strong>{spanCount.toLocaleString("en-US")}</strong> of {totalSpans.toLocaleString("en-US")} spans loaded · {layout.tracks.length}
            {shownKeys ? ` of ${trackChoices.length}` : ""} track{layout.tracks.length === 1 && !shownKeys ? "" : "s"} ·{" "}
            {(summary.spans?.edges ?? 0).toLocaleString("en-US")} edges{flows.length ? ` (${flows.length} flows drawn)` : ""}
            {data && data.truncatedTracks.length ? <span className="muted"> · zoom in to load the rest</span> : null}
          </span>
        ) : null}
        <span className="muted trace-loading-note" aria-live="polite">{loading && summary ? "loading spans…" : ""}</span>
      </div>
      <div className="trace-toolbar trace-controls" role="toolbar" aria-label="Trace window controls">
        {props.toolbar}
        {summary && totalSpans > 0 && props.onTracksChange ? (
          <TrackSelector choices={trackChoices} covered={shownKeys === null ? trackChoices.map((t) => t.track_key) : [...shownKeys]} selection={props.tracks ?? "all"} onChange={props.onTracksChange} unit="count" metric="spans" />
        ) : null}
        {summary && totalSpans > 0 ? (
          <span className="trace-search" role="search">
            <input
              type="search"
              value={query}
              placeholder="Search spans and tracks"
              aria-label="Search spans and tracks"
              onChange={(e) => {
                setQuery(e.target.value);
                setMatchIndex(-1);
              }}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  stepMatch(e.shiftKey ? -1 : 1);
                }
              }}
              data-testid="trace-search"
            />
            <button type="button" onClick={() => stepMatch(-1)} disabled={!search?.spans.length} aria-label="Previous match" data-testid="trace-search-prev">
              ‹
            </button>
            <button type="button" onClick={() => stepMatch(1)} disabled={!search?.spans.length} aria-label="Next match" data-testid="trace-search-next">
              ›
            </button>
            <span className="muted num trace-search-count" data-testid="trace-search-count" aria-live="polite">
              {search ? `${matchIndex >= 0 ? matchIndex + 1 : 0} / ${search.spans.length.toLocaleString("en-US")}${search.tracks.size ? ` · ${search.tracks.size} track${search.tracks.size === 1 ? "" : "s"}` : ""}` : ""}
            </span>
          </span>
        ) : null}
        <span className="spacer" />
        {view ? (
          <span className="trace-buttons">
            <button type="button" onClick={() => zoom(0.6)} aria-label="Zoom in">
              +
            </button>
            <button type="button" onClick={() => zoom(1 / 0.6)} aria-label="Zoom out">
              −
            </button>
            <button type="button" onClick={() => full && setView(full)}>
              Reset
            </button>
            {selection ? (
              <button type="button" onClick={() => setView(clampView(selection))}>
                Zoom to selection
              </button>
            ) : null}
          </span>
        ) : null}
      </div>
      {error ? <ErrorPanel error={error} command={`npx emberscope trace window ${runId}`} /> : null}
      {state === "empty" ? (
        <div className="empty" data-testid="trace-empty">
          <strong>This run has no spans in commit {summary?.commit_id}.</strong> The trace window shows timed spans (Chrome trace JSON, OTLP/JSON, agent traces). A sampled profile
          is better read as a flame graph (<code>?view=flame</code>); to get spans, import a trace: <span className="command mono">npx emberscope import trace.json</span>, or
          capture with the <code>node-trace</code> adapter.
        </div>
      ) : null}
      {state === "loading" ? <p className="muted" data-testid="trace-loading">Loading the run&apos;s tracks and spans…</p> : null}
      {summary && totalSpans > 0 ? (
        <div className={`trace-dock-layout${picked || selection ? " has-details" : ""}`}>
        <div className="trace-body" ref={wrapRef}>
          <canvas ref={miniRef} className="trace-minimap" data-testid="trace-minimap" onMouseDown={onMinimap} onMouseMove={onMinimap} aria-label="Overview: click or drag to move the visible window" />
          <div className="trace-scroll" ref={scrollRef} onScroll={(e) => setStickyTop(Math.max(0, Math.round(e.currentTarget.scrollTop)))} data-testid="trace-scroll">
            <canvas
              ref={canvasRef}
              className="trace-canvas"
              data-testid="trace-canvas"
              tabIndex={0}
              role="img"
              aria-label={`Trace timeline: ${spanCount} spans on ${layout.tracks.length} tracks. Drag to select a range; W/S zoom, A/D pan, Esc resets.`}
              onMouseDown={onMouseDown}
              onMouseMove={onMouseMove}
              onMouseUp={onMouseUp}
              title={headerTitle ?? undefined}
              data-gutter={gutter}
              onMouseLeave={() => {
                pointerPx.current = null;
                setHeaderTitle(null);
                setHover(null);
                if (drag.current?.moved && dragNow) setSelection(dragNow);
                drag.current = null;
                setDragNow(null);
              }}
              onKeyDown={onKeyDown}
            />
            <div
              className="trace-gutter-handle"
              style={{ left: gutter - 3 }}
              role="separator"
              aria-orientation="vertical"
              aria-label="Track label width: drag to resize, double-click to fit the longest label"
              title="Drag to resize the track labels; double-click to fit the longest"
              onMouseDown={onResizeStart}
              onDoubleClick={fitLabels}
              data-testid="trace-gutter-handle"
            />
            {hover ? (
              <div className="trace-tooltip" style={{ left: Math.min(hover.x + 12, width - 280), top: hover.y + 14 }} data-testid="trace-tooltip">
                <div className="tt-name">{hover.span.name}</div>
                <div className="num">
                  {formatNs(hover.span.dur_ns)} · at {formatNs(hover.span.start_ns - origin)}
                </div>
                <div className="muted">
                  {trackName(hover.span.track_id)} · depth {hover.span.depth}
                  {hover.span.category ? ` · ${hover.span.category}` : ""}
                </div>
              </div>
            ) : null}
          </div>
          <p className="muted trace-help">Drag across the timeline to select a range · wheel or W/S to zoom around the pointer · shift+wheel, A/D or the overview to pan · Z zooms to the selection · Esc resets · click a track&apos;s header to collapse it, its pin to keep it on top · Enter in the search steps through matches</p>
        </div>
        {/* The details dock beside the timeline on wide screens, right under it on narrow ones: never below all the tracks. */}
        {picked || selection ? (
          <aside className="trace-details" data-testid="trace-details" aria-label="Details">
          {picked ? (
            <div className="trace-picked" data-testid="trace-picked">
              <strong>{picked.name}</strong> <span className="num">{formatNs(picked.dur_ns)}</span> at <span className="num">{formatNs(picked.start_ns - origin)}</span> on {trackName(picked.track_id)}
              {picked.category ? <> · category {picked.category}</> : null}
              {picked.status ? <> · status {picked.status}</> : null}
              {props.marked?.has(`${picked.generation_id}:${picked.span_id}`) ? <> · on the critical path</> : null}
              {picked.args ? <pre className="mono">{picked.args.slice(0, 800)}</pre> : null}
            </div>
          ) : null}
          {selection ? (
            <div className="trace-selection" data-testid="trace-selection">
              <h3>
                Selection {formatNs(selection.start - origin)} – {formatNs(selection.end - origin)} <span className="muted">({formatNs(selection.end - selection.start)})</span>
              </h3>
              <div className="trace-selection-grid">
                <div>
                  <h4>Samples in the range</h4>
                  <RangeFlame runId={runId} commitId={commitId} start={selection.start} end={selection.end} />
                </div>
                <div>
                  <h4>
                    Spans in the range <span className="muted" data-testid="trace-selection-count">({inSelection.length.toLocaleString("en-US")})</span>
                  </h4>
                  <div className="trace-span-list">
                    <table className="data">
                      <thead>
                        <tr>
                          <th>Span</th>
                          <th className="num">Duration</th>
                          <th className="num">Start</th>
                          <th>Track</th>
                        </tr>
                      </thead>
                      <tbody>
                        {inSelection.slice(0, 300).map((s) => (
                          <tr key={`${s.generation_id}:${s.span_id}`} onClick={() => setPicked(s)} className={picked?.span_id === s.span_id ? "picked" : undefined}>
                            <td className="wide" title={s.name}>
                              {s.name}
                            </td>
                            <td className="num">{formatNs(s.dur_ns)}</td>
                            <td className="num">{formatNs(s.start_ns - origin)}</td>
                            <td title={trackName(s.track_id)}>{trackName(s.track_id)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                    {inSelection.length > 300 ? <p className="muted">The 300 longest of {inSelection.length.toLocaleString("en-US")} are listed; narrow the selection to see the rest.</p> : null}
                  </div>
                </div>
              </div>
            </div>
          ) : null}
          </aside>
        ) : null}
        </div>
      ) : null}
    </section>
  );
}

/** A track label in `room` pixels: a long process name is cut before the thread's name, which stays whole when it fits ("renderer process for https://… · CrRendererMain"). */
function fitLabel(ctx: CanvasRenderingContext2D, label: string, room: number): string {
  if (ctx.measureText(label).width <= room) return label;
  const cut = label.lastIndexOf(" · ");
  if (cut > 0) {
    const thread = label.slice(cut);
    const left = room - ctx.measureText(thread).width;
    if (left > 40) return fitText(ctx, label.slice(0, cut), left) + thread;
    // Too narrow for both: the thread's name alone (the title has the whole label).
    return fitText(ctx, label.slice(cut + 3), room);
  }
  return fitText(ctx, label, room);
}
