import type { EvidenceBuilder } from "../evidence/builder";
import { FIELD_LIMITS } from "../evidence/schema";

/**
 * Depth of each span of a trace whose parents are known by index: a parent on the same track nests
 * it; a parent elsewhere (or none) makes it a root of its track. Iterative (traces can be deep);
 * a parent cycle is cut where it closes (`parentOf` is changed there) and reported by `onCycle`.
 */
export function spanDepths(trackOf: ArrayLike<number>, parentOf: Int32Array, onCycle: () => void): Int32Array {
  const n = parentOf.length;
  const depth = new Int32Array(n).fill(-1);
  const walk = new Int32Array(n).fill(-1);
  const chain: number[] = [];
  for (let i = 0; i < n; i++) {
    let at = i;
    while (depth[at] < 0) {
      const parent = parentOf[at];
      if (parent < 0 || trackOf[parent] !== trackOf[at]) {
        depth[at] = 0;
        break;
      }
      walk[at] = i;
      if (walk[parent] === i) {
        onCycle();
        parentOf[at] = -1;
        depth[at] = 0;
        break;
      }
      chain.push(at);
      at = parent;
    }
    while (chain.length > 0) {
      const child = chain.pop()!;
      depth[child] = depth[parentOf[child]] + 1;
    }
  }
  return depth;
}

/**
 * A span's args as JSON text within the schema's bound, rather than cut mid-token: first the list
 * under `listKey` goes (its length kept as `<prefix>.<list>_dropped`), then long strings and large
 * values are shortened, then later keys are left out (`<prefix>.truncated`). `limit` names the
 * importer's limitation code and what its args hold.
 */
export function boundedSpanArgs(builder: EvidenceBuilder, args: Record<string, unknown>, spec: { listKey: string; code: string; message: string }): string {
  const limit = FIELD_LIMITS.args;
  let text = JSON.stringify(args);
  if (text.length <= limit) return text;
  builder.limit(spec.code, spec.message);
  const smaller: Record<string, unknown> = { ...args };
  const list = smaller[spec.listKey];
  if (Array.isArray(list)) {
    smaller[`${spec.listKey}_dropped`] = list.length;
    delete smaller[spec.listKey];
  }
  for (const [key, value] of Object.entries(smaller)) {
    if (typeof value === "string" && value.length > 256) smaller[key] = `${value.slice(0, 256)}…`;
    else if (typeof value === "object" && value !== null && JSON.stringify(value).length > 1024) smaller[key] = "[too large]";
  }
  text = JSON.stringify(smaller);
  if (text.length <= limit) return text;
  const kept: Record<string, unknown> = { [`${spec.listKey.split(".")[0]}.truncated`]: true };
  let size = JSON.stringify(kept).length;
  for (const [key, value] of Object.entries(smaller)) {
    const entry = JSON.stringify({ [key]: value }).length;
    if (size + entry > limit) break;
    kept[key] = value;
    size += entry;
  }
  return JSON.stringify(kept);
}

/**
 * A trace's spans linked by their own ids: a span id each (the first of a duplicated id is the one
 * referred to), each span's parent index (-1 for none; a parent not in the file makes a root), and
 * depths, and each id's span index. `prefix` names the importer's limitations (`<prefix>_DUPLICATE_SPAN`, `_PARENT_MISSING`,
 * `_PARENT_CYCLE`); `refersTo` says what refers to span ids in its format.
 */
export function linkSpans(
  builder: EvidenceBuilder,
  spans: readonly { key: string | null; parentKey: string | null; trackId: number }[],
  spec: { prefix: string; refersTo: string },
): { spanIds: number[]; parentOf: Int32Array; depths: Int32Array; indexByKey: Map<string, number> } {
  const indexByKey = new Map<string, number>();
  const spanIds = spans.map((span, i) => {
    if (span.key !== null) {
      if (indexByKey.has(span.key)) builder.limit(`${spec.prefix}_DUPLICATE_SPAN`, `Some span ids appeared more than once; ${spec.refersTo} refer to the first.`);
      else indexByKey.set(span.key, i);
    }
    return builder.allocateSpanId();
  });
  const parentOf = new Int32Array(spans.length).fill(-1);
  spans.forEach((span, i) => {
    if (span.parentKey === null) return;
    const parent = indexByKey.get(span.parentKey);
    if (parent === undefined) builder.limit(`${spec.prefix}_PARENT_MISSING`, "Some spans' parents are not in the file; they are shown as roots (depth 0).");
    else if (parent !== i) parentOf[i] = parent;
  });
  const depths = spanDepths(
    spans.map((span) => span.trackId),
    parentOf,
    () => builder.limit(`${spec.prefix}_PARENT_CYCLE`, "Some spans were (indirectly) their own parents; the cycle was cut there."),
  );
  return { spanIds, parentOf, depths, indexByKey };
}
