/**
 * Stable flame colours: the hue family comes from the frame's module (or its kind when it has
 * none), the shade from its name — so the same function keeps its colour in every view and run.
 * Colours are palette indices, so the renderer can fill all rects of one colour in one call.
 */

export function stringHash(text: string): number {
  // FNV-1a, 32 bit: deterministic in every JavaScript runtime.
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h >>> 0;
}

const KIND_HUES: Record<string, number> = { js: 32, native: 200, python: 140, java: 12, kernel: 345, gc: 280, idle: -1 };
/** Families for frames with neither module nor a known kind: warm, picked by name. */
const WARM_FAMILIES = [0, 1, 2, 3];
const FAMILY_HUES = [18, 32, 45, 58, 85, 160, 190, 210, 250, 290, 320, 345];
export const SHADES = 4;

/** Palette layout: families × shades, then neutral shades, then the dimmed colour. */
export const NEUTRAL_BASE = FAMILY_HUES.length * SHADES;
export const DIM_INDEX = NEUTRAL_BASE + SHADES;
export const PALETTE_SIZE = DIM_INDEX + 1;

export function colourIndex(name: string, module: string | null, kind: string): number {
  const shade = stringHash(name) % SHADES;
  if (!module) {
    const hue = KIND_HUES[kind];
    if (hue === undefined) return WARM_FAMILIES[stringHash(`family:${name}`) % WARM_FAMILIES.length] * SHADES + shade;
    if (hue < 0) return NEUTRAL_BASE + shade;
    return FAMILY_HUES.indexOf(nearest(hue)) * SHADES + shade;
  }
  return (stringHash(module) % FAMILY_HUES.length) * SHADES + shade;
}

function nearest(hue: number): number {
  return FAMILY_HUES.reduce((best, h) => (Math.abs(h - hue) < Math.abs(best - hue) ? h : best), FAMILY_HUES[0]);
}

/** CSS colours for the palette indices, for a light or dark background. */
export function flamePalette(dark: boolean): string[] {
  const out: string[] = [];
  for (const hue of FAMILY_HUES) {
    for (let s = 0; s < SHADES; s++) out.push(dark ? `hsl(${hue} 55% ${34 + s * 5}%)` : `hsl(${hue} 75% ${68 + s * 4}%)`);
  }
  for (let s = 0; s < SHADES; s++) out.push(dark ? `hsl(215 10% ${36 + s * 4}%)` : `hsl(215 12% ${76 + s * 3}%)`);
  out.push(dark ? "hsl(215 8% 22%)" : "hsl(215 10% 90%)");
  return out;
}

/** Differential palette: blue (shrank) … neutral … red (grew), `DIFF_LEVELS` strengths per side. */
export const DIFF_LEVELS = 6;
export const DIFF_NEUTRAL = DIFF_LEVELS;
export const DIFF_DIM = 2 * DIFF_LEVELS + 1;

export function diffPalette(dark: boolean): string[] {
  const out: string[] = [];
  for (let s = DIFF_LEVELS; s >= 1; s--) out.push(diffColour(220, s, dark));
  out.push(dark ? "hsl(215 10% 38%)" : "hsl(215 12% 84%)");
  for (let s = 1; s <= DIFF_LEVELS; s++) out.push(diffColour(4, s, dark));
  out.push(dark ? "hsl(215 8% 22%)" : "hsl(215 10% 92%)");
  return out;
}

function diffColour(hue: number, strength: number, dark: boolean): string {
  const t = strength / DIFF_LEVELS;
  return dark ? `hsl(${hue} ${40 + 40 * t}% ${30 + 14 * t}%)` : `hsl(${hue} ${45 + 45 * t}% ${86 - 34 * t}%)`;
}

/**
 * Palette index for a change: sign gives the side, |change| / scale the strength (square-root
 * scaled so small changes stay visible), quantized to DIFF_LEVELS steps.
 */
export function diffIndex(change: number, scale: number): number {
  if (!(scale > 0) || change === 0) return DIFF_NEUTRAL;
  const level = Math.min(DIFF_LEVELS, Math.max(1, Math.ceil(Math.sqrt(Math.min(1, Math.abs(change) / scale)) * DIFF_LEVELS)));
  return change > 0 ? DIFF_NEUTRAL + level : DIFF_NEUTRAL - level;
}
