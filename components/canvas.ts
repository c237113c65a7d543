/**
 * Sizes a canvas for the screen's pixel density (its backing store in device pixels, resized only
 * when that changes) and returns its 2D context drawing in CSS pixels.
 * `sizeElement`: also set the element's CSS size (when no stylesheet sizes it).
 */
export function hiDpiContext(canvas: HTMLCanvasElement, width: number, height: number, options: { sizeElement?: boolean; alpha?: boolean } = {}): CanvasRenderingContext2D {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(width * dpr);
  const h = Math.round(height * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  if (options.sizeElement) {
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  const ctx = canvas.getContext("2d", { alpha: options.alpha ?? true })!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** The reader's colour scheme is dark (canvas colours follow it; false outside a browser). */
export function prefersDark(): boolean {
  return typeof window !== "undefined" && window.matchMedia?.("(prefers-color-scheme: dark)").matches;
}
