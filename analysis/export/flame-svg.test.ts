import { describe, expect, it } from "vitest";
import { flameSvg, type SvgFlameNode } from "./flame-svg";

const node = (node_id: string, parent_id: string | null, name: string, total: number, self = 0): SvgFlameNode => ({ node_id, parent_id, name, module: null, kind: "js", file: null, line: null, total, self });

const NODES = [node("1", null, "main", 100), node("2", "1", "parse", 75), node("3", "1", "render", 25, 25), node("4", "2", "tokenize<&>", 75, 75), node("5", "1", "tiny", 0.0001, 0.0001)];

/** The rects of an SVG with the frame name in their group's <title>. */
function rects(svg: string): { name: string; x: number; y: number; w: number }[] {
  return [...svg.matchAll(/<g><title>([^\n]*)\n[^<]*<\/title><rect x="([\d.]+)" y="(\d+)" width="([\d.]+)"/g)].map((m) => ({ name: m[1], x: Number(m[2]), y: Number(m[3]), w: Number(m[4]) }));
}

describe("flameSvg", () => {
  it("draws every frame left-heavy with widths proportional to totals, names escaped, narrow frames counted not drawn", () => {
    const { svg, frames, omitted } = flameSvg(NODES, { title: "run <1>", unit: "count", metric: "samples", width: 1000 });
    expect(svg.startsWith("<?xml")).toBe(true);
    expect(svg).toContain("run &lt;1&gt;");
    expect(frames).toBe(4);
    expect(omitted).toBe(1);
    const drawn = rects(svg);
    expect(drawn.map((r) => r.name)).toEqual(["main", "parse", "tokenize&lt;&amp;&gt;", "render"]);
    const [main, parse, , render] = drawn;
    expect(main.w).toBeCloseTo(999.5, 1);
    expect(parse.w).toBeCloseTo(749.5, 1);
    expect(render.x).toBeCloseTo(750, 1);
    expect(parse.y).toBeGreaterThan(main.y); // icicle: callees below
    expect(svg).not.toContain("tokenize<&>");
  });

  it("draws from the zoomed node (its ancestors full width above it) and puts roots at the bottom in flame orientation", () => {
    const zoomed = rects(flameSvg(NODES, { title: "t", unit: null, metric: null, zoom: "2", width: 1000 }).svg);
    expect(zoomed.map((r) => r.name)).toEqual(["main", "parse", "tokenize&lt;&amp;&gt;"]);
    expect(zoomed[2].w).toBeCloseTo(999.5, 1);
    const flame = rects(flameSvg(NODES, { title: "t", unit: null, metric: null, orientation: "flame" }).svg);
    expect(flame[0].y).toBeGreaterThan(flame[1].y);
  });
});
