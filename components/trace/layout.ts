import type { Span, Track } from "./trace-data";

export const TRACK_HEADER = 20;
export const ROW = 17;
export const AXIS = 24;

export interface TrackLayout {
  track: Track;
  label: string;
  y: number;
  depth: number;
  height: number;
  spans: Span[];
  /** Shown as its header only. */
  collapsed: boolean;
  /** Kept at the top, above the other tracks. */
  pinned: boolean;
}

/** What the person did to the tracks: collapsed ones show their header only, pinned ones come first (in their order). */
export interface TrackChoices {
  collapsed?: ReadonlySet<number>;
  pinned?: ReadonlySet<number>;
}

export function trackLabel(t: Track): string {
  const proc = t.process_name ?? (t.process_id ? `pid ${t.process_id}` : null);
  const thread = t.thread_name ?? (t.thread_id ? `tid ${t.thread_id}` : null);
  return [proc, thread].filter(Boolean).join(" · ") || `${t.kind} ${t.track_id}`;
}

/** One row group per track with spans: a header, then one row per depth (none when collapsed); pinned tracks first. */
export function layoutTracks(tracks: Track[], spans: Span[], choices: TrackChoices = {}): { tracks: TrackLayout[]; height: number } {
  const byTrack = new Map<number, Span[]>();
  for (const s of spans) {
    let list = byTrack.get(s.track_id);
    if (!list) byTrack.set(s.track_id, (list = []));
    list.push(s);
  }
  let y = AXIS;
  const out: TrackLayout[] = [];
  const pinned = choices.pinned ?? new Set<number>();
  const ordered = [...tracks.filter((t) => pinned.has(t.track_id)), ...tracks.filter((t) => !pinned.has(t.track_id))];
  for (const track of ordered) {
    const mine = byTrack.get(track.track_id) ?? [];
    if (track.spans === 0 && mine.length === 0) continue;
    mine.sort((a, b) => a.start_ns - b.start_ns);
    const depth = mine.reduce((m, s) => Math.max(m, s.depth), 0) + 1;
    const collapsed = choices.collapsed?.has(track.track_id) ?? false;
    const height = collapsed ? TRACK_HEADER + 2 : TRACK_HEADER + depth * ROW + 6;
    out.push({ track, label: trackLabel(track), y, depth, height, spans: mine, collapsed, pinned: pinned.has(track.track_id) });
    y += height;
  }
  return { tracks: out, height: y };
}
