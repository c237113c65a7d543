import { z } from "zod";
import { FrameColumns, GenerationList } from "./columns";
import { defineQuery, sqlLiteral, type EvidenceQuery } from "./define";
import { FRAME_INFO, METRIC, NODE_TOTALS } from "./fragments";
import { FlameNode, flameTreeQuery } from "./flame-tree";
import { HotspotRow } from "./hotspots";
import { NeighbourParams, NeighbourRow, StackExampleRow } from "./callers";

/**
 * Call-tree transforms, as Firefox Profiler's: each rewrites every sample's stack, and a list of
 * them applies in order (the second sees the first's output). Functions are named by frame_key;
 * a collapsed module becomes one frame whose key is moduleFrameKey(module), so later transforms
 * can name it too.
 */
const FrameKey = z.string().regex(/^[0-9a-f]{16}$/, "expected a 16-hex frame_key");

export const Transform = z.discriminatedUnion("type", [
  z.object({ type: z.literal("focus-function"), frame_key: FrameKey }).strict().describe("Only samples with the function; each stack starts at its outermost call."),
  z.object({ type: z.literal("focus-subtree"), path: z.array(FrameKey).min(1).max(256) }).strict().describe("Only samples under this call path (frame_keys from the root); stacks start at its last frame."),
  z.object({ type: z.literal("merge-function"), frame_key: FrameKey }).strict().describe("Remove the function from every stack: its self value goes to its caller (samples where it is the only frame are dropped)."),
  z.object({ type: z.literal("drop-function"), frame_key: FrameKey }).strict().describe("Drop every sample whose stack contains the function."),
  z.object({ type: z.literal("collapse-recursion"), frame_key: FrameKey }).strict().describe("Calls of the function inside another call of it (directly or through others) join the outermost call; the frames between are removed from those stacks."),
  z.object({ type: z.literal("collapse-direct-recursion"), frame_key: FrameKey }).strict().describe("Calls of the function made directly by itself join the calling call."),
  z.object({ type: z.literal("collapse-module"), module: z.string().min(1).max(1024) }).strict().describe("Consecutive frames of one module (library) become one frame named after it."),
]);
export type Transform = z.infer<typeof Transform>;

export const TransformList = z.array(Transform).max(32);

/** The most transforms a view stacks (each is one walk of the call tree). */
export const MAX_TRANSFORMS = 32;

/**
 * The frame_key of a collapsed module's frame: FNV-1a (64 bit) of "module:" + its name, as 16 hex.
 * Computed here, not in SQL, so the server and the browser name it alike.
 */
export function moduleFrameKey(module: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(`module:${module}`)) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}

// ---- URL codec: `tf=mf-KEY~ff-KEY~fs-KEY.KEY~df-KEY~rec-KEY~drec-KEY~cm-MODULE` (module URI-encoded) ----

export const TRANSFORM_URL_CODES = {
  "focus-function": "ff",
  "focus-subtree": "fs",
  "merge-function": "mf",
  "drop-function": "df",
  "collapse-recursion": "rec",
  "collapse-direct-recursion": "drec",
  "collapse-module": "cm",
} as const satisfies Record<Transform["type"], string>;
const CODES = TRANSFORM_URL_CODES;
const TYPES = Object.fromEntries(Object.entries(CODES).map(([type, code]) => [code, type])) as Record<string, Transform["type"]>;

export function formatTransforms(list: readonly Transform[]): string | null {
  if (list.length === 0) return null;
  return list
    .map((t) => {
      const code = CODES[t.type];
      if (t.type === "focus-subtree") return `${code}-${t.path.join(".")}`;
      if (t.type === "collapse-module") return `${code}-${encodeURIComponent(t.module).replaceAll("~", "%7E")}`;
      return `${code}-${t.frame_key}`;
    })
    .join("~");
}

/** The transforms a URL value names; what does not parse is left out (a hand-edited link shows the rest). */
export function parseTransforms(value: string | null | undefined): Transform[] {
  if (!value) return [];
  const out: Transform[] = [];
  for (const part of value.split("~").slice(0, MAX_TRANSFORMS)) {
    const dash = part.indexOf("-");
    const type = dash > 0 ? TYPES[part.slice(0, dash)] : undefined;
    if (!type) continue;
    const arg = part.slice(dash + 1);
    let draft: unknown;
    try {
      draft = type === "focus-subtree" ? { type, path: arg.split(".") } : type === "collapse-module" ? { type, module: decodeURIComponent(arg) } : { type, frame_key: arg };
    } catch {
      continue;
    }
    const parsed = Transform.safeParse(draft);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

// ---- SQL: each transform is one walk down the previous call tree, aggregated by path ----

/**
 * A call tree is rows (id, parent_id, frame_key, module, self): ids are path hashes as in
 * flame_tree (hash(frame_key) at a root, hash(parent path, frame_key) below), so a node a
 * transform leaves in place keeps its id. A transform's walk gives each input node the path it
 * lands on: its own (kept), an ancestor's (merged: its self goes there), or none (dropped); the
 * next tree is the walk grouped by path. Totals are summed from self values at the end, since a
 * transform moves samples between subtrees.
 */
function step(parentPath: string, frame: string): string {
  return `CASE WHEN ${parentPath} IS NULL THEN hash(${frame}) ELSE hash(${parentPath}, ${frame}) END`;
}

interface WalkRule {
  /** Root rows: extra WHERE, and the columns path, parent_path, out_frame, out_module, kept, st_flag, st_path, d. */
  rootWhere?: string;
  root: { path: string; kept: string; outFrame?: string; outModule?: string; flag?: string; stPath?: string };
  /** Child rows (c: input node, p: parent walk row): extra WHERE and the same columns. */
  childWhere?: string;
  child: { path: string; parentPath?: string; kept: string; outFrame?: string; outModule?: string; flag?: string; stPath?: string };
}

function ruleOf(t: Transform): WalkRule {
  const normal = step("p.path", "c.frame_key");
  switch (t.type) {
    case "merge-function": {
      const f = sqlLiteral(t.frame_key);
      return {
        root: { path: `CASE WHEN c.frame_key = ${f} THEN NULL ELSE hash(c.frame_key) END`, kept: `c.frame_key <> ${f}` },
        child: { path: `CASE WHEN c.frame_key = ${f} THEN p.path ELSE ${normal} END`, kept: `c.frame_key <> ${f}` },
      };
    }
    case "drop-function": {
      const f = sqlLiteral(t.frame_key);
      return { rootWhere: `c.frame_key <> ${f}`, root: { path: "hash(c.frame_key)", kept: "TRUE" }, childWhere: `c.frame_key <> ${f}`, child: { path: normal, kept: "TRUE" } };
    }
    case "focus-function": {
      const f = sqlLiteral(t.frame_key);
      return {
        root: { path: `CASE WHEN c.frame_key = ${f} THEN hash(c.frame_key) END`, kept: `c.frame_key = ${f}`, flag: `c.frame_key = ${f}` },
        child: {
          path: `CASE WHEN p.flag THEN ${normal} WHEN c.frame_key = ${f} THEN hash(c.frame_key) END`,
          parentPath: "CASE WHEN p.flag THEN p.path END",
          kept: `p.flag OR c.frame_key = ${f}`,
          flag: `p.flag OR c.frame_key = ${f}`,
        },
      };
    }
    case "focus-subtree": {
      const path = sqlLiteral(t.path);
      const last = t.path.length - 1;
      // d is the depth of the row: above the subtree's root, only the path's own frames are walked.
      return {
        rootWhere: `c.frame_key = ${sqlLiteral(t.path[0])}`,
        root: { path: last === 0 ? "hash(c.frame_key)" : "NULL::UBIGINT", kept: last === 0 ? "TRUE" : "FALSE" },
        childWhere: `(p.d >= ${last} OR c.frame_key = ${path}[p.d + 2])`,
        child: {
          path: `CASE WHEN p.d + 1 < ${last} THEN NULL WHEN p.d + 1 = ${last} THEN hash(c.frame_key) ELSE ${normal} END`,
          parentPath: `CASE WHEN p.d + 1 > ${last} THEN p.path END`,
          kept: `p.d + 1 >= ${last}`,
        },
      };
    }
    case "collapse-recursion": {
      const f = sqlLiteral(t.frame_key);
      // st_path: the path of the outermost call of the function above (null when none).
      return {
        root: { path: "hash(c.frame_key)", kept: "TRUE", stPath: `CASE WHEN c.frame_key = ${f} THEN hash(c.frame_key) END` },
        child: {
          path: `CASE WHEN c.frame_key = ${f} AND p.st_path IS NOT NULL THEN p.st_path ELSE ${normal} END`,
          kept: `NOT (c.frame_key = ${f} AND p.st_path IS NOT NULL)`,
          stPath: `coalesce(p.st_path, CASE WHEN c.frame_key = ${f} THEN ${normal} END)`,
        },
      };
    }
    case "collapse-direct-recursion": {
      const f = sqlLiteral(t.frame_key);
      return {
        root: { path: "hash(c.frame_key)", kept: "TRUE" },
        child: { path: `CASE WHEN c.frame_key = ${f} AND p.in_frame = ${f} THEN p.path ELSE ${normal} END`, kept: `NOT (c.frame_key = ${f} AND p.in_frame = ${f})` },
      };
    }
    case "collapse-module": {
      const m = sqlLiteral(t.module);
      const k = sqlLiteral(moduleFrameKey(t.module));
      const inModule = `coalesce(c.module = ${m}, FALSE)`;
      const inner = `(${inModule} AND coalesce(p.in_module = ${m}, FALSE))`;
      return {
        root: { path: `hash(CASE WHEN ${inModule} THEN ${k} ELSE c.frame_key END)`, kept: "TRUE", outFrame: `CASE WHEN ${inModule} THEN ${k} ELSE c.frame_key END` },
        child: {
          path: `CASE WHEN ${inner} THEN p.path WHEN ${inModule} THEN ${step("p.path", k)} ELSE ${normal} END`,
          kept: `NOT ${inner}`,
          outFrame: `CASE WHEN ${inModule} THEN ${k} ELSE c.frame_key END`,
        },
      };
    }
  }
}

/** The walk of tree `input` under one transform (CTE `walk`) and the tree it gives (CTE `output`). */
function transformCtes(t: Transform, input: string, walk: string, output: string): string {
  const r = ruleOf(t);
  const cols = (x: WalkRule["child"], isRoot: boolean) =>
    [
      "c.id",
      "c.frame_key AS in_frame",
      "c.module AS in_module",
      `(${x.path})::UBIGINT AS path`,
      `(${isRoot ? "NULL" : (x.parentPath ?? "p.path")})::UBIGINT AS parent_path`,
      `${x.outFrame ?? "c.frame_key"} AS out_frame`,
      `${x.outModule ?? "c.module"} AS out_module`,
      `(${x.kept}) AS kept`,
      `coalesce(${x.flag ?? "FALSE"}, FALSE) AS flag`,
      `(${x.stPath ?? "NULL"})::UBIGINT AS st_path`,
      `${isRoot ? "0" : "p.d + 1"} AS d`,
      "c.self",
    ].join(", ");
  return `${walk} AS (
  SELECT ${cols(r.root, true)} FROM ${input} c WHERE c.parent_id IS NULL${r.rootWhere ? ` AND ${r.rootWhere}` : ""}
  UNION ALL
  SELECT ${cols(r.child, false)} FROM ${walk} p JOIN ${input} c ON c.parent_id = p.id${r.childWhere ? ` WHERE ${r.childWhere}` : ""}
),
${output} AS MATERIALIZED (
  SELECT path AS id, any_value(parent_path) FILTER (WHERE kept) AS parent_id, any_value(out_frame) FILTER (WHERE kept) AS frame_key,
         any_value(out_module) FILTER (WHERE kept) AS module, sum(self) AS self
  FROM ${walk} WHERE path IS NOT NULL GROUP BY path
)`;
}

/**
 * CTEs ending in `tree_final` (id, parent_id, frame_key, module, self): the whole run's call tree
 * of the metric (stacks merged by path across generations, as flame_tree) with the transforms
 * applied in order, and `synthetic` (frame_key, name, module): the frames transforms made up.
 */
function transformedTreeCtes(transforms: readonly Transform[]): string {
  const ctes = [
    METRIC,
    NODE_TOTALS,
    `base_paths AS (
  SELECT n.generation_id, n.stack_id, n.frame_key, hash(n.frame_key) AS path_key, NULL::UBIGINT AS parent_path_key, n.self
  FROM node_totals n WHERE n.parent_stack_id IS NULL
  UNION ALL
  SELECT n.generation_id, n.stack_id, n.frame_key, hash(p.path_key, n.frame_key), p.path_key, n.self
  FROM base_paths p JOIN node_totals n ON n.generation_id = p.generation_id AND n.parent_stack_id = p.stack_id
)`,
    FRAME_INFO,
    `tree_0 AS MATERIALIZED (
  SELECT b.path_key AS id, any_value(b.parent_path_key) AS parent_id, any_value(b.frame_key) AS frame_key, any_value(fi.module) AS module, sum(b.self) AS self
  FROM base_paths b JOIN frame_info fi ON fi.frame_key = b.frame_key GROUP BY b.path_key
)`,
  ];
  transforms.forEach((t, i) => ctes.push(transformCtes(t, `tree_${i}`, `walk_${i + 1}`, `tree_${i + 1}`)));
  ctes.push(`tree_final AS (SELECT * FROM tree_${transforms.length})`);
  const modules = [...new Set(transforms.flatMap((t) => (t.type === "collapse-module" ? [t.module] : [])))];
  ctes.push(
    modules.length
      ? `synthetic AS (SELECT * FROM (VALUES ${modules.map((m) => `(${sqlLiteral(moduleFrameKey(m))}, ${sqlLiteral(m)}, ${sqlLiteral(m)})`).join(", ")}) v(frame_key, name, module))`
      : "synthetic AS (SELECT NULL::VARCHAR AS frame_key, NULL::VARCHAR AS name, NULL::VARCHAR AS module WHERE FALSE)",
  );
  return ctes.join(",\n");
}

/** Each node of the final tree with its depth, its path's node ids and frame_keys (root first), and whether its frame is its outermost call. */
const SHAPE_WALK = `shape AS (
  SELECT id, parent_id, frame_key, 0 AS depth, [id] AS ancestors, [frame_key] AS frames, TRUE AS outermost, self FROM tree_final WHERE parent_id IS NULL
  UNION ALL
  SELECT c.id, c.parent_id, c.frame_key, p.depth + 1, list_append(p.ancestors, c.id), list_append(p.frames, c.frame_key), NOT list_contains(p.frames, c.frame_key), c.self
  FROM shape p JOIN tree_final c ON c.parent_id = p.id
)`;

/** Totals of the final tree: each node's self summed into it and its ancestors (with depth and whether its frame is its outermost call). */
const SHAPE = `${SHAPE_WALK},
subtotals AS (
  SELECT a.id, sum(a.self) AS total FROM (SELECT unnest(ancestors) AS id, self FROM shape WHERE self <> 0) a GROUP BY a.id
),
node_values AS (
  SELECT s.id AS path_key, s.parent_id AS parent_path_key, s.frame_key, s.depth, s.outermost, s.self, coalesce(t.total, 0) AS total
  FROM shape s LEFT JOIN subtotals t ON t.id = s.id
)`;

/** The inverted tree of the final tree: roots are the leaf functions, below each its callers. */
const INVERTED = `inverted_walk AS (
  SELECT hash(n.frame_key) AS path, NULL::UBIGINT AS parent_path, n.frame_key, 0 AS depth, n.parent_id AS next_id, n.self AS value
  FROM tree_final n WHERE n.self <> 0
  UNION ALL
  SELECT hash(w.path, c.frame_key), w.path, c.frame_key, w.depth + 1, c.parent_id, w.value
  FROM inverted_walk w JOIN tree_final c ON c.id = w.next_id
),
node_values AS (
  SELECT path AS path_key, any_value(parent_path) AS parent_path_key, any_value(frame_key) AS frame_key, any_value(depth) AS depth,
         sum(value) AS total, sum(CASE WHEN next_id IS NULL THEN value ELSE 0 END) AS self
  FROM inverted_walk GROUP BY path
)`;

const NAMES = `names AS (
  SELECT frame_key, name, file, line, module, kind FROM frame_info
  UNION ALL
  SELECT frame_key, name, NULL, NULL, module, 'other' FROM synthetic
)`;

const TreeParams = z.object({ generations: GenerationList, metric: z.string().min(1).max(128), budget: z.number().int().min(1).max(200_000) });

function describeList(transforms: readonly Transform[], inverted: boolean): string {
  return `${transforms.map((t) => CODES[t.type]).join(",") || "none"}${inverted ? ",inverted" : ""}`;
}

/**
 * The flame tree of the whole run with transforms applied in order (then inverted, if asked),
 * pruned to the budget's largest nodes by total as flame_tree is (rows in flame_tree's shape;
 * addPrunedRemainders applies). With no transform and not inverted, flame_tree itself answers.
 */
export function transformedFlameTreeQuery(transforms: readonly Transform[], inverted: boolean): EvidenceQuery<typeof TreeParams, typeof FlameNode> {
  return defineQuery({
    name: "flame_tree_transformed",
    description: `Aggregated call tree with transforms (${describeList(transforms, inverted)}), pruned to a node budget.`,
    params: TreeParams,
    row: FlameNode,
    sql: `WITH RECURSIVE
${transformedTreeCtes(transforms)},
${inverted ? INVERTED : SHAPE},
kept AS (
  SELECT * FROM node_values WHERE total <> 0 ORDER BY total DESC, depth ASC, path_key ASC LIMIT $budget
),
${NAMES}
SELECT k.path_key::VARCHAR AS node_id, k.parent_path_key::VARCHAR AS parent_id, k.frame_key,
       n.name, n.file, n.line, n.module, n.kind, k.depth::INTEGER AS depth,
       k.self::DOUBLE AS self, k.total::DOUBLE AS total
FROM kept k JOIN names n ON n.frame_key = k.frame_key
ORDER BY k.depth, k.total DESC, k.path_key`,
  });
}

/**
 * The query a whole run's flame tree is asked by, in the server, an export's summaries and the
 * offline viewer alike: flame_tree (from the derived totals) when nothing is transformed, else
 * the transformed walk.
 */
export function wholeRunTreeQuery(transforms: readonly Transform[], inverted: boolean): EvidenceQuery<typeof TreeParams, typeof FlameNode> {
  return transforms.length > 0 || inverted ? transformedFlameTreeQuery(transforms, inverted) : flameTreeQuery;
}

const HotspotParams = z.object({
  generations: GenerationList,
  metric: z.string().min(1).max(128),
  after_self: z.number().nullable().default(null),
  after_key: z.string().nullable().default(null),
  limit: z.number().int().min(1).max(10_000),
});

/**
 * hotspots over the transformed tree: per function its self value and its total counted once
 * per sample (the nodes of its outermost calls), ranked and paged as hotspots is.
 */
export function transformedHotspotsQuery(transforms: readonly Transform[]): EvidenceQuery<typeof HotspotParams, typeof HotspotRow> {
  return defineQuery({
    name: "hotspots_transformed",
    description: `Functions by self value with transforms (${describeList(transforms, false)}).`,
    params: HotspotParams,
    row: HotspotRow,
    sql: `WITH RECURSIVE
${transformedTreeCtes(transforms)},
${SHAPE},
frame_values AS (
  SELECT frame_key, sum(self)::DOUBLE AS self, sum(CASE WHEN outermost THEN total ELSE 0 END)::DOUBLE AS total
  FROM node_values GROUP BY frame_key
),
grand AS (SELECT coalesce(sum(self), 0)::DOUBLE AS grand_total FROM tree_final),
${NAMES}
SELECT v.frame_key, n.name, n.file, n.line, n.module, n.kind, v.self, v.total,
       CASE WHEN g.grand_total > 0 THEN 100.0 * v.self / g.grand_total ELSE 0 END AS self_pct,
       CASE WHEN g.grand_total > 0 THEN 100.0 * v.total / g.grand_total ELSE 0 END AS total_pct,
       g.grand_total
FROM frame_values v JOIN names n ON n.frame_key = v.frame_key CROSS JOIN grand g
WHERE v.total <> 0
  AND ($after_self IS NULL OR v.self < $after_self OR (v.self = $after_self AND v.frame_key > $after_key))
ORDER BY v.self DESC, v.frame_key ASC
LIMIT $limit`,
  });
}

/**
 * The frame's samples in the transformed tree: each node with a self value whose path holds the
 * frame, with the positions (1-based, root first) of the frame's outermost and innermost calls.
 */
const THROUGH = `through AS (
  SELECT id, frames, self, list_position(frames, $frame_key) AS outer_at, len(frames) - list_position(list_reverse(frames), $frame_key) + 1 AS inner_at
  FROM shape WHERE self <> 0 AND list_contains(frames, $frame_key)
)`;

/**
 * A frame's direct neighbours over the transformed tree, each sample counted once, at one of the
 * frame's calls: `edge` names the neighbour from `frames` and the call's position (null: none).
 */
function transformedNeighboursQuery(name: string, description: string, transforms: readonly Transform[], edge: string): EvidenceQuery<typeof NeighbourParams, typeof NeighbourRow> {
  return defineQuery({
    name,
    description: description.replace("{list}", describeList(transforms, false)),
    params: NeighbourParams,
    row: NeighbourRow,
    sql: `WITH RECURSIVE
${transformedTreeCtes(transforms)},
${SHAPE_WALK},
${THROUGH},
edges AS (
  SELECT ${edge} AS frame_key, sum(self) AS value FROM through GROUP BY 1
),
${NAMES}
SELECT e.frame_key, coalesce(n.name, '(root)') AS name, n.file, n.line, n.module, coalesce(n.kind, 'program') AS kind, e.value::DOUBLE AS value
FROM edges e LEFT JOIN names n ON n.frame_key = e.frame_key
WHERE e.frame_key IS NOT NULL AND e.value > 0
ORDER BY value DESC, e.frame_key
LIMIT $limit`,
  });
}

/**
 * callers over the transformed tree: each sample counted once, at the frame's outermost call, so
 * the caller is the frame above it (or "(root)") — as callers reads the stored stacks.
 */
export function transformedCallersQuery(transforms: readonly Transform[]): EvidenceQuery<typeof NeighbourParams, typeof NeighbourRow> {
  return transformedNeighboursQuery("callers_transformed", "Direct callers of a frame with transforms ({list}); they add up to the frame's total.", transforms, "CASE WHEN outer_at = 1 THEN '(root)' ELSE frames[outer_at - 1] END");
}

/**
 * callees over the transformed tree: each sample counted once, at the frame's innermost call, so
 * the callee is the frame below it (samples where the frame is the leaf have none).
 */
export function transformedCalleesQuery(transforms: readonly Transform[]): EvidenceQuery<typeof NeighbourParams, typeof NeighbourRow> {
  return transformedNeighboursQuery("callees_transformed", "Direct callees of a frame with transforms ({list}); they add up to its total minus its self value.", transforms, "CASE WHEN inner_at < len(frames) THEN frames[inner_at + 1] END");
}

/** stack_examples over the transformed tree: its heaviest complete stacks (root first) through the frame. */
export function transformedStackExamplesQuery(transforms: readonly Transform[]): EvidenceQuery<typeof NeighbourParams, typeof StackExampleRow> {
  return defineQuery({
    name: "stack_examples_transformed",
    description: `Heaviest complete stacks (root first) that contain a frame, with transforms (${describeList(transforms, false)}).`,
    params: NeighbourParams,
    row: StackExampleRow,
    sql: `WITH RECURSIVE
${transformedTreeCtes(transforms)},
${SHAPE_WALK},
${THROUGH},
heaviest AS (
  SELECT id, frames, self FROM through WHERE self > 0 ORDER BY self DESC, id LIMIT $limit
),
${NAMES},
steps AS (
  SELECT h.id, h.self, unnest(h.frames) AS frame_key, generate_subscripts(h.frames, 1) AS at FROM heaviest h
)
SELECT s.self::DOUBLE AS value, list(n.name ORDER BY s.at) AS frames
FROM steps s JOIN names n ON n.frame_key = s.frame_key
GROUP BY s.id, s.self
ORDER BY value DESC, s.id`,
  });
}

// ---- time order under transforms: the transformed call-path tree, and where each stored stack lands on it ----

const TreeOnly = z.object({ generations: GenerationList, metric: z.string().min(1).max(128) });

export const TransformedPathNode = FrameColumns.extend({ node_id: z.string(), parent_id: z.string().nullable(), depth: z.number().int() });

/** Every node of the transformed call tree (unpruned), parents before children: time order's call-path tree under transforms. */
export function transformedPathTreeQuery(transforms: readonly Transform[]): EvidenceQuery<typeof TreeOnly, typeof TransformedPathNode> {
  return defineQuery({
    name: "path_tree_transformed",
    description: `The call-path tree with transforms (${describeList(transforms, false)}), every node, parents first.`,
    params: TreeOnly,
    row: TransformedPathNode,
    sql: `WITH RECURSIVE
${transformedTreeCtes(transforms)},
${SHAPE_WALK},
${NAMES}
SELECT s.id::VARCHAR AS node_id, s.parent_id::VARCHAR AS parent_id, s.frame_key, n.name, n.file, n.line, n.module, n.kind, s.depth::INTEGER AS depth
FROM shape s JOIN names n ON n.frame_key = s.frame_key
ORDER BY s.depth, s.id`,
  });
}

/**
 * Where each stored stack node of the generations lands in the transformed tree: the node of the
 * last transform's walk that its path reaches through every walk in turn (merged nodes land on an
 * ancestor's; dropped ones have no row). `g` is the generation's 0-based position in $generations.
 */
export function transformedStackMapQuery(transforms: readonly Transform[]): EvidenceQuery<typeof TreeOnly, z.ZodObject<{ g: z.ZodNumber; stack_id: z.ZodNumber; node_id: z.ZodString }>> {
  const joins = transforms.map((_, i) => `JOIN walk_${i + 1} w${i + 1} ON w${i + 1}.id = ${i === 0 ? "b.path_key" : `w${i}.path`}`).join("\n");
  const last = transforms.length ? `w${transforms.length}.path` : "b.path_key";
  return defineQuery({
    name: "stack_map_transformed",
    description: `Each stored stack's node in the call-path tree with transforms (${describeList(transforms, false)}).`,
    params: TreeOnly,
    row: z.object({ g: z.number().int(), stack_id: z.number().int(), node_id: z.string() }),
    sql: `WITH RECURSIVE
${transformedTreeCtes(transforms)}
SELECT (list_position($generations, b.generation_id) - 1)::INTEGER AS g, b.stack_id::INTEGER AS stack_id, (${last})::VARCHAR AS node_id
FROM base_paths b
${joins}
WHERE ${last} IS NOT NULL`,
  });
}
