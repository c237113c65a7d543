import type { FlameTree } from "../../analysis/flame/tree";
import { pathTo } from "../../analysis/flame/tree";
import type { Transform } from "../../analysis/queries/transforms";

/** The function (and call path) a transform is asked for: from a flame graph frame, a call-tree row or a sandwich row. */
export interface FrameRef {
  frameKey: string;
  name: string;
  module: string | null;
  /** frame_keys from the root to this node; null where the view has no call path (sandwich). */
  path: string[] | null;
}

const FRAME_KEY = /^[0-9a-f]{16}$/;

/** The frame at `index` of a flame tree (0, the synthetic root, and pruned remainders are none). */
export function frameRefOf(tree: FlameTree, index: number, withPath = true): FrameRef | null {
  if (index <= 0 || !FRAME_KEY.test(tree.frameKeys[index])) return null;
  const path = pathTo(tree, index)
    .filter((i) => i > 0)
    .map((i) => tree.frameKeys[i]);
  return { frameKey: tree.frameKeys[index], name: tree.names[index], module: tree.modules[index] || null, path: withPath && path.every((k) => FRAME_KEY.test(k)) ? path : null };
}

export interface TransformAction {
  id: Transform["type"];
  /** The key that applies it to the selected or hovered frame (Firefox Profiler's, where it has one). */
  key: string;
  label: (frame: FrameRef) => string;
  make: (frame: FrameRef) => Transform | null;
}

export const TRANSFORM_ACTIONS: readonly TransformAction[] = [
  { id: "merge-function", key: "m", label: (f) => `Merge function “${f.name}” (its time goes to its caller)`, make: (f) => ({ type: "merge-function", frame_key: f.frameKey }) },
  { id: "focus-function", key: "F", label: (f) => `Focus on function “${f.name}”`, make: (f) => ({ type: "focus-function", frame_key: f.frameKey }) },
  { id: "focus-subtree", key: "f", label: (f) => `Focus on subtree “${f.name}” (this call path only)`, make: (f) => (f.path ? { type: "focus-subtree", path: f.path } : null) },
  { id: "drop-function", key: "d", label: (f) => `Drop samples with “${f.name}”`, make: (f) => ({ type: "drop-function", frame_key: f.frameKey }) },
  { id: "collapse-recursion", key: "r", label: (f) => `Collapse recursion of “${f.name}”`, make: (f) => ({ type: "collapse-recursion", frame_key: f.frameKey }) },
  { id: "collapse-direct-recursion", key: "R", label: (f) => `Collapse direct recursion only of “${f.name}”`, make: (f) => ({ type: "collapse-direct-recursion", frame_key: f.frameKey }) },
  { id: "collapse-module", key: "C", label: (f) => (f.module ? `Collapse module “${f.module}” into one frame` : "Collapse module (this frame names none)"), make: (f) => (f.module ? { type: "collapse-module", module: f.module } : null) },
];

/** The transform a key asks for on a frame, or null (no such key, or it does not apply to that frame). */
export function transformForKey(key: string, frame: FrameRef): Transform | null {
  const action = TRANSFORM_ACTIONS.find((a) => a.key === key);
  return action ? action.make(frame) : null;
}

/** Keys of the transform stack itself. */
export const POP_TRANSFORM_KEY = "Backspace";
export const INVERT_KEY = "I";

/** A chip's words for a transform, with function names from `nameOf` (the key itself when unknown). */
export function describeTransform(t: Transform, nameOf: (frameKey: string) => string | undefined): string {
  const n = (k: string) => nameOf(k) ?? k.slice(0, 8);
  switch (t.type) {
    case "merge-function":
      return `Merge: ${n(t.frame_key)}`;
    case "focus-function":
      return `Focus: ${n(t.frame_key)}`;
    case "focus-subtree":
      return `Focus subtree: ${t.path.map(n).join(" › ")}`;
    case "drop-function":
      return `Drop: ${n(t.frame_key)}`;
    case "collapse-recursion":
      return `Collapse recursion: ${n(t.frame_key)}`;
    case "collapse-direct-recursion":
      return `Collapse direct recursion: ${n(t.frame_key)}`;
    case "collapse-module":
      return `Collapse module: ${t.module}`;
  }
}
