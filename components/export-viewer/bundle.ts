/**
 * The parts of the export this page is (see server/services/export-bundle.ts): base64 text in
 * `<script type="application/octet-stream" data-part=…>` elements, described by the manifest.
 * Nothing is fetched: every byte the viewer reads is in the file.
 */

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

/** A part's stored bytes (base64 decoded), inflated when the manifest says it is gzip. */
export async function partBytes(manifest: Manifest, name: string): Promise<Uint8Array> {
  const spec = manifest.parts.find((p) => p.name === name);
  const element = document.querySelector(`script[data-part="${CSS.escape(name)}"]`);
  if (!spec || !element?.textContent) throw new Error(`The export has no part ${name}.`);
  const text = atob(element.textContent);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  if (spec.encoding !== "gzip") return bytes;
  const inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(inflated).arrayBuffer());
}
