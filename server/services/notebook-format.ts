import { z } from "zod";
import { cellKind } from "../../analysis/notebook/cells";
import { EmberscopeError } from "../domain/errors";
import { nowIso } from "../domain/ids";
import { Investigation, InvestigationId, type Cell, type Finding, type Hypothesis } from "../domain/notebook";
import { DOCUMENT_LIMITS, NOTEBOOK_FORMAT, NOTEBOOK_VERSION, NotebookDocumentV1, SUPPORTED_VERSIONS, UPGRADERS, type NotebookDocument } from "../domain/notebook-document";
import { insertCell, listCellRows } from "../store/cells";
import { writeTransaction, type SqliteDatabase } from "../store/control-store";
import { getCommit } from "../store/corpus";
import { insertFinding, listFindingRows } from "../store/findings";
import { insertHypothesis, listHypothesisRows } from "../store/hypotheses";
import { findInvestigation, getInvestigation, insertInvestigation } from "../store/investigations";
import { knownCommits } from "../store/pins";
import packageJson from "../../package.json" with { type: "json" };
import type { Workspace } from "../store/workspace";
import { defineService } from "./service";

/**
 * The notebook JSON format's two services: export an investigation as a versioned document
 * (no evidence bytes), and import one — upgraded step by step from an older version, refused
 * when unknown or newer, checked whole, and written in one transaction with its ids kept.
 */

function invalid(path: string, message: string, details: Record<string, unknown> = {}): EmberscopeError {
  return new EmberscopeError("NOTEBOOK_INVALID", `The notebook document is invalid at ${path}: ${message}`, { details: { path, ...details } });
}

function unsupported(message: string, details: Record<string, unknown>): EmberscopeError {
  return new EmberscopeError("NOTEBOOK_VERSION_UNSUPPORTED", message, { details: { ...details, format: NOTEBOOK_FORMAT, supported_versions: SUPPORTED_VERSIONS } });
}

function parseVersion<S extends z.ZodType>(schema: S, doc: unknown, version: number): z.output<S> {
  const parsed = schema.safeParse(doc);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]] : issue.path;
  throw invalid(where.map(String).join(".") || "(document)", `${issue.message} (read as version ${version}).`, { version });
}

/**
 * Reads a notebook document of any supported version as the current one. The version is read,
 * never guessed: a document without one, of another format, or newer than this Emberscope is
 * refused; an older one goes through each upgrader in turn.
 */
export function readNotebookDocument(raw: unknown): { document: NotebookDocument; upgradedFrom: number } {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalid("(document)", "expected a JSON object.");
  const { format, version } = raw as { format?: unknown; version?: unknown };
  if (format !== NOTEBOOK_FORMAT) throw unsupported(`Not an Emberscope notebook: format ${JSON.stringify(format ?? null)}.`, { found_format: format ?? null });
  if (typeof version !== "number" || !Number.isInteger(version)) throw unsupported("The notebook document names no version; it is not guessed.", { found_version: version ?? null });
  if (version > NOTEBOOK_VERSION) throw unsupported(`The notebook is version ${version}, newer than this Emberscope reads (${NOTEBOOK_VERSION}); upgrade Emberscope.`, { found_version: version });
  let doc: unknown = raw;
  for (let v = version; v < NOTEBOOK_VERSION; v++) {
    const upgrader = UPGRADERS.find((u) => u.from === v);
    if (!upgrader) throw unsupported(`Notebook version ${v} is not one this Emberscope can upgrade.`, { found_version: version });
    doc = upgrader.upgrade(parseVersion(upgrader.reads, doc, v));
  }
  return { document: parseVersion(NotebookDocumentV1, doc, NOTEBOOK_VERSION), upgradedFrom: version };
}

/** What the document says must hold together (beyond each field's shape). */
function checkDocument(doc: NotebookDocument): void {
  const ids = new Set<string>();
  const unique = (id: string, path: string) => {
    if (ids.has(id)) throw invalid(path, `the id ${id} appears twice.`);
    ids.add(id);
  };
  unique(doc.investigation.investigation_id, "investigation.investigation_id");
  const hypotheses = new Set(doc.hypotheses.map((h, i) => (unique(h.hypothesis_id, `hypotheses.${i}.hypothesis_id`), h.hypothesis_id)));
  const findings = new Set(doc.findings.map((f, i) => (unique(f.finding_id, `findings.${i}.finding_id`), f.finding_id)));
  const cells = new Map<string, NotebookDocument["cells"][number]>();
  const positions = new Set<string>();
  const names = new Set<string>();
  doc.cells.forEach((cell, i) => {
    unique(cell.cell_id, `cells.${i}.cell_id`);
    cells.set(cell.cell_id, cell);
    if (positions.has(cell.position)) throw invalid(`cells.${i}.position`, "two cells share a position.");
    positions.add(cell.position);
    if (cell.name) {
      if (names.has(cell.name)) throw invalid(`cells.${i}.name`, `two cells are named ${cell.name}.`);
      names.add(cell.name);
    }
    const def = cellKind(cell.kind)!;
    if (def.readsEvidence !== (cell.commit_id !== null)) throw invalid(`cells.${i}.commit_id`, def.readsEvidence ? `a ${cell.kind} cell pins a commit.` : `a ${cell.kind} cell pins no commit.`);
    const records = def.records?.(cell.content as never) ?? {};
    for (const id of records.hypotheses ?? []) if (!hypotheses.has(id)) throw invalid(`cells.${i}.content.hypothesis_id`, `no hypothesis ${id} in the document.`);
    for (const id of records.findings ?? []) if (!findings.has(id)) throw invalid(`cells.${i}.content.finding_id`, `no finding ${id} in the document.`);
  });
  doc.findings.forEach((f, i) => {
    f.references.forEach((ref, j) => {
      if (ref.target.kind !== "cell") return;
      const cell = cells.get(ref.target.cell_id);
      if (!cell) throw invalid(`findings.${i}.references.${j}.target.cell_id`, `no cell ${ref.target.cell_id} in the document.`);
      if (cell.commit_id !== ref.target.commit_id) throw invalid(`findings.${i}.references.${j}.target.commit_id`, "the cited commit is not the cell's.");
    });
    if (f.assessment === "supported" && !f.references.some((r) => r.relation === "supports")) throw invalid(`findings.${i}.assessment`, "a supported finding needs a supports reference.");
    if ((f.lifecycle === "superseded") !== (f.superseded_by !== null)) throw invalid(`findings.${i}.superseded_by`, "superseded_by goes with lifecycle superseded, and only with it.");
    if (f.superseded_by !== null && (!findings.has(f.superseded_by) || f.superseded_by === f.finding_id)) throw invalid(`findings.${i}.superseded_by`, `no other finding ${f.superseded_by} in the document.`);
  });
}

/** The commit ids a notebook's cells pin and its references cite. */
function namedCommits(cells: readonly { commit_id: string | null }[], findings: readonly { references: Finding["references"] }[]): string[] {
  const out = new Set<string>();
  for (const c of cells) if (c.commit_id) out.add(c.commit_id);
  for (const f of findings) for (const r of f.references) out.add(r.target.commit_id);
  return [...out];
}

function commitFacts(db: SqliteDatabase, id: string): { commit_id: string; seq: number | null; created_at: string | null } {
  try {
    const c = getCommit(db, id);
    return { commit_id: id, seq: c.seq, created_at: c.created_at };
  } catch {
    return { commit_id: id, seq: null, created_at: null };
  }
}

export function exportDocument(db: SqliteDatabase, investigationId: string, workspaceId: string): NotebookDocument {
  const read = db.transaction(() => {
    const inv = getInvestigation(db, investigationId);
    const cells = listCellRows(db, investigationId, { includeDeleted: false, after: null, limit: DOCUMENT_LIMITS.cells });
    const hypotheses = listHypothesisRows(db, investigationId, DOCUMENT_LIMITS.hypotheses);
    const findings = listFindingRows(db, { investigation_id: investigationId }, null, DOCUMENT_LIMITS.findings).reverse();
    return { inv, cells, hypotheses, findings };
  });
  const { inv, cells, hypotheses, findings } = read.deferred();
  const author = (a: { actor: "person" | "agent"; client: string | null }) => ({ actor: a.actor, client: a.client });
  const stamps = (r: { revision: number; created_at: string; updated_at: string }) => ({ revision: r.revision, created_at: r.created_at, updated_at: r.updated_at });
  return {
    format: NOTEBOOK_FORMAT,
    version: NOTEBOOK_VERSION,
    exported_at: nowIso(),
    source: { workspace_id: workspaceId, emberscope_version: packageJson.version },
    investigation: { investigation_id: inv.investigation_id, title: inv.title, question: inv.question, status: inv.status, created_by: author(inv.created_by), ...stamps(inv) },
    cells: cells.map((c) => ({ cell_id: c.cell_id, position: c.position, name: c.name, commit_id: c.commit_id, created_by: author(c.created_by), ...stamps(c), kind: c.kind, content: c.content }) as NotebookDocument["cells"][number]),
    hypotheses: hypotheses.map((h) => ({ hypothesis_id: h.hypothesis_id, claim: h.claim, prediction: h.prediction, refuted_by: h.refuted_by, status: h.status, created_by: author(h.created_by), ...stamps(h) })),
    findings: findings.map((f) => ({
      finding_id: f.finding_id,
      title: f.title,
      claim: f.claim,
      kind: f.kind,
      evidence_level: f.evidence_level,
      assessment: f.assessment,
      lifecycle: f.lifecycle,
      superseded_by: f.superseded_by,
      limitations: f.limitations,
      next_steps: f.next_steps,
      references: f.references,
      created_by: author(f.created_by),
      ...stamps(f),
    })),
    commits: namedCommits(cells, findings).map((id) => commitFacts(db, id)),
  };
}

export const exportInvestigation = defineService({
  name: "investigations.export",
  summary: "Export an investigation as a versioned notebook document: cells with ids and pinned commits, hypotheses, findings, references; no evidence bytes.",
  kind: "query",
  input: z.object({ investigation_id: InvestigationId }).strict(),
  output: NotebookDocumentV1,
  handler: (input, { ws }) => exportDocument(ws.db, input.investigation_id, ws.id),
});

export const ImportResult = z.object({
  investigation: Investigation,
  counts: z.object({ cells: z.number().int(), hypotheses: z.number().int(), findings: z.number().int() }),
  upgraded_from: z.number().int().describe("The document's version as read (the current version when no upgrade was needed)."),
  missing_commits: z.array(z.string()).describe("Commits the notebook pins or cites that this workspace does not hold: those cells show no evidence until the evidence is imported."),
});

export const importInvestigation = defineService({
  name: "investigations.import",
  summary: "Import a notebook document (any supported version, upgraded step by step) as a new investigation that keeps its ids; it is marked as imported.",
  kind: "mutation",
  input: z.object({ document: z.record(z.string(), z.unknown()).describe("The parsed notebook document.") }).strict(),
  output: ImportResult,
  handler: (input, { ws }) => importDocument(ws, input.document),
});

/** Imports a parsed notebook document (any supported version) with its ids kept, marked imported; export bundles use it too. */
export function importDocument(ws: Workspace, raw: unknown): z.output<typeof ImportResult> {
    const { document: doc, upgradedFrom } = readNotebookDocument(raw);
    checkDocument(doc);
    const now = nowIso();
    return writeTransaction(ws.db, () => {
      const existing = findInvestigation(ws.db, doc.investigation.investigation_id);
      if (existing) {
        throw new EmberscopeError("INVESTIGATION_EXISTS", "This workspace already holds that investigation (imported before, or exported from here).", {
          details: { investigation_id: existing.investigation_id },
          recovery: { operation: "investigations.get", arguments: { investigation_id: existing.investigation_id }, safe_to_repeat: true },
        });
      }
      const taken = clashingId(ws.db, doc);
      if (taken) throw new EmberscopeError("INVESTIGATION_EXISTS", "A record of the document is already in this workspace under the same id.", { details: taken });
      const investigationId = doc.investigation.investigation_id;
      const investigation: Investigation = {
        ...doc.investigation,
        imported: { at: now, format_version: upgradedFrom, source_workspace_id: doc.source.workspace_id, exported_at: doc.exported_at },
      };
      insertInvestigation(ws.db, investigation);
      for (const h of doc.hypotheses) insertHypothesis(ws.db, { ...h, investigation_id: investigationId } as Hypothesis);
      for (const c of doc.cells) insertCell(ws.db, { ...c, investigation_id: investigationId, deleted: false } as Cell);
      for (const f of doc.findings) insertFinding(ws.db, { ...f, investigation_id: investigationId } as Finding);
      const named = namedCommits(doc.cells, doc.findings);
      const known = knownCommits(ws.db, named);
      return {
        investigation,
        counts: { cells: doc.cells.length, hypotheses: doc.hypotheses.length, findings: doc.findings.length },
        upgraded_from: upgradedFrom,
        missing_commits: named.filter((id) => !known.has(id)),
      };
    });
}

/** The first record id of the document this workspace already uses, if any. */
function clashingId(db: SqliteDatabase, doc: NotebookDocument): Record<string, string> | null {
  const probes: [string, string, string[]][] = [
    ["cells", "cell_id", doc.cells.map((c) => c.cell_id)],
    ["hypotheses", "hypothesis_id", doc.hypotheses.map((h) => h.hypothesis_id)],
    ["findings", "finding_id", doc.findings.map((f) => f.finding_id)],
  ];
  for (const [table, key, ids] of probes) {
    const stmt = db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`);
    const hit = ids.find((id) => stmt.get(id));
    if (hit) return { [key]: hit };
  }
  return null;
}
