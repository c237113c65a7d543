"use client";

import { useState, type ReactNode } from "react";
import type { FlameTree } from "../../analysis/flame/tree";
import { frameRefOf, INVERT_KEY, POP_TRANSFORM_KEY, transformForKey, type FrameRef } from "./actions";
import { TransformMenu, type TransformMenuState } from "./TransformMenu";
import type { TransformStack } from "./use-transforms";

const FRAME_KEY = /^[0-9a-f]{16}$/;

export interface TransformMenuHandlers {
  /** The open menu (render it once on the page), or null. */
  menu: ReactNode;
  /** For FlameGraphCell's onFrameContextMenu / CallTreeCell's onNodeContextMenu. */
  onTreeContextMenu: (tree: FlameTree, index: number, x: number, y: number) => void;
  /** For FlameGraphCell's onFrameKey / CallTreeCell's onNodeKey. */
  onTreeKey: (key: string, tree: FlameTree, index: number) => boolean;
  /** For SandwichCell's rows (a function without a call path: no focus on subtree). */
  onFunctionContextMenu: (fn: { frame_key: string; name: string; module: string | null }, x: number, y: number) => void;
  onFunctionKey: (key: string, fn: { frame_key: string; name: string; module: string | null } | null) => boolean;
}

/**
 * Right-click and keys that apply transforms from a view, onto the page's transform stack. In the
 * inverted tree a node's path runs leaf first, so focus on subtree is not offered there.
 */
export function useTransformMenu(stack: TransformStack): TransformMenuHandlers {
  const [open, setOpen] = useState<TransformMenuState | null>(null);
  const fromTree = (tree: FlameTree, index: number) => frameRefOf(tree, index, !stack.inverted);
  const stackKey = (key: string): boolean => {
    if (key === POP_TRANSFORM_KEY && (stack.transforms.length > 0 || stack.inverted)) {
      stack.pop();
      return true;
    }
    if (key === INVERT_KEY) {
      stack.setInverted(!stack.inverted);
      return true;
    }
    return false;
  };
  const frameKey = (key: string, frame: FrameRef | null): boolean => {
    if (stackKey(key)) return true;
    const t = frame ? transformForKey(key, frame) : null;
    if (!t) return false;
    stack.push(t);
    return true;
  };
  const fnRef = (fn: { frame_key: string; name: string; module: string | null }): FrameRef | null => (FRAME_KEY.test(fn.frame_key) ? { frameKey: fn.frame_key, name: fn.name, module: fn.module, path: null } : null);
  return {
    menu: open ? <TransformMenu menu={open} inverted={stack.inverted} onApply={stack.push} onInvert={stack.setInverted} onClose={() => setOpen(null)} /> : null,
    onTreeContextMenu: (tree, index, x, y) => {
      const frame = fromTree(tree, index);
      if (frame) setOpen({ frame, x, y });
    },
    onTreeKey: (key, tree, index) => frameKey(key, index > 0 ? fromTree(tree, index) : null),
    onFunctionContextMenu: (fn, x, y) => {
      const frame = fnRef(fn);
      if (frame) setOpen({ frame, x, y });
    },
    onFunctionKey: (key, fn) => frameKey(key, fn ? fnRef(fn) : null),
  };
}
