import { z } from "zod";
import { TransformList } from "../../queries/transforms";

/**
 * What a cell kind is: its name, a title for people, whether it reads evidence (and so pins a
 * commit), and the zod schema of its content. `runs` lists the runs its content names, so the
 * server can check they are visible in the cell's commit; `records` the hypothesis or finding it
 * shows. One file per kind in this folder; index.ts collects them.
 */
export interface CellKindDef<K extends string = string, C extends z.ZodType = z.ZodType> {
  kind: K;
  title: string;
  readsEvidence: boolean;
  content: C;
  runs?: (content: z.output<C>) => string[];
  records?: (content: z.output<C>) => { hypotheses?: string[]; findings?: string[] };
}

export function defineCellKind<K extends string, C extends z.ZodType>(def: CellKindDef<K, C>): CellKindDef<K, C> {
  return def;
}

/** Ids as the content names them (records check they exist; the shape is only bounded here). */
export const RunRef = z.string().min(1).max(128).describe("A run id (run_…).");
export const MetricName = z.string().min(1).max(128).describe("A metric name; the run's primary metric when absent.");
/** A flame-tree node id, as `evidence.flame_tree` gives them. */
export const NodeRef = z.string().min(1).max(256);
export const FrameKeyRef = z.string().regex(/^[0-9a-f]{16}$/, "expected a 16-hex frame_key");
export const SearchText = z.string().max(500);
/** The threads/processes/profiles a sample cell shows (analysis/queries/tracks.ts); absent: every track merged. */
export const TrackChoiceRef = z
  .union([z.enum(["all", "busiest"]), z.array(z.string().regex(/^[0-9a-f]{12}$/, "expected a 12-hex track_key")).min(1).max(1000)])
  .describe('The tracks shown: "all" (merged; also when absent), "busiest", or track_key values.');

/** A time range in nanoseconds from the run's origin: [start_ns, end_ns), start before end. */
export const NsRange = z
  .tuple([z.number().int(), z.number().int()])
  .refine(([start, end]) => end > start, "end_ns must be after start_ns")
  .describe("[start_ns, end_ns]");

/** The call-tree transforms a sample cell applies, in order (the run page's chips; analysis/queries/transforms.ts); absent: none. */
export const TransformsRef = TransformList.describe("Call-tree transforms applied in order, as evidence.flame_tree takes them.");
/** Whether a tree cell shows the inverted tree (after the transforms). */
export const InvertedRef = z.boolean().describe("The inverted call tree: leaf functions at the roots.");
