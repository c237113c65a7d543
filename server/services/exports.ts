import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, promises as fsp, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { z } from "zod";
import { cellKind } from "../../analysis/notebook/cells";
import { createExportRedaction, createRedactor, EXPORT_VERBATIM_KEYS, TOKEN_KINDS, type TokenKind } from "../../analysis/redaction";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import { NOTEBOOK_FORMAT, NOTEBOOK_VERSION, type NotebookDocument } from "../domain/notebook-document";
import { openDuckDb } from "../evidence/duckdb";
import { LOCAL_NAMES } from "../store/redaction-context";
import { PACKAGE_ROOT } from "../package-root";
import { writeTransaction } from "../store/control-store";
import { getCommit, headCommit, pin } from "../store/corpus";
import { getRun, runExists } from "../store/runs";
import { getOperation } from "../store/operations";
import { openWorkspace, type Workspace } from "../store/workspace";
import packageJson from "../../package.json" with { type: "json" };
import { runGenerationIds } from "./corpus";
import { BUNDLE_FORMAT, BUNDLE_VERSION, readBundle, renderBundle, sha256Hex, type BundleGeneration, type BundleManifest, type BundlePart, type RedactionRecord } from "./export-bundle";
import { rewriteEvidenceFile } from "./export-evidence";
import { flameSummaries, type FlameSummary } from "./export-summaries";
import type { TrackChoice } from "../../analysis/queries/tracks";
import type { Transform } from "../../analysis/queries/transforms";
import { scanBundle } from "./export-scan";
import { exportDocument, importDocument } from "./notebook-format";
import { buildViewer } from "./export-viewer";
import { startLeasedJob } from "./leased-operation";
import { defineService, defineWorkspacelessService, type ServiceContext } from "./service";

/**
 * Shareable exports (issue 24): one HTML file holding an investigation's notebook, exactly the
 * evidence it cites (the Parquet of those generations at those commits, filtered to the cited
 * runs, rewritten with redacted strings and ZSTD), DuckDB-WASM and a read-only viewer, with a
 * manifest of sha256 per part and the redaction chosen. Stored evidence is never rewritten: the
 * export carries rewritten copies. `verify` re-checks every hash and re-scans; `import` brings a
 * bundle into another workspace as read-only evidence with its notebook, ids kept.
 */

export const DUCKDB_WASM_VERSION = "1.32.0";

export const KindChoices = z
  .object({
    allow: z.array(z.enum(TOKEN_KINDS as [TokenKind, ...TokenKind[]])).max(TOKEN_KINDS.length).default([]).describe("Kinds to leave as they are (a person only; an agent may not widen)."),
    redact: z.array(z.enum(TOKEN_KINDS as [TokenKind, ...TokenKind[]])).max(TOKEN_KINDS.length).default([]).describe("Kinds to redact (all are by default; named here to narrow a widened choice back)."),
  })
  .strict();

export const ExportSubject = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("investigation"), investigation_id: z.string().min(1).max(128) }).strict(),
  z
    .object({
      kind: z.literal("run"),
      run_id: z.string().min(1).max(128),
      view: z.enum(["flame", "trace", "sandwich", "calltree"]).default("flame"),
      commit_id: z.string().min(1).max(128).default("HEAD"),
    })
    .strict(),
]);

export const ExportInput = z
  .object({
    subject: ExportSubject,
    choices: KindChoices.default({ allow: [], redact: [] }),
    preview: z.boolean().default(false).describe("Report every redaction (kind, count, first place) without writing the file."),
  })
  .strict();

const ReportEntry = z.object({ kind: z.string(), count: z.number().int(), action: z.enum(["redact", "allow"]), example: z.string().nullable() });

export const ExportResult = z.object({
  preview: z.boolean(),
  title: z.string(),
  report: z.array(ReportEntry),
  redaction_mode: z.string(),
  parts: z.array(z.object({ name: z.string(), size_bytes: z.number().int(), sha256: z.string() })),
  evidence: z.object({ generations: z.number().int(), files: z.number().int(), source_bytes: z.number().int(), bundle_bytes: z.number().int() }),
  size_bytes: z.number().int().describe("The HTML file's size (0 for a preview)."),
  elapsed_ms: z.number(),
});
export type ExportResult = z.infer<typeof ExportResult>;

/** What a caller may choose: a person widens and narrows per kind; an agent only ever gets everything redacted. */
export function resolveChoices(ctx: ServiceContext, choices: z.output<typeof KindChoices>): { allow: Set<TokenKind>; chosenBy: RedactionRecord["chosen_by"] } {
  const allow = new Set<TokenKind>(choices.allow.filter((k) => !choices.redact.includes(k)));
  const isPerson = ctx.actor === "cli" || ctx.actor === "test" || (ctx.actor === "web" && ctx.person === true);
  if (allow.size && !isPerson) {
    throw new EmberscopeError("PERSON_SESSION_REQUIRED", "Only a person may leave a kind unredacted in an export; an agent's export is always fully redacted.", {
      details: { allow: [...allow] },
    });
  }
  return { allow, chosenBy: allow.size ? "person" : ctx.actor === "agent" ? "agent" : "default" };
}

/** The notebook of a single run's view: one cell pinned at the commit, as `export run` shares it. */
function runDocument(ws: Workspace, runId: string, view: string, commitId: string): NotebookDocument {
  const run = getRun(ws.db, runId);
  const commit = pin(ws.db, commitId);
  const now = nowIso();
  const author = { actor: "person" as const, client: null };
  const cellKindName = view;
  return {
    format: NOTEBOOK_FORMAT,
    version: NOTEBOOK_VERSION,
    exported_at: now,
    source: { workspace_id: ws.id, emberscope_version: packageJson.version },
    investigation: { investigation_id: newId("inv").toLowerCase(), title: run.title, question: `The ${view} view of run ${run.run_id}.`, status: "open", created_by: author, revision: 1, created_at: now, updated_at: now },
    cells: [{ cell_id: newId("cell").toLowerCase(), position: "i", name: null, commit_id: commit.commit_id, created_by: author, revision: 1, created_at: now, updated_at: now, kind: cellKindName, content: { run_id: run.run_id } }],
    hypotheses: [],
    findings: [],
    commits: [{ commit_id: commit.commit_id, seq: commit.seq, created_at: commit.created_at }],
  } as NotebookDocument;
}

/** Runs a notebook names (cells' content, findings' references) and the commits it pins or cites. */
function citedEvidence(doc: NotebookDocument): { runs: Set<string>; commits: Set<string> } {
  const runs = new Set<string>();
  const commits = new Set<string>();
  for (const cell of doc.cells) {
    if (cell.commit_id) commits.add(cell.commit_id);
    for (const r of cellKind(cell.kind)?.runs?.(cell.content as never) ?? []) runs.add(r);
  }
  for (const f of doc.findings) {
    for (const ref of f.references) {
      commits.add(ref.target.commit_id);
      if (ref.target.kind === "run") runs.add(ref.target.run_id);
      if (ref.target.kind === "comparison") {
        runs.add(ref.target.base_run_id);
        runs.add(ref.target.candidate_run_id);
      }
    }
  }
  return { runs, commits };
}

function redactionMode(allow: ReadonlySet<TokenKind>): RedactionRecord["mode"] {
  return allow.size === 0 ? "redacted" : allow.size === TOKEN_KINDS.length ? "full" : "person-widened";
}

export interface BuiltExport {
  result: ExportResult;
  html: string | null;
}

/** How a long export reports where it is and learns it was cancelled (an operation's lease: startExport). */
export interface ExportProgress {
  phase(name: string, completed?: number | null, total?: number | null): void;
  progress(completed: number, total: number | null): void;
  readonly signal: AbortSignal;
}

const NO_PROGRESS: ExportProgress = { phase: () => undefined, progress: () => undefined, signal: new AbortController().signal };

/** Builds an export (or only its redaction report, for a preview). */
export async function buildExport(ws: Workspace, ctx: ServiceContext, input: z.output<typeof ExportInput>, progress: ExportProgress = NO_PROGRESS): Promise<BuiltExport> {
  const started = performance.now();
  progress.phase("reading the notebook");
  const { allow, chosenBy } = resolveChoices(ctx, input.choices);
  const doc = input.subject.kind === "investigation" ? exportDocument(ws.db, input.subject.investigation_id, ws.id) : runDocument(ws, input.subject.run_id, input.subject.view, input.subject.commit_id);
  const cited = citedEvidence(doc);

  // Tokens keyed by a key made for this export and never kept: two exports cannot be joined.
  const key = randomBytes(32);
  const redaction = createExportRedaction({
    projectRoot: ws.layout.projectRoot,
    userNames: LOCAL_NAMES.users,
    hostNames: LOCAL_NAMES.hosts,
    tokenFor: (kind, value) => createHmac("sha256", key).update(`emberscope-export\0${kind}\0${value}`).digest("hex"),
    allow,
  });
  const notebook = redaction.document(doc, "notebook");

  // Generations: those of the cited runs visible at each cited commit (every generation of a
  // commit only when the notebook names no run at all).
  const generations = new Map<string, BundleGeneration & { objects: { table: string; object_id: string; size_bytes: number; row_count: number }[] }>();
  const commits: BundleManifest["commits"] = [];
  for (const commitId of cited.commits) {
    let commit;
    try {
      commit = pin(ws.db, commitId);
    } catch {
      continue; // A commit this workspace no longer holds: the notebook says so; nothing to carry.
    }
    const wanted = cited.runs.size ? new Set([...cited.runs].flatMap((r) => (runExists(ws.db, r) ? runGenerationIds(ws, commit, r) : []))) : new Set(commit.generations.map((g) => g.generation_id));
    const ids: string[] = [];
    for (const g of commit.generations) {
      if (!wanted.has(g.generation_id)) continue;
      ids.push(g.generation_id);
      const known = generations.get(g.generation_id);
      if (known) {
        known.commit_ids.push(commit.commit_id);
        continue;
      }
      const row = ws.db.prepare("SELECT extractor_version, evidence_schema_version FROM generations WHERE id = ?").get(g.generation_id) as { extractor_version: string; evidence_schema_version: number };
      generations.set(g.generation_id, {
        generation_id: g.generation_id,
        run_id: g.run_id,
        extractor: g.extractor,
        extractor_version: row.extractor_version,
        evidence_schema_version: row.evidence_schema_version,
        commit_ids: [commit.commit_id],
        files: [],
        objects: g.files.map((f) => ({ table: f.table, object_id: f.object_id, size_bytes: f.size_bytes, row_count: f.row_count })),
      });
    }
    commits.push({ commit_id: commit.commit_id, seq: commit.seq, generation_ids: ids });
  }

  const parts = new Map<string, Uint8Array>();
  const specs: BundlePart[] = [];
  const addPart = (name: string, mediaType: string, bytes: Uint8Array, encoding: BundlePart["encoding"] = "identity") => {
    parts.set(name, bytes);
    specs.push({ name, media_type: mediaType, encoding, size_bytes: bytes.byteLength, sha256: sha256Hex(bytes) });
  };

  let sourceBytes = 0;
  let bundleBytes = 0;
  let summaries: Record<string, FlameSummary> = {};
  const scratch = mkdtempSync(path.join(ws.layout.tmp, "export-"));
  const { instance, connection } = await openDuckDb({ tempDirectory: scratch });
  try {
    const written: { generation_id: string; table: string; path: string }[] = [];
    const fileCount = [...generations.values()].reduce((n, g) => n + g.objects.length, 0);
    progress.phase("redacting the evidence", 0, fileCount);
    for (const g of generations.values()) {
      for (const f of g.objects) {
        progress.signal.throwIfAborted();
        const partName = `evidence/${g.generation_id}/${f.table}.parquet`;
        const target = path.join(scratch, `${g.generation_id}-${f.table}.parquet`);
        const { rows } = await rewriteEvidenceFile(connection, { source: ws.objects.pathOf(f.object_id as never), target, table: f.table, redaction });
        const bytes = new Uint8Array(readFileSync(target));
        sourceBytes += f.size_bytes;
        bundleBytes += bytes.byteLength;
        if (!input.preview) addPart(partName, "application/vnd.apache.parquet", bytes);
        g.files.push({ table: f.table, part: partName, row_count: rows, size_bytes: bytes.byteLength, source_size_bytes: f.size_bytes });
        written.push({ generation_id: g.generation_id, table: f.table, path: target });
        progress.progress(written.length, fileCount);
      }
    }
    progress.signal.throwIfAborted();
    // Flame cells' summaries, from the redacted copies: the viewer paints them before its engine is ready.
    if (!input.preview) {
      progress.phase("summarizing the flame graphs", fileCount, fileCount);
      const requests = doc.cells
        .filter((c) => c.kind === "flame" && c.commit_id)
        .map((c) => {
          const content = c.content as { run_id: string; metric?: string | null; tracks?: TrackChoice; transforms?: Transform[]; inverted?: boolean };
          const ids = [...generations.values()].filter((g) => g.run_id === content.run_id && g.commit_ids.includes(c.commit_id!)).map((g) => g.generation_id);
          return { cell_id: c.cell_id, generations: ids, metric: content.metric ?? null, tracks: content.tracks, transforms: content.transforms, inverted: content.inverted };
        });
      summaries = await flameSummaries(connection, written, requests);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
    rmSync(scratch, { recursive: true, force: true });
  }

  const report = redaction.report();
  const title = doc.investigation.title;
  const record: RedactionRecord = {
    mode: redactionMode(allow),
    chosen_by: chosenBy,
    choices: Object.fromEntries(TOKEN_KINDS.map((k) => [k, allow.has(k) ? "allow" : "redact"])),
    key: "per-export, not kept",
    report,
  };
  const evidence = { generations: generations.size, files: [...generations.values()].reduce((n, g) => n + g.files.length, 0), source_bytes: sourceBytes, bundle_bytes: bundleBytes };
  if (input.preview) {
    return { result: { preview: true, title, report, redaction_mode: record.mode, parts: [], evidence, size_bytes: 0, elapsed_ms: performance.now() - started }, html: null };
  }

  progress.phase("packing the file", evidence.files, evidence.files);
  addPart("notebook.json", "application/json", new TextEncoder().encode(JSON.stringify(notebook)));
  addPart("summaries.json", "application/json", new TextEncoder().encode(JSON.stringify(summaries)));
  const dist = path.join(PACKAGE_ROOT, "node_modules", "@duckdb", "duckdb-wasm", "dist");
  addPart("duckdb/duckdb-eh.wasm.gz", "application/wasm", await engineWasmGzip(dist), "gzip");
  addPart("duckdb/duckdb-browser-eh.worker.js.gz", "text/javascript", gzipSync(readFileSync(path.join(dist, "duckdb-browser-eh.worker.js")), { level: 9 }), "gzip");
  addPart("viewer.js.gz", "text/javascript", gzipSync(await buildViewer(), { level: 9 }), "gzip");
  // What the first paint needs comes first (the viewer runs as soon as its part is parsed); then the evidence and the engine.
  const rank = (name: string) => ["notebook.json", "summaries.json", "viewer.js.gz"].indexOf(name) + 1 || (name.startsWith("evidence/") ? 4 : 5);
  specs.sort((a, b) => rank(a.name) - rank(b.name));

  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    created_at: nowIso(),
    emberscope_version: packageJson.version,
    subject: input.subject.kind === "investigation" ? { kind: "investigation", investigation_id: input.subject.investigation_id } : { kind: "run", run_id: input.subject.run_id, view: input.subject.view },
    title: (notebook as NotebookDocument).investigation.title,
    commits,
    runs: [...new Set([...generations.values()].map((g) => g.run_id).filter((r): r is string => r !== null))].map((run_id) => ({ run_id, title: null })),
    generations: [...generations.values()].map(({ objects: _objects, ...g }) => g),
    evidence: { filtered_to_runs: cited.runs.size > 0, compression: "zstd", source_bytes: sourceBytes, bundle_bytes: bundleBytes },
    native_artifacts: "excluded",
    max_sensitivity: "normal",
    redaction: record,
    engine: { name: "duckdb-wasm", version: DUCKDB_WASM_VERSION, bundle: "eh" },
    parts: specs,
  };
  const html = renderBundle(manifest, parts);
  progress.signal.throwIfAborted();
  return {
    result: {
      preview: false,
      title: manifest.title,
      report,
      redaction_mode: record.mode,
      parts: specs.map((p) => ({ name: p.name, size_bytes: p.size_bytes, sha256: p.sha256 })),
      evidence,
      size_bytes: Buffer.byteLength(html),
      elapsed_ms: performance.now() - started,
    },
    html,
  };
}

/**
 * The engine's wasm gzip'd once per process (every export carries the same bytes). Level 6: level 9
 * saved 0.05 MB of 7.6 MB for about 20 s more on this machine.
 */
let engineGzip: Promise<Uint8Array> | null = null;
function engineWasmGzip(dist: string): Promise<Uint8Array> {
  engineGzip ??= Promise.resolve().then(() => gzipSync(readFileSync(path.join(dist, "duckdb-eh.wasm")), { level: 6 }));
  return engineGzip;
}

/** Where the CLI writes: a path the person named, its folder existing. */
async function writeOut(out: string, html: string): Promise<string> {
  const target = path.resolve(out);
  const dir = await fsp.stat(path.dirname(target)).catch(() => null);
  if (!dir?.isDirectory()) throw new EmberscopeError("INVALID_ARGUMENTS", "The --out file's folder does not exist.", { details: { argument: "out" } });
  const staged = `${target}.partial-${process.pid}`;
  await fsp.writeFile(staged, html);
  await fsp.rename(staged, target);
  return target;
}

export const createExport = defineService({
  name: "exports.create",
  summary: "Export an investigation (or one run's view) as one self-contained, redacted HTML file that opens offline; with preview, only report every redaction by kind, count and first place.",
  kind: "mutation",
  input: ExportInput.extend({ out: z.string().min(1).max(4096).optional().describe("Where to write the file (CLI); omitted with preview.") }).strict(),
  output: ExportResult.extend({ out: z.string().nullable() }),
  handler: async (input, { ws, ctx }) => {
    if (!input.preview && !input.out) throw new EmberscopeError("INVALID_ARGUMENTS", "Name the file to write with --out (or ask for --preview).", { details: { argument: "out" } });
    const built = await buildExport(ws, ctx, input);
    const out = built.html !== null && input.out ? await writeOut(input.out, built.html) : null;
    return { ...built.result, out: out ? path.basename(out) : null };
  },
});

export const VerifyResult = z.object({
  ok: z.literal(true),
  title: z.string(),
  parts: z.array(z.object({ name: z.string(), size_bytes: z.number().int(), sha256: z.string() })),
  redaction: z.object({ mode: z.string(), choices: z.record(z.string(), z.string()) }),
  scan: z.object({ strings: z.number().int(), found: z.record(z.string(), z.number().int()).describe("Values found per kind; kinds the manifest allowed may be found, redacted kinds never.") }),
});

export const verifyExport = defineWorkspacelessService({
  name: "exports.verify",
  summary: "Check an export file: every part's sha256 against its manifest (a changed byte names the part) and a re-scan of its notebook and Parquet (values, dictionaries, statistics) for anything of a redacted kind.",
  kind: "query",
  input: z.object({ file: z.string().min(1).max(4096) }).strict(),
  output: VerifyResult,
  handler: async (input) => {
    const text = await fsp.readFile(path.resolve(input.file), "utf8").catch(() => {
      throw new EmberscopeError("INVALID_ARGUMENTS", "The export file cannot be read.", { details: { argument: "file" } });
    });
    const bundle = readBundle(text);
    const redactor = createRedactor({ projectRoot: "/nonexistent-project-root", userNames: LOCAL_NAMES.users, hostNames: LOCAL_NAMES.hosts, tokenFor: () => "000000", exportRules: true });
    const scan = await scanBundle(bundle, (s) => redactor(s).counts, EXPORT_VERBATIM_KEYS);
    const leaks = Object.entries(scan.found).filter(([kind, n]) => n > 0 && bundle.manifest.redaction.choices[kind] === "redact");
    if (leaks.length) {
      throw new EmberscopeError("BUNDLE_LEAKS", "The export holds values of kinds its manifest says were redacted.", {
        details: { findings: leaks.map(([kind, count]) => ({ kind, count, parts: scan.where[kind] ?? [] })) },
      });
    }
    return {
      ok: true as const,
      title: bundle.manifest.title,
      parts: bundle.manifest.parts.map((p) => ({ name: p.name, size_bytes: p.size_bytes, sha256: p.sha256 })),
      redaction: { mode: bundle.manifest.redaction.mode, choices: bundle.manifest.redaction.choices },
      scan: { strings: scan.strings, found: scan.found },
    };
  },
});

export const ImportBundleResult = z.object({
  investigation_id: z.string(),
  title: z.string(),
  runs: z.array(z.string()),
  commits: z.array(z.string()),
  generations: z.number().int(),
  head_commit_id: z.string(),
});

/**
 * Brings a verified bundle into this workspace as read-only evidence: its runs (ids kept, source
 * `export-bundle`), its generations (the bundle's Parquet as objects), its commits (ids kept,
 * each holding exactly what the bundle carried for it) and a new HEAD that adds them to what was
 * visible; then the notebook, through the notebook format's import (ids kept, marked imported).
 */
export const importBundle = defineService({
  name: "exports.import",
  summary: "Import an export file into this workspace as read-only evidence with its notebook (ids kept, marked imported).",
  kind: "mutation",
  input: z.object({ file: z.string().min(1).max(4096) }).strict(),
  output: ImportBundleResult,
  handler: async (input, { ws }) => {
    const text = await fsp.readFile(path.resolve(input.file), "utf8").catch(() => {
      throw new EmberscopeError("INVALID_ARGUMENTS", "The export file cannot be read.", { details: { argument: "file" } });
    });
    const { manifest, parts } = readBundle(text);
    const doc = JSON.parse(new TextDecoder().decode(parts.get("notebook.json")!)) as Record<string, unknown>;
    for (const g of manifest.generations) {
      if (ws.db.prepare("SELECT 1 FROM generations WHERE id = ?").get(g.generation_id)) {
        throw new EmberscopeError("INVESTIGATION_EXISTS", "This workspace already holds evidence of that export (imported before, or exported from here).", { details: { generation_id: g.generation_id } });
      }
    }
    for (const c of manifest.commits) {
      if (ws.db.prepare("SELECT 1 FROM commits WHERE id = ?").get(c.commit_id)) {
        throw new EmberscopeError("INVESTIGATION_EXISTS", "This workspace already holds a commit of that export.", { details: { commit_id: c.commit_id } });
      }
    }
    // Bytes first (objects are immutable and unreachable until the transaction names them).
    const manifestObject = await ws.objects.put(new TextEncoder().encode(JSON.stringify(manifest)));
    // One artifact per run (the manifest's digest and the run): a run's generations are found
    // through its registrations, so runs must not share one.
    const runIds = [...new Set(manifest.generations.map((g) => g.run_id).filter((r): r is string => r !== null))];
    const runArtifacts = new Map<string, { id: string; size: number }>();
    for (const runId of runIds) {
      const object = await ws.objects.put(new TextEncoder().encode(JSON.stringify({ format: BUNDLE_FORMAT, manifest_sha256: sha256Hex(new TextEncoder().encode(JSON.stringify(manifest))), run_id: runId })));
      runArtifacts.set(runId, { id: object.id, size: object.size });
    }
    const stored = new Map<string, { object_id: string; size_bytes: number }>();
    for (const g of manifest.generations) for (const f of g.files) {
      const object = await ws.objects.put(parts.get(f.part)!);
      stored.set(f.part, { object_id: object.id, size_bytes: object.size });
    }
    const now = nowIso();
    const head = writeTransaction(ws.db, () => {
      ws.db.prepare("INSERT OR IGNORE INTO artifacts (id, size_bytes, created_at) VALUES (?, ?, ?)").run(manifestObject.id, manifestObject.size, now);
      for (const runId of runIds) {
        const artifact = runArtifacts.get(runId)!;
        ws.db.prepare("INSERT OR IGNORE INTO artifacts (id, size_bytes, created_at) VALUES (?, ?, ?)").run(artifact.id, artifact.size, now);
        if (!runExists(ws.db, runId)) {
          ws.db
            .prepare(
              `INSERT INTO runs (id, kind, source, title, status, execution_state, capture_state, extraction_state, limitations, details, revision, created_at, updated_at)
               VALUES (?, 'import', 'export-bundle', ?, 'succeeded', 'not_applicable', 'not_applicable', 'succeeded', '[]', ?, 1, ?, ?)`,
            )
            .run(runId, `${manifest.title} (imported export)`, JSON.stringify({ imported_export: { title: manifest.title, created_at: manifest.created_at, redaction: manifest.redaction.mode } }), now, now);
        }
        ws.db
          .prepare("INSERT OR IGNORE INTO registrations (id, artifact_id, run_id, kind, producer, media_type, format, file_name, sensitivity, created_at) VALUES (?, ?, ?, 'export-manifest', 'emberscope export', 'application/json', NULL, NULL, 'normal', ?)")
          .run(newId("reg"), artifact.id, runId, now);
      }
      for (const g of manifest.generations) {
        ws.db
          .prepare(
            `INSERT INTO generations (id, artifact_id, run_id, extractor, extractor_version, evidence_schema_version, limitations, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, '[]', ?, ?)`,
          )
          // Extractor version names the export: the (artifact, extractor, version) triple stays unique.
          .run(g.generation_id, g.run_id ? runArtifacts.get(g.run_id)!.id : manifestObject.id, g.run_id, g.extractor, `${g.extractor_version}+export:${g.generation_id}`, g.evidence_schema_version, JSON.stringify({ imported_export: "read-only" }), now);
        for (const f of g.files) {
          const s = stored.get(f.part)!;
          ws.db.prepare("INSERT INTO generation_files (generation_id, table_name, object_id, size_bytes, row_count) VALUES (?, ?, ?, ?, ?)").run(g.generation_id, f.table, s.object_id, s.size_bytes, f.row_count);
        }
      }
      // The bundle's commits keep their ids, each exactly what the bundle carried for it; then a
      // HEAD that adds every imported generation to what this workspace saw before.
      let parent = headCommit(ws.db);
      const before = parent.commit_id;
      for (const c of [...manifest.commits].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0))) {
        ws.db.prepare("INSERT INTO commits (id, seq, parent_id, message, created_at) VALUES (?, ?, ?, ?, ?)").run(c.commit_id, parent.seq + 1, parent.commit_id, `imported from the export "${manifest.title.slice(0, 100)}"`, now);
        for (const id of c.generation_ids) ws.db.prepare("INSERT INTO commit_generations (commit_id, generation_id) VALUES (?, ?)").run(c.commit_id, id);
        parent = getCommit(ws.db, c.commit_id);
      }
      const headId = newId("cmt");
      ws.db.prepare("INSERT INTO commits (id, seq, parent_id, message, created_at) VALUES (?, ?, ?, ?, ?)").run(headId, parent.seq + 1, parent.commit_id, "HEAD after importing an export: what was visible, and the export's evidence", now);
      ws.db
        .prepare("INSERT INTO commit_generations (commit_id, generation_id) SELECT ?, generation_id FROM commit_generations WHERE commit_id = ?")
        .run(headId, before);
      for (const g of manifest.generations) ws.db.prepare("INSERT OR IGNORE INTO commit_generations (commit_id, generation_id) VALUES (?, ?)").run(headId, g.generation_id);
      return headId;
    });
    const imported = importDocument(ws, doc);
    return {
      investigation_id: imported.investigation.investigation_id,
      title: manifest.title,
      runs: [...new Set(manifest.generations.map((g) => g.run_id).filter((r): r is string => r !== null))],
      commits: manifest.commits.map((c) => c.commit_id),
      generations: manifest.generations.length,
      head_commit_id: head,
    };
  },
});

const WebExportInput = z.object({ investigation_id: z.string().min(1).max(128), choices: KindChoices.default({ allow: [], redact: [] }) }).strict();

/** The export dialog's preview (tRPC): every redaction by kind, count and first place; nothing written. */
export const previewExport = defineService({
  name: "exports.preview",
  summary: "Preview an investigation's export: every redaction by kind, count and first place, with the evidence sizes; nothing is written. Allowing a kind needs the person.",
  kind: "query",
  input: WebExportInput,
  output: ExportResult,
  handler: async (input, { ws, ctx }) => (await buildExport(ws, ctx, { subject: { kind: "investigation", investigation_id: input.investigation_id }, choices: input.choices, preview: true })).result,
});

export const fileNameOf = (title: string) => `${title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "investigation"}.emberscope.html`;

/** Where a finished export operation keeps its file: tmp/, named by the operation (gc sweeps it once the operation has ended). */
const builtFile = (ws: Workspace, operationId: string) => path.join(ws.layout.tmp, `${operationId}.export.html`);

/**
 * The export dialog's export (tRPC): an operation of kind `export`, held by this process's lease,
 * so operations.get shows its phase and progress (evidence files redacted of all) and
 * operations.cancel stops it between files. The choice is checked before it starts (an agent may
 * not widen); the file is kept in tmp/ for exports.download_built. Answers at once.
 */
export const startExport = defineService({
  name: "exports.start",
  summary: "Start building an investigation's export as an operation (phase, progress, cancel with operations.get / operations.cancel); download the file once it succeeded.",
  kind: "mutation",
  input: WebExportInput,
  output: z.object({ operation_id: z.string() }),
  handler: async (input, { ws, ctx }) => {
    resolveChoices(ctx, input.choices);
    exportDocument(ws.db, input.investigation_id, ws.id); // an unknown investigation is refused here, typed, before any operation exists
    const own = openWorkspace(ctx.locator);
    const job = startLeasedJob(own, { kind: "export", intent: { investigation_id: input.investigation_id, choices: input.choices } });
    void (async () => {
      try {
        const built = await buildExport(job.ws, ctx, { subject: { kind: "investigation", investigation_id: input.investigation_id }, choices: input.choices, preview: false }, job);
        job.assertHeld();
        job.phase("writing", built.result.evidence.files, built.result.evidence.files);
        await fsp.writeFile(builtFile(own, job.operationId), built.html!);
        job.finish({ state: "succeeded", result: { file_name: fileNameOf(built.result.title), size_bytes: built.result.size_bytes, redaction_mode: built.result.redaction_mode, title: built.result.title } });
      } catch (error) {
        const failure = toEmberscopeError(job.signal.aborted ? job.signal.reason : error);
        try {
          job.finish({ state: failure.code === "CANCELLED" ? "cancelled" : "failed", error: failure.toDocument() });
        } catch {
          // the lease was lost: reconciliation has ended the operation already
        }
      } finally {
        await job.close();
        own.close();
      }
    })();
    return { operation_id: job.operationId };
  },
});

/** The file of an export operation that succeeded (app/api/exports), by its operation id: never a path. */
export const builtExportForDownload = defineService({
  name: "exports.download_built",
  summary: "The HTML of an export operation that succeeded (the browser's download).",
  kind: "query",
  input: z.object({ operation_id: z.string().regex(/^op_[0-9a-z]{26}$/) }).strict(),
  output: z.object({ file_name: z.string(), html: z.string(), redaction_mode: z.string() }),
  handler: async (input, { ws }) => {
    const op = getOperation(ws.db, input.operation_id);
    if (op.kind !== "export") throw new EmberscopeError("INVALID_ARGUMENTS", "That operation is not an export.", { details: { argument: "operation_id" } });
    if (op.state !== "succeeded") {
      throw new EmberscopeError("INVALID_ARGUMENTS", `The export is ${op.state}, not finished: download it once operations.get says succeeded.`, { details: { argument: "operation_id", state: op.state } });
    }
    const result = op.result as { file_name: string; redaction_mode: string };
    const html = await fsp.readFile(builtFile(ws, op.operation_id), "utf8").catch(() => {
      throw new EmberscopeError("INVALID_ARGUMENTS", "The export's file is gone (removed by gc or a restart): export again.", { details: { argument: "operation_id" } });
    });
    return { file_name: result.file_name, html, redaction_mode: result.redaction_mode };
  },
});

/** The export dialog's download (app/api/exports): the file's bytes, never a path on the server. */
export const bundleForDownload = defineService({
  name: "exports.download",
  summary: "Build an investigation's export and hand its HTML to the caller (the browser's download).",
  kind: "mutation",
  input: WebExportInput,
  output: z.object({ file_name: z.string(), html: z.string(), result: ExportResult }),
  handler: async (input, { ws, ctx }) => {
    const built = await buildExport(ws, ctx, { subject: { kind: "investigation", investigation_id: input.investigation_id }, choices: input.choices, preview: false });
    return { file_name: fileNameOf(built.result.title), html: built.html!, result: built.result };
  },
});
