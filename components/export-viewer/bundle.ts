/**
 * The parts of the export this page is (see server/services/export-bundle.ts): base64 text in
 * `<script type="application/octet-stream" data-part=…>` elements, described by the manifest.
 * Nothing is fetched: every byte the viewer reads is in the file.
 */

import { fromBase64 } from "./base64";

export interface ManifestPart {
  name: string;
  media_type: string;
  encoding: "identity" | "gzip";
  size_bytes: number;
  sha256: string;
}

export interface BundleGeneration {
  generation_id: string;
  run_id: string | null;
  commit_ids: string[];
  files: { table: string; part: string; row_count: number; size_bytes: number }[];
}

export interface Manifest {
  title: string;
  created_at: string;
  subject: { kind: string };
  commits: { commit_id: string; seq: number | null; generation_ids: string[] }[];
  generations: BundleGeneration[];
  redaction: { mode: string; choices: Record<string, string>; report: { kind: string; count: number; action: string; example: string | null }[] };
  evidence: { source_bytes: number; bundle_bytes: number };
  parts: ManifestPart[];
}

export function readManifest(): Manifest {
  const element = document.getElementById("emberscope-manifest");
  if (!element?.textContent) throw new Error("This file holds no export manifest.");
  return JSON.parse(element.textContent) as Manifest;
}

let markPainted: () => void = () => undefined;
/**
 * Resolves once the notebook has been painted (main.tsx calls `painted()`): decoding the evidence
 * is long main-thread work, and started earlier it held the first paint back by seconds.
 */
export const firstPaint = new Promise<void>((resolve) => {
  markPainted = resolve;
});
export function painted(): void {
  markPainted();
}

/** The parts written before the viewer's bootstrap (server/services/export-bundle.ts): complete when it runs. */
const EARLY_PARTS = ["notebook.json", "summaries.json", "viewer.js.gz"];

/** The document once parsed: the viewer starts before the evidence and engine parts are read. */
function parsed(): Promise<void> {
  if (document.readyState !== "loading") return Promise.resolve();
  return new Promise((resolve) => document.addEventListener("DOMContentLoaded", () => resolve(), { once: true }));
}

/** A part's stored text (base64) as the manifest lists it. */
export async function partText(manifest: Manifest, name: string): Promise<{ spec: ManifestPart; text: string }> {
  const spec = manifest.parts.find((p) => p.name === name);
  // A part after the viewer may be still being parsed (its text half read): wait for the whole document.
  if (!EARLY_PARTS.includes(name)) await parsed();
  const element = document.querySelector(`script[data-part="${CSS.escape(name)}"]`);
  if (!spec || !element?.textContent) throw new Error(`The export has no part ${name}.`);
  return { spec, text: element.textContent };
}

/** A part's stored bytes (base64 decoded), inflated when the manifest says it is gzip. */
export async function partBytes(manifest: Manifest, name: string): Promise<Uint8Array> {
  const { spec, text } = await partText(manifest, name);
  const bytes = fromBase64(text);
  if (spec.encoding !== "gzip") return bytes;
  const inflated = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}

/** A flame cell's tree computed at export (the heaviest call paths), drawn before the engine is ready. */
export interface FlameSummary {
  metric: string;
  unit: string | null;
  nodes: { node_id: string; parent_id: string | null; frame_key: string; name: string; file: string | null; line: number | null; module: string | null; kind: string; depth: number; self: number; total: number }[];
}
/** By cell id: the file's `summaries.json` part. */
export type FlameSummaries = Record<string, FlameSummary>;
