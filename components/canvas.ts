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

/** The reader's colour scheme is dark: the theme they chose (data-theme on <html>), else the system's (canvas colours follow it; false outside a browser). */
export function prefersDark(): boolean {
  if (typeof window === "undefined") return false;
  const chosen = document.documentElement.dataset.theme;
  if (chosen === "dark" || chosen === "light") return chosen === "dark";
  return Boolean(window.matchMedia?.("(prefers-color-scheme: dark)").matches);
}

/**
 * `text` cut to fit `maxWidth` CSS pixels in the context's font, ending with an ellipsis when cut
 * ("" when not even one character and the ellipsis fit). fillText's own maxWidth squeezes the
 * glyphs instead, which is unreadable.
 */
export function fitText(ctx: CanvasRenderingContext2D, text: string, maxWidth: number): string {
  if (maxWidth <= 0) return "";
  if (ctx.measureText(text).width <= maxWidth) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(`${text.slice(0, mid)}…`).width <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return lo === 0 ? "" : `${text.slice(0, lo)}…`;
}
