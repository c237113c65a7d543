/** A duration or offset in nanoseconds with a unit that keeps 3–4 significant digits. */
export function formatNs(ns: number): string {
  const abs = Math.abs(ns);
  if (abs < 1e3) return `${ns.toFixed(0)} ns`;
  if (abs < 1e6) return `${(ns / 1e3).toPrecision(abs < 1e4 ? 3 : 4)} µs`;
  if (abs < 1e9) return `${(ns / 1e6).toPrecision(abs < 1e7 ? 3 : 4)} ms`;
  return `${(ns / 1e9).toPrecision(4)} s`;
}

/** A stable colour per span name (same name, same colour, in every view and run). */
export function colourFor(name: string, dark: boolean): string {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  const hue = (h >>> 0) % 360;
  return dark ? `hsl(${hue} 45% 38%)` : `hsl(${hue} 60% 72%)`;
}
