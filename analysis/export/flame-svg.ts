/**
 * A flame graph as a standalone SVG document: the same stable colours as the canvas view, frames
 * left-heavy (children by total, largest first) from the zoomed node down, each with a <title>
 * (name, total, self, share) and a label where it is wide enough. Frames narrower than a tenth of
 * a pixel are left out and counted in the caption. Pure: nodes in, text out.
 */
import { colourIndex, flamePalette } from "../flame/colour";
import { formatPercent, formatValue } from "../flame/format";

export interface SvgFlameNode {
  node_id: string;
  parent_id: string | null;
  name: string;
  module: string | null;
  kind: string;
  file: string | null;
  line: number | null;
  self: number;
  total: number;
}

export interface FlameSvgOptions {
  title: string;
  /** A line under the title (metric, commit). */
  subtitle?: string;
  unit: string | null;
  metric: string | null;
  /** Draw from this node (its ancestors shown above it, full width); the whole graph when null. */
  zoom?: string | null;
  /** "icicle": roots on top (the default); "flame": roots at the bottom. */
  orientation?: "icicle" | "flame";
  width?: number;
  rowHeight?: number;
  dark?: boolean;
}

const MIN_WIDTH_PX = 0.1;
const CHAR_PX = 6.6;

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "\uFFFD");
}

function fitLabel(name: string, widthPx: number): string | null {
  const room = Math.floor((widthPx - 6) / CHAR_PX);
  if (room < 3) return null;
  return name.length <= room ? name : `${name.slice(0, room - 1)}…`;
}

interface Placed {
  node: SvgFlameNode;
  x: number;
  w: number;
  depth: number;
}

export function flameSvg(nodes: readonly SvgFlameNode[], options: FlameSvgOptions): { svg: string; frames: number; omitted: number } {
  const width = options.width ?? 1200;
  const rowHeight = options.rowHeight ?? 18;
  const palette = flamePalette(options.dark ?? false);
  const byId = new Map(nodes.map((n) => [n.node_id, n]));
  const children = new Map<string | null, SvgFlameNode[]>();
  for (const n of nodes) {
    const parent = n.parent_id !== null && byId.has(n.parent_id) ? n.parent_id : null;
    children.set(parent, [...(children.get(parent) ?? []), n]);
  }
  for (const list of children.values()) list.sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const roots = children.get(null) ?? [];
  const grandTotal = roots.reduce((sum, n) => sum + n.total, 0);

  // The zoomed node's ancestors are drawn full width above it, as the canvas view does.
  const zoomed = options.zoom ? byId.get(options.zoom) : undefined;
  const ancestors: SvgFlameNode[] = [];
  for (let at = zoomed; at; at = at.parent_id !== null ? byId.get(at.parent_id) : undefined) ancestors.unshift(at);
  const top = zoomed ? [zoomed] : roots;
  const base = zoomed ? zoomed.total : grandTotal;
  const placed: Placed[] = ancestors.slice(0, -1).map((node, depth) => ({ node, x: 0, w: width, depth }));
  let omitted = 0;
  const scale = base > 0 ? width / base : 0;
  const walk = (list: readonly SvgFlameNode[], x0: number, depth: number) => {
    let x = x0;
    for (const node of list) {
      const w = node.total * scale;
      if (w < MIN_WIDTH_PX) {
        omitted++;
        continue;
      }
      placed.push({ node, x, w, depth });
      walk(children.get(node.node_id) ?? [], x, depth + 1);
      x += w;
    }
  };
  walk(top, 0, Math.max(0, ancestors.length - 1));
  const maxDepth = placed.reduce((m, p) => Math.max(m, p.depth), 0);
  const headerHeight = options.subtitle ? 44 : 28;
  const graphHeight = (maxDepth + 1) * rowHeight;
  const footerHeight = 20;
  const height = headerHeight + graphHeight + footerHeight;
  const flame = options.orientation === "flame";
  const yOf = (depth: number) => headerHeight + (flame ? graphHeight - (depth + 1) * rowHeight : depth * rowHeight);
  const fg = options.dark ? "#e6e6e6" : "#1d1d1f";
  const bg = options.dark ? "#16181c" : "#ffffff";
  const out: string[] = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family='system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' font-size="11">`,
    `<rect x="0" y="0" width="${width}" height="${height}" fill="${bg}"/>`,
    `<text x="6" y="18" font-size="14" font-weight="600" fill="${fg}">${escapeXml(options.title)}</text>`,
  ];
  if (options.subtitle) out.push(`<text x="6" y="36" fill="${fg}" opacity="0.7">${escapeXml(options.subtitle)}</text>`);
  out.push(`<g class="frames">`);
  for (const p of placed) {
    const y = yOf(p.depth);
    const colour = palette[colourIndex(p.node.name, p.node.module, p.node.kind)];
    const where = p.node.file ? ` — ${p.node.file}${p.node.line !== null ? `:${p.node.line}` : ""}` : "";
    const tip = `${p.node.name}${where}\ntotal ${formatValue(p.node.total, options.unit, options.metric)} (${formatPercent(p.node.total, grandTotal)}), self ${formatValue(p.node.self, options.unit, options.metric)}`;
    const label = fitLabel(p.node.name, p.w);
    out.push(
      `<g><title>${escapeXml(tip)}</title><rect x="${p.x.toFixed(2)}" y="${y}" width="${Math.max(0.1, p.w - 0.5).toFixed(2)}" height="${rowHeight - 1}" fill="${colour}"/>` +
        (label ? `<text x="${(p.x + 3).toFixed(2)}" y="${y + rowHeight - 5}" fill="#1d1d1f">${escapeXml(label)}</text>` : "") +
        `</g>`,
    );
  }
  out.push(`</g>`);
  const caption = `${placed.length.toLocaleString("en-US")} frames · total ${formatValue(base, options.unit, options.metric)}${omitted ? ` · ${omitted.toLocaleString("en-US")} frames narrower than ${MIN_WIDTH_PX} px not drawn` : ""} · exported by Emberscope`;
  out.push(`<text x="6" y="${height - 6}" fill="${fg}" opacity="0.6" font-size="10">${escapeXml(caption)}</text>`, `</svg>`);
  return { svg: out.join("\n"), frames: placed.length, omitted };
}

