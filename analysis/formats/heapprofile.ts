/**
 * V8 sampling heap profile (`.heapprofile`: node --heap-prof, Chrome DevTools "Allocation
 * sampling"). `head` is the allocation call tree: each node's callFrame becomes a frame and its
 * root path a stack ("(root)" left out). Each node with selfSize > 0 becomes one aggregate sample
 * row (no time, no track) of `alloc_bytes`; nodes named by `samples` also get an `alloc_count` row.
 * Older profiles (Chrome 69, Node 10) have no node ids and no `samples`: their nodes get ids of
 * their own (negative, so that none is a real id) and alloc_count is unknown.
 */
import { int64 } from "../evidence/int64";
import type { JsonPath, JsonSelection, JsonValue } from "../io/json-stream";
import { parseJsonStream } from "../io/json-stream";
import { isJsonObject, V8NodeTree } from "./cpuprofile";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "heapprofile";

/** The call tree is small and built whole; `samples` (one per sampled allocation) streams. */
function selectHeapprofile(path: JsonPath): JsonSelection {
  if (path.length === 0) return "stream";
  if (path[0] === "head") return "materialize";
  if (path[0] === "samples") return path.length === 1 ? "stream" : "materialize";
  return "skip";
}

async function parseHeapprofile(ctx: ImportContext): Promise<void> {
  const { builder } = ctx;
  const state = { head: null as JsonValue | null, headOffset: 0, sawSamples: false, object: false };
  const sampleCounts = new Map<number, number>();

  await parseJsonStream(
    ctx.source.chunks(),
    {
      format: FORMAT,
      maxDepth: ctx.limits.maxDepth,
      select: (path) => {
        if (path.length > 0 && typeof path[0] === "string") state.object = true;
        if (path.length === 1 && path[0] === "samples") state.sawSamples = true;
        return selectHeapprofile(path);
      },
      onValue: (path, value, offset) => {
        if (path.length === 0) throw new EvidenceParseError(FORMAT, "the top-level value is not a heap profile object", { offset });
        if (path[0] === "head") {
          state.head = value;
          state.headOffset = offset;
          return;
        }
        if (!isJsonObject(value) || typeof value.nodeId !== "number") {
          throw new EvidenceParseError(FORMAT, "a sample lacks a numeric nodeId", { offset });
        }
        sampleCounts.set(value.nodeId, (sampleCounts.get(value.nodeId) ?? 0) + 1);
      },
    },
    () => builder.checkpoint(),
  );

  if (!state.object || !isJsonObject(state.head)) throw new EvidenceParseError(FORMAT, "the input is not a V8 heap profile (no `head`)", { offset: 0 });

  // Walk the tree without recursion; the JSON depth limit already bounds how deep it goes.
  const tree = new V8NodeTree(builder, FORMAT, ctx.limits.maxDepth);
  const selfSizes = new Map<number, number>();
  const pending: { node: JsonValue; parentId?: number }[] = [{ node: state.head }];
  let madeUpIds = 0;
  while (pending.length > 0) {
    const { node: value, parentId } = pending.pop() as { node: JsonValue; parentId?: number };
    const node = isJsonObject(value) && typeof value.id !== "number" ? { ...value, id: -++madeUpIds } : value;
    tree.add(node, state.headOffset, parentId);
    const { id, selfSize, children } = node as { id: number; selfSize?: JsonValue; children?: JsonValue };
    if (typeof selfSize === "number" && selfSize > 0) selfSizes.set(id, selfSize);
    if (Array.isArray(children)) for (let k = children.length - 1; k >= 0; k--) pending.push({ node: children[k], parentId: id });
  }

  const bytesMetric = builder.metric({ name: "alloc_bytes", unit: "bytes", kind: "sampled" });
  const countMetric = state.sawSamples ? builder.metric({ name: "alloc_count", unit: "count", kind: "sampled" }) : -1;
  let written = 0;
  for (const [nodeId, selfSize] of selfSizes) {
    builder.sample(tree.stackOf(nodeId) as number, null, null, bytesMetric, int64(selfSize, FORMAT, "selfSize", { offset: state.headOffset }));
    if (++written % 16_384 === 0) await builder.checkpoint();
  }
  for (const [nodeId, count] of sampleCounts) {
    const stack = tree.stackOf(nodeId);
    if (stack === undefined) builder.limit("UNKNOWN_NODE", "Some samples name a node that is not in the tree; they were not counted.");
    else builder.sample(stack, null, null, countMetric, count);
  }
  if (!state.sawSamples) builder.limit("NO_SAMPLES", "The profile has no samples array, so alloc_count is unknown.");
}

export const heapprofileImporter: FormatImporter = {
  id: "heapprofile",
  title: "V8 sampling heap profile (.heapprofile)",
  extensions: ["heapprofile"],
  version: "2",
  sniff(_head, headText, fileName) {
    const text = headText.trimStart();
    if (!text.startsWith("{")) return 0;
    const named = fileName !== null && fileName.toLowerCase().endsWith(".heapprofile");
    const looksLike = /"head"\s*:/.test(text) && /"callFrame"\s*:/.test(text) && /"selfSize"\s*:/.test(text);
    if (looksLike) return named ? 1 : 0.9;
    return named && /"head"\s*:/.test(text) ? 0.6 : 0;
  },
  parse: parseHeapprofile,
};
