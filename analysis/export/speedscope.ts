/**
 * A run's samples as a speedscope file (https://www.speedscope.app/file-format-schema.json), so
 * they can be opened in speedscope and the tools that read its format: shared frames, and one
 * "sampled" profile per track (root-first stacks of frame indices, one weight each), in time order
 * where the samples were timed. Values stay in the metric's unit; time in nanoseconds is written
 * as `nanoseconds`, bytes as `bytes`, anything else (counts, instructions) as `none`.
 */

export const SPEEDSCOPE_SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json";

export interface SpeedscopeFrame {
  name: string;
  file?: string;
  line?: number;
}

export interface SpeedscopeSampledProfile {
  type: "sampled";
  name: string;
  unit: SpeedscopeUnit;
  startValue: number;
  endValue: number;
  samples: number[][];
  weights: number[];
}

export type SpeedscopeUnit = "none" | "nanoseconds" | "microseconds" | "milliseconds" | "seconds" | "bytes";

export interface SpeedscopeFile {
  $schema: typeof SPEEDSCOPE_SCHEMA_URL;
  shared: { frames: SpeedscopeFrame[] };
  profiles: SpeedscopeSampledProfile[];
  name: string;
  activeProfileIndex: number;
  exporter: string;
}

export interface ExportFrame {
  g: number;
  frame_id: number;
  frame_key: string;
  name: string;
  file: string | null;
  line: number | null;
}

export interface ExportStack {
  g: number;
  stack_id: number;
  parent_stack_id: number | null;
  frame_id: number;
}

export interface ExportTrack {
  g: number;
  track_id: number;
  process_name: string | null;
  process_id: string | null;
  thread_name: string | null;
  thread_id: string | null;
}

export function speedscopeUnit(unit: string): SpeedscopeUnit {
  if (unit === "ns") return "nanoseconds";
  if (unit === "bytes") return "bytes";
  return "none";
}

/** A track's profile name: "process (pid) / thread (tid)", with what the track has of those. */
export function trackName(track: ExportTrack | undefined, fallback: string): string {
  if (!track) return fallback;
  const part = (name: string | null, id: string | null) => (name && id && name !== id ? `${name} (${id})` : (name ?? id));
  const names = [part(track.process_name, track.process_id), part(track.thread_name, track.thread_id)].filter((p): p is string => !!p);
  return names.length ? names.join(" / ") : fallback;
}

/**
 * Builds the file incrementally: frames and stacks first, then samples in the query's order
 * (generation, track, time). Consecutive samples of one stack in one profile become one sample with
 * their summed weight, which speedscope draws the same way.
 */
export class SpeedscopeWriter {
  private readonly frames: SpeedscopeFrame[] = [];
  private readonly frameIndexByKey = new Map<string, number>();
  /** (g, frame_id) → shared frame index */
  private readonly frameIndex = new Map<string, number>();
  /** (g, stack_id) → parent stack and frame index */
  private readonly stackNodes = new Map<string, { parent: number | null; frame: number; g: number }>();
  private readonly stackPaths = new Map<string, number[]>();
  private readonly profiles: SpeedscopeSampledProfile[] = [];
  private readonly tracks = new Map<string, ExportTrack>();
  private current: { key: string; profile: SpeedscopeSampledProfile; lastStack: string | null } | null = null;

  constructor(
    private readonly name: string,
    private readonly unit: SpeedscopeUnit,
    private readonly exporter: string,
  ) {}

  addFrame(frame: ExportFrame): void {
    let index = this.frameIndexByKey.get(frame.frame_key);
    if (index === undefined) {
      index = this.frames.length;
      this.frames.push({ name: frame.name, ...(frame.file ? { file: frame.file } : {}), ...(frame.line !== null && frame.line >= 0 ? { line: frame.line } : {}) });
      this.frameIndexByKey.set(frame.frame_key, index);
    }
    this.frameIndex.set(`${frame.g}:${frame.frame_id}`, index);
  }

  addStack(stack: ExportStack): void {
    const frame = this.frameIndex.get(`${stack.g}:${stack.frame_id}`);
    if (frame === undefined) throw new Error(`stack ${stack.stack_id} names frame ${stack.frame_id}, which generation ${stack.g} does not have`);
    this.stackNodes.set(`${stack.g}:${stack.stack_id}`, { parent: stack.parent_stack_id, frame, g: stack.g });
  }

  addTrack(track: ExportTrack): void {
    this.tracks.set(`${track.g}:${track.track_id}`, track);
  }

  /** The root-first frame indices of a stack node (walked once per node, then remembered). */
  private path(g: number, stackId: number): number[] {
    const key = `${g}:${stackId}`;
    const known = this.stackPaths.get(key);
    if (known) return known;
    const chain: string[] = [];
    let frames: number[] = [];
    for (let at: string | null = key; at !== null; ) {
      const cached = this.stackPaths.get(at);
      if (cached) {
        frames = cached.slice();
        break;
      }
      const node = this.stackNodes.get(at);
      if (!node) throw new Error(`sample names stack ${at}, which is not in the stacks table`);
      chain.push(at);
      if (chain.length > 100_000) throw new Error("stack deeper than 100000 frames (a cycle in the stacks table?)");
      at = node.parent === null ? null : `${node.g}:${node.parent}`;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      frames = [...frames, this.stackNodes.get(chain[i])!.frame];
      this.stackPaths.set(chain[i], frames);
    }
    return frames;
  }

  addSample(g: number, trackId: number | null, stackId: number, value: number): void {
    const key = `${g}:${trackId ?? "-"}`;
    if (this.current?.key !== key) {
      const profile: SpeedscopeSampledProfile = {
        type: "sampled",
        name: trackName(trackId === null ? undefined : this.tracks.get(key), this.name),
        unit: this.unit,
        startValue: 0,
        endValue: 0,
        samples: [],
        weights: [],
      };
      this.profiles.push(profile);
      this.current = { key, profile, lastStack: null };
    }
    const { profile } = this.current;
    const stackKey = `${g}:${stackId}`;
    if (this.current.lastStack === stackKey) profile.weights[profile.weights.length - 1] += value;
    else {
      profile.samples.push(this.path(g, stackId));
      profile.weights.push(value);
      this.current.lastStack = stackKey;
    }
    profile.endValue += value;
  }

  finish(): SpeedscopeFile {
    // Profiles of one name (the same thread in two generations) are told apart by their order.
    const seen = new Map<string, number>();
    for (const p of this.profiles) {
      const n = (seen.get(p.name) ?? 0) + 1;
      seen.set(p.name, n);
      if (n > 1) p.name = `${p.name} #${n}`;
    }
    let busiest = 0;
    this.profiles.forEach((p, i) => {
      if (p.endValue > this.profiles[busiest].endValue) busiest = i;
    });
    return { $schema: SPEEDSCOPE_SCHEMA_URL, shared: { frames: this.frames }, profiles: this.profiles, name: this.name, activeProfileIndex: busiest, exporter: this.exporter };
  }
}
