import { createHash } from "node:crypto";
import { z } from "zod";
import { TOKEN_KINDS } from "../../analysis/redaction";
import { EmberscopeError } from "../domain/errors";

/**
 * The export bundle's file format: one HTML file whose parts (the notebook, Parquet evidence,
 * DuckDB-WASM, the viewer) are base64 text in `<script type="application/octet-stream">`
 * elements, described by a JSON manifest holding each part's sha256. Everything outside the parts
 * is fixed text, so `verify` rebuilds the file from manifest and parts and compares byte for byte:
 * a changed byte anywhere is named (the part whose hash fails, or `envelope`). Without a signature
 * a person who rewrites a part and its hash in the manifest is not caught: the manifest says what
 * the file holds, it does not prove who made it.
 */

export const BUNDLE_FORMAT = "emberscope-export";
/**
 * 2: the viewer's bootstrap follows the viewer part (the notebook, summaries and viewer come
 * first), so the page paints while the browser still parses the evidence and the engine; 1 ran it
 * after every part. Both are read; 2 is written.
 */
export const BUNDLE_VERSION = 2;
const READABLE_VERSIONS: readonly number[] = [1, 2];

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const BundlePart = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._/-]{1,200}$/),
    media_type: z.string().max(100),
    /** `gzip`: the stored bytes are gzip (the viewer inflates them with DecompressionStream). */
    encoding: z.enum(["identity", "gzip"]),
    size_bytes: z.number().int().min(0),
    sha256: Sha256.describe("Of the stored bytes (after base64 decoding, before inflating)."),
  })
  .strict();
export type BundlePart = z.infer<typeof BundlePart>;

const KindChoice = z.enum(["redact", "allow"]);

export const RedactionRecord = z
  .object({
    mode: z.enum(["redacted", "person-widened", "full"]).describe("Every kind redacted (default), some allowed by a person, or every kind allowed by a person."),
    chosen_by: z.enum(["default", "person", "agent"]),
    choices: z.record(z.enum(TOKEN_KINDS as [string, ...string[]]), KindChoice),
    key: z.literal("per-export, not kept").describe("Tokens are keyed by a random key made for this export and thrown away: two exports cannot be joined."),
    report: z.array(z.object({ kind: z.string(), count: z.number().int(), action: KindChoice, example: z.string().nullable() }).strict()),
  })
  .strict();
export type RedactionRecord = z.infer<typeof RedactionRecord>;

export const BundleGeneration = z
  .object({
    generation_id: z.string(),
    run_id: z.string().nullable(),
    extractor: z.string(),
    extractor_version: z.string(),
    evidence_schema_version: z.number().int(),
    commit_ids: z.array(z.string()).describe("The exported commits this generation is visible in."),
    files: z.array(z.object({ table: z.string(), part: z.string(), row_count: z.number().int(), size_bytes: z.number().int(), source_size_bytes: z.number().int() }).strict()),
  })
  .strict();
export type BundleGeneration = z.infer<typeof BundleGeneration>;

export const BundleManifest = z
  .object({
    format: z.literal(BUNDLE_FORMAT),
    version: z.union([z.literal(1), z.literal(2)]),
    created_at: z.string(),
    emberscope_version: z.string(),
    subject: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("investigation"), investigation_id: z.string() }).strict(),
      z.object({ kind: z.literal("run"), run_id: z.string(), view: z.string() }).strict(),
    ]),
    title: z.string(),
    commits: z.array(z.object({ commit_id: z.string(), seq: z.number().int().nullable(), generation_ids: z.array(z.string()) }).strict()),
    runs: z.array(z.object({ run_id: z.string(), title: z.string().nullable() }).strict()),
    generations: z.array(BundleGeneration),
    evidence: z.object({ filtered_to_runs: z.boolean(), compression: z.literal("zstd"), source_bytes: z.number().int(), bundle_bytes: z.number().int() }).strict(),
    native_artifacts: z.literal("excluded"),
    max_sensitivity: z.literal("normal"),
    redaction: RedactionRecord,
    engine: z.object({ name: z.literal("duckdb-wasm"), version: z.string(), bundle: z.literal("eh") }).strict(),
    parts: z.array(BundlePart),
  })
  .strict();
export type BundleManifest = z.infer<typeof BundleManifest>;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
/** JSON inside a script element: `<` escaped so no `</script>` can close it. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

/**
 * Runs the viewer part: decoded and loaded as a blob script (the page's CSP allows scripts only
 * inline and from blob:, and connections only to blob: and data:, so nothing leaves the machine).
 */
const BOOTSTRAP =
  '(function(){var e=document.querySelector(\'script[data-part="viewer.js.gz"]\');var t=atob(e.textContent);var b=new Uint8Array(t.length);for(var i=0;i<t.length;i++)b[i]=t.charCodeAt(i);new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream("gzip"))).blob().then(function(j){var s=document.createElement("script");s.src=URL.createObjectURL(new Blob([j],{type:"text/javascript"}));document.body.appendChild(s);});})();';

const CSP = "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' blob:; worker-src blob:; connect-src blob: data:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'";

const VIEWER_PART = "viewer.js.gz";

/** The whole file: fixed text around the manifest and the parts, in the manifest's order. */
export function renderBundle(manifest: BundleManifest, parts: ReadonlyMap<string, Uint8Array>): string {
  const manifestText = scriptJson(manifest);
  const chunks: string[] = [
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="${CSP}">\n`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeHtml(manifest.title)} — Emberscope export</title></head>\n`,
    `<body><div id="emberscope-export"><p>Loading the Emberscope export… (this file needs JavaScript; nothing is fetched from the network)</p></div>\n`,
    `<script type="application/json" id="emberscope-manifest" data-sha256="${sha256Hex(Buffer.from(manifestText))}">${manifestText}</script>\n`,
  ];
  const bootstrap = `<script>${BOOTSTRAP}</script>\n`;
  for (const part of manifest.parts) {
    const bytes = parts.get(part.name);
    if (!bytes) throw new Error(`bundle part ${part.name} has no bytes`);
    chunks.push(`<script type="application/octet-stream" data-part="${part.name}">${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}</script>\n`);
    // Version 2 runs the viewer as soon as its part is parsed: it paints while the rest is read.
    if (manifest.version === 2 && part.name === VIEWER_PART) chunks.push(bootstrap);
  }
  if (manifest.version === 1 || !parts.has(VIEWER_PART)) chunks.push(bootstrap);
  chunks.push(`</body></html>\n`);
  return chunks.join("");
}

function invalidBundle(message: string, part: string, details: Record<string, unknown> = {}): EmberscopeError {
  return new EmberscopeError("BUNDLE_INVALID", message, { details: { part, ...details } });
}

const MANIFEST_ELEMENT = /<script type="application\/json" id="emberscope-manifest" data-sha256="([0-9a-f]*)">([^<]*)<\/script>/;
const PART_ELEMENT = /<script type="application\/octet-stream" data-part="([^"]*)">([A-Za-z0-9+/=]*)<\/script>/g;

export interface ReadBundle {
  manifest: BundleManifest;
  parts: Map<string, Uint8Array>;
}

/**
 * Reads a bundle and checks it whole: the manifest's shape, each part's sha256 (the first that
 * fails is named), no part missing or extra, and the text around them exactly as written.
 */
/** The sha256 the file's manifest element carries (of the manifest's text as it stands in the file). */
export function manifestSha256(text: string): string | null {
  return MANIFEST_ELEMENT.exec(text)?.[1] ?? null;
}

export function readBundle(text: string): ReadBundle {
  const m = MANIFEST_ELEMENT.exec(text);
  if (!m) throw invalidBundle("Not an Emberscope export: no manifest element.", "manifest");
  if (sha256Hex(Buffer.from(m[2])) !== m[1]) throw invalidBundle("The export's manifest does not match its sha256: the export was changed or damaged.", "manifest");
  let raw: unknown;
  try {
    raw = JSON.parse(m[2]);
  } catch {
    throw invalidBundle("The export's manifest is not JSON.", "manifest");
  }
  if ((raw as { format?: unknown })?.format !== BUNDLE_FORMAT) throw invalidBundle("Not an Emberscope export: the manifest names another format.", "manifest");
  if (!READABLE_VERSIONS.includes((raw as { version?: number }).version as number)) {
    throw invalidBundle(`Export version ${String((raw as { version?: unknown }).version)} is not one this Emberscope reads (${READABLE_VERSIONS.join(", ")}).`, "manifest");
  }
  const parsed = BundleManifest.safeParse(raw);
  if (!parsed.success) throw invalidBundle(`The export's manifest is malformed at ${parsed.error.issues[0].path.join(".") || "(manifest)"}.`, "manifest");
  const manifest = parsed.data;
  const listed = new Map(manifest.parts.map((p) => [p.name, p]));
  const parts = new Map<string, Uint8Array>();
  PART_ELEMENT.lastIndex = 0;
  for (let p = PART_ELEMENT.exec(text); p; p = PART_ELEMENT.exec(text)) {
    const [, name, base64] = p;
    const spec = listed.get(name);
    if (!spec) throw invalidBundle(`The export holds a part its manifest does not list: ${name}.`, name);
    if (parts.has(name)) throw invalidBundle(`The export holds the part ${name} twice.`, name);
    const bytes = new Uint8Array(Buffer.from(base64, "base64"));
    if (bytes.byteLength !== spec.size_bytes || sha256Hex(bytes) !== spec.sha256) {
      throw invalidBundle(`The part ${name} does not match the manifest's sha256: the export was changed or damaged.`, name, { expected_sha256: spec.sha256, size_bytes: bytes.byteLength });
    }
    parts.set(name, bytes);
  }
  for (const spec of manifest.parts) if (!parts.has(spec.name)) throw invalidBundle(`The export is missing its part ${spec.name}.`, spec.name);
  if (renderBundle(manifest, parts) !== text) throw invalidBundle("The text around the export's parts was changed (its viewer bootstrap, policy or layout).", "envelope");
  return { manifest, parts };
}
