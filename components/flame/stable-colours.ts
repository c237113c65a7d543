import { flamePalette } from "../../analysis/flame/colour";

export { stableColourIndices as stableColours } from "../../analysis/flame/prepare";

export const STABLE_PALETTES = { light: flamePalette(false), dark: flamePalette(true) };
