import { z } from "zod";
import { CELL_KIND_NAMES, CellBodySchema, CellName } from "../../analysis/notebook/cells";
import { isPosition, positionsAfter } from "../../analysis/notebook/position";
import { Assessment, Author, ClaimText, CommitId, EvidenceLevel, EvidenceRef, FindingKind, HypothesisStatus, InvestigationStatus, Lifecycle, Question, ShortText, TextList, Title } from "./notebook";

/**
 * The notebook JSON format, written as zod: an investigation with its cells (ids, order, pinned
 * commits, content), hypotheses and findings with their references — no evidence bytes. The
 * document is versioned; older versions are upgraded one step at a time by an upgrader per
 * version (as Firefox Profiler upgrades its profiles), never guessed. docs/notebooks.md is
 * generated from these schemas.
 */

export const NOTEBOOK_FORMAT = "emberscope-notebook";
export const NOTEBOOK_VERSION = 1;

/** Bounds of one document (a notebook larger than this is not a notebook anyone reads). */
export const DOCUMENT_LIMITS = { cells: 5000, hypotheses: 1000, findings: 1000 } as const;

const Timestamp = z.iso.datetime({ offset: true });
const RecordId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-z]{1,120}$`), `expected an id starting ${prefix}_`);
const Revision = z.number().int().min(1);
const Stamps = { revision: Revision, created_at: Timestamp, updated_at: Timestamp };

const DocumentAuthor = Author.extend({ client: z.string().max(200).nullable() }).strict();

export const DocumentCell = z
  .object({
    cell_id: RecordId("cell"),
    position: z.string().refine(isPosition, "expected a position key (base-36 digits, not ending in 0)"),
    name: CellName.nullable(),
    commit_id: CommitId.nullable().describe("The pinned commit; null exactly for kinds that read no evidence."),
    created_by: DocumentAuthor,
    ...Stamps,
  })
  .strict()
  .and(CellBodySchema);

export const DocumentHypothesis = z
  .object({
    hypothesis_id: RecordId("hyp"),
    claim: ClaimText,
    prediction: ShortText,
    refuted_by: ShortText,
    status: HypothesisStatus,
    created_by: DocumentAuthor,
    ...Stamps,
  })
  .strict();

export const DocumentFinding = z
  .object({
    finding_id: RecordId("fnd"),
    title: Title,
    claim: ClaimText,
    kind: FindingKind,
    evidence_level: EvidenceLevel,
    assessment: Assessment,
    lifecycle: Lifecycle,
    superseded_by: RecordId("fnd").nullable(),
    limitations: TextList,
    next_steps: TextList,
    references: z.array(EvidenceRef).max(100),
    created_by: DocumentAuthor,
    ...Stamps,
  })
  .strict();

/** Version 1: the current format. */
export const NotebookDocumentV1 = z
  .object({
    format: z.literal(NOTEBOOK_FORMAT),
    version: z.literal(1),
    exported_at: Timestamp,
    source: z.object({ workspace_id: z.string().max(128).nullable(), emberscope_version: z.string().max(64).nullable() }).strict().describe("Where it was exported from."),
    investigation: z
      .object({ investigation_id: RecordId("inv"), title: Title, question: Question, status: InvestigationStatus, created_by: DocumentAuthor, ...Stamps })
      .strict(),
    cells: z.array(DocumentCell).max(DOCUMENT_LIMITS.cells).describe("In notebook order (ascending position)."),
    hypotheses: z.array(DocumentHypothesis).max(DOCUMENT_LIMITS.hypotheses),
    findings: z.array(DocumentFinding).max(DOCUMENT_LIMITS.findings),
    commits: z
      .array(z.object({ commit_id: CommitId, seq: z.number().int().min(0).nullable(), created_at: Timestamp.nullable() }).strict())
      .max(DOCUMENT_LIMITS.cells + 1000)
      .describe("Every commit the cells pin or the references cite, as the exporting workspace knew them (an importing workspace may lack them)."),
  })
  .strict();
export type NotebookDocumentV1 = z.infer<typeof NotebookDocumentV1>;
export type NotebookDocument = NotebookDocumentV1;

/**
 * Version 0: the draft written before the format was released. Its cells had a `type`
 * (markdown for notes) with the text in `source` and view state in `state`, in array order
 * without positions; authors were one string ("person" or "agent:<client>"); a notebook's state
 * was open or closed; findings had a `verdict`, a `retracted` flag and `evidence` entries of
 * cells, runs and commits; nothing had revisions.
 */
const V0Author = z.string().regex(/^(person|agent(:.{1,200})?)$/, 'expected "person" or "agent:<client>"');
const V0Evidence = z
  .object({
    relation: z.enum(["supports", "contradicts", "context"]),
    note: z.string().max(2000).optional(),
    kind: z.enum(["cell", "run", "commit"]),
    id: z.string().max(128).optional(),
    commit: CommitId,
  })
  .strict()
  .refine((e) => (e.kind === "commit") === (e.id === undefined), "cell and run evidence name an id; commit evidence does not");

export const NotebookDocumentV0 = z
  .object({
    format: z.literal(NOTEBOOK_FORMAT),
    version: z.literal(0),
    exported_at: Timestamp,
    notebook: z
      .object({ id: RecordId("inv"), title: Title, question: Question.default(""), state: z.enum(["open", "closed"]), author: V0Author, created_at: Timestamp })
      .strict(),
    cells: z
      .array(
        z
          .object({
            id: RecordId("cell"),
            type: z.enum(["markdown", "sql", "flame", "sandwich", "calltree", "trace", "compare", "hypothesis", "finding"]),
            source: z.string().max(100_000).optional(),
            name: z.string().max(63).nullable().optional(),
            state: z.record(z.string(), z.unknown()).optional(),
            ref: z.string().max(128).optional(),
            commit: CommitId.nullable(),
            author: V0Author,
            created_at: Timestamp,
          })
          .strict(),
      )
      .max(DOCUMENT_LIMITS.cells),
    hypotheses: z
      .array(
        z
          .object({ id: RecordId("hyp"), claim: ClaimText, prediction: ShortText.default(""), falsifier: ShortText.default(""), status: HypothesisStatus, author: V0Author, created_at: Timestamp })
          .strict(),
      )
      .max(DOCUMENT_LIMITS.hypotheses)
      .default([]),
    findings: z
      .array(
        z
          .object({
            id: RecordId("fnd"),
            title: Title,
            claim: ClaimText,
            kind: FindingKind,
            level: EvidenceLevel,
            verdict: Assessment,
            retracted: z.boolean().default(false),
            limitations: TextList.default([]),
            next_steps: TextList.default([]),
            evidence: z.array(V0Evidence).max(100).default([]),
            author: V0Author,
            created_at: Timestamp,
          })
          .strict(),
      )
      .max(DOCUMENT_LIMITS.findings)
      .default([]),
  })
  .strict();
export type NotebookDocumentV0 = z.infer<typeof NotebookDocumentV0>;

function authorFromV0(author: string): z.infer<typeof DocumentAuthor> {
  if (author === "person") return { actor: "person", client: null };
  return { actor: "agent", client: author.startsWith("agent:") ? author.slice("agent:".length) : null };
}

/** v0 → v1: positions from the array order, kinds and content from type/source/state, authors and verdicts renamed. */
function upgradeV0(doc: NotebookDocumentV0): unknown {
  const positions = positionsAfter(null, doc.cells.length);
  const stamps = (at: string) => ({ revision: 1, created_at: at, updated_at: at });
  const cellBody = (cell: NotebookDocumentV0["cells"][number]): { kind: string; content: unknown } => {
    switch (cell.type) {
      case "markdown":
        return { kind: "note", content: { markdown: cell.source ?? "" } };
      case "sql":
        return { kind: "sql", content: { sql: cell.source ?? "", view: cell.state ?? {} } };
      case "hypothesis":
        return { kind: "hypothesis", content: { hypothesis_id: cell.ref } };
      case "finding":
        return { kind: "finding", content: { finding_id: cell.ref } };
      default:
        return { kind: cell.type, content: cell.state ?? {} };
    }
  };
  const commits = new Set<string>();
  const cells = doc.cells.map((cell, i) => {
    if (cell.commit) commits.add(cell.commit);
    return { cell_id: cell.id, position: positions[i], name: cell.name ?? null, commit_id: cell.commit, created_by: authorFromV0(cell.author), ...stamps(cell.created_at), ...cellBody(cell) };
  });
  const findings = doc.findings.map((f) => ({
    finding_id: f.id,
    title: f.title,
    claim: f.claim,
    kind: f.kind,
    evidence_level: f.level,
    assessment: f.verdict,
    lifecycle: f.retracted ? "retracted" : "active",
    superseded_by: null,
    limitations: f.limitations,
    next_steps: f.next_steps,
    references: f.evidence.map((e) => {
      commits.add(e.commit);
      const target = e.kind === "cell" ? { kind: "cell", cell_id: e.id, commit_id: e.commit } : e.kind === "run" ? { kind: "run", run_id: e.id, commit_id: e.commit } : { kind: "commit", commit_id: e.commit };
      return { relation: e.relation, ...(e.note !== undefined ? { note: e.note } : {}), target };
    }),
    created_by: authorFromV0(f.author),
    ...stamps(f.created_at),
  }));
  return {
    format: NOTEBOOK_FORMAT,
    version: 1,
    exported_at: doc.exported_at,
    source: { workspace_id: null, emberscope_version: null },
    investigation: {
      investigation_id: doc.notebook.id,
      title: doc.notebook.title,
      question: doc.notebook.question,
      status: doc.notebook.state === "closed" ? "concluded" : "open",
      created_by: authorFromV0(doc.notebook.author),
      ...stamps(doc.notebook.created_at),
    },
    cells,
    hypotheses: doc.hypotheses.map((h) => ({ hypothesis_id: h.id, claim: h.claim, prediction: h.prediction, refuted_by: h.falsifier, status: h.status, created_by: authorFromV0(h.author), ...stamps(h.created_at) })),
    findings,
    commits: [...commits].map((commit_id) => ({ commit_id, seq: null, created_at: null })),
  };
}

export interface Upgrader {
  from: number;
  /** The schema of the version it reads (its failures name the field). */
  reads: z.ZodType;
  upgrade: (doc: any) => unknown;
  summary: string;
}

/** One upgrader per older version, each to the next version. */
export const UPGRADERS: readonly Upgrader[] = [{ from: 0, reads: NotebookDocumentV0, upgrade: upgradeV0, summary: "cells get positions from their order, kind and content from type/source/state; authors become {actor, client}; state closed → status concluded; verdict → assessment, retracted → lifecycle; evidence → references; every record starts at revision 1." }];

export const SUPPORTED_VERSIONS = [...UPGRADERS.map((u) => u.from), NOTEBOOK_VERSION];
export { CELL_KIND_NAMES };
