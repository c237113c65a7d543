import { colourIndex, flamePalette, NEUTRAL_BASE } from "../../analysis/flame/colour";
import type { FlameTree } from "../../analysis/flame/tree";

export const STABLE_PALETTES = { light: flamePalette(false), dark: flamePalette(true) };

/** Palette index per node: by module/kind and name, the same in every view. */
export function stableColours(tree: FlameTree): Uint8Array {
  const out = new Uint8Array(tree.count);
  out[0] = NEUTRAL_BASE;
  for (let i = 1; i < tree.count; i++) {
    out[i] = tree.frameKeys[i] === "(pruned)" ? NEUTRAL_BASE : colourIndex(tree.names[i], tree.modules[i], tree.kinds[i]);
  }
  return out;
}
