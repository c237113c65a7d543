"use client";

import { useMemo } from "react";
import { formatTransforms, parseTransforms, type Transform } from "../../analysis/queries/transforms";

export interface TransformStack {
  transforms: Transform[];
  inverted: boolean;
  /** Appends a transform (the view's zoom is reset: its node may be gone). */
  push: (t: Transform) => void;
  removeAt: (index: number) => void;
  /** Undo: removes the last transform (or, with none, the inversion). */
  pop: () => void;
  setInverted: (on: boolean) => void;
}

/**
 * The transform stack kept in the URL (`tf`, Firefox Profiler's `transforms`, and `inv=1`), so a
 * link reproduces it and a reload keeps it. `patch` is the page's URL-state setter.
 */
export function useTransformStack(tf: string | null, inv: string | null, patch: (p: { tf?: string | null; inv?: string | null; zoom?: null }) => void): TransformStack {
  const transforms = useMemo(() => parseTransforms(tf), [tf]);
  const inverted = inv === "1";
  const write = (list: Transform[]) => patch({ tf: formatTransforms(list), zoom: null });
  return {
    transforms,
    inverted,
    push: (t) => write([...transforms, t]),
    removeAt: (i) => write(transforms.filter((_, k) => k !== i)),
    pop: () => (transforms.length ? write(transforms.slice(0, -1)) : inverted ? patch({ inv: null, zoom: null }) : undefined),
    setInverted: (on) => patch({ inv: on ? "1" : null, zoom: null }),
  };
}

/** A notebook cell's transforms as its content keeps them (absent when none). */
export interface CellTransforms {
  transforms?: Transform[];
  inverted?: boolean;
}

/**
 * The transform stack kept in a cell's content instead of the URL: the same stack (chips, menu,
 * keys) as the run page's, written back with `onChange` (the zoom reset with it).
 */
export function useCellTransformStack(content: CellTransforms, onChange: (next: CellTransforms & { zoom?: null }) => void): TransformStack {
  return useTransformStack(formatTransforms(content.transforms ?? []), content.inverted ? "1" : null, (p) => {
    const next: CellTransforms & { zoom?: null } = { transforms: content.transforms, inverted: content.inverted, zoom: null };
    if (p.tf !== undefined) next.transforms = p.tf === null ? undefined : parseTransforms(p.tf);
    if (p.inv !== undefined) next.inverted = p.inv === "1" ? true : undefined;
    onChange(next);
  });
}
