import { z } from "zod";
import { CellBodySchema, CellKind, CellName } from "../../analysis/notebook/cells";
import { ROWS_DIGEST_PATTERN } from "../../analysis/notebook/digest";

/**
 * Zod models of investigations as notebooks: the records every transport returns (CLI --json,
 * tRPC, MCP) and the notebook format embeds. Output schemas keep strings plain (no patterns):
 * agent-facing results are redacted strings. Input pieces (ids, commit ids) are checked.
 */

/** Who wrote a record: a person (CLI, web) or an agent, by the client name its MCP handshake gave. */
export const Author = z.object({
  actor: z.enum(["person", "agent"]),
  client: z.string().nullable().describe("The agent's MCP client name (clientInfo.name); null for people."),
});
export type Author = z.infer<typeof Author>;

export const InvestigationStatus = z.enum(["open", "concluded", "abandoned"]);
export const HypothesisStatus = z.enum(["open", "supported", "refuted", "inconclusive"]);
export const FindingKind = z.enum(["observation", "regression", "improvement", "root_cause", "other"]);
export const EvidenceLevel = z.enum(["observed", "derived", "inferred"]);
export const Assessment = z.enum(["unassessed", "supported", "refuted", "inconclusive"]);
export const Lifecycle = z.enum(["active", "superseded", "retracted"]);
export const Relation = z.enum(["supports", "contradicts", "context"]);

const Id = (prefix: string) =>
  z
    .string()
    .min(1)
    .max(128)
    .regex(new RegExp(`^${prefix}_[0-9a-z]+$`), `expected an id starting ${prefix}_`);
export const InvestigationId = Id("inv");
export const CellId = Id("cell");
export const HypothesisId = Id("hyp");
export const FindingId = Id("fnd");
/** A concrete commit: evidence is pinned, never read through a floating HEAD. */
export const CommitId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^cmt_[0-9a-z]+$/, 'expected a concrete commit id (cmt_…); "HEAD" moves, so it cannot be pinned or cited');
const RunId = z.string().min(1).max(128);

/** What a reference points at; every target names the commit it was read at. */
export const EvidenceTarget = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("cell"), cell_id: CellId, commit_id: CommitId }).strict(),
  z.object({ kind: z.literal("run"), run_id: RunId, commit_id: CommitId }).strict(),
  z.object({ kind: z.literal("commit"), commit_id: CommitId }).strict(),
  z
    .object({
      kind: z.literal("query_result"),
      sql: z.string().min(1).max(20_000),
      commit_id: CommitId,
      rows_digest: z.string().regex(ROWS_DIGEST_PATTERN, "expected sha256:<64 hex> (analysis/notebook/digest.ts)"),
      row_count: z.number().int().min(0),
    })
    .strict(),
  z.object({ kind: z.literal("comparison"), base_run_id: RunId, candidate_run_id: RunId, commit_id: CommitId }).strict(),
  // An experiment's analysis lives in the control store; the commit is its experiment's commit_id (HEAD once analysed).
  z.object({ kind: z.literal("experiment"), experiment_id: z.string().min(1).max(128).regex(/^exp_[0-9a-z]+$/, "expected an id starting exp_"), commit_id: CommitId }).strict(),
]);
export type EvidenceTarget = z.infer<typeof EvidenceTarget>;

export const EvidenceRef = z
  .object({
    relation: Relation,
    note: z.string().max(2000).optional(),
    target: EvidenceTarget,
  })
  .strict();
export type EvidenceRef = z.infer<typeof EvidenceRef>;

/** Set on an investigation that came in through `investigations.import`. */
export const ImportMark = z.object({
  at: z.string(),
  format_version: z.number().int().describe("The document's version before any upgrade."),
  source_workspace_id: z.string().nullable(),
  exported_at: z.string().nullable(),
});

export const Investigation = z.object({
  investigation_id: z.string(),
  title: z.string(),
  question: z.string(),
  status: InvestigationStatus,
  created_by: Author,
  imported: ImportMark.nullable(),
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Investigation = z.infer<typeof Investigation>;

const CellMeta = z.object({
  cell_id: z.string(),
  investigation_id: z.string(),
  position: z.string().describe("Order key: cells sort by it as plain strings (analysis/notebook/position.ts)."),
  name: z.string().nullable().describe("Later SQL cells read a named SQL cell as a table of this name."),
  commit_id: z.string().nullable().describe("The commit the cell reads (pinned); null for kinds that read no evidence."),
  created_by: Author,
  deleted: z.boolean(),
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A cell: its metadata with `{ kind, content }` of one registered kind. */
export const Cell = z.intersection(CellMeta, CellBodySchema);
export type Cell = z.infer<typeof CellMeta> & z.infer<typeof CellBodySchema>;

export const Hypothesis = z.object({
  hypothesis_id: z.string(),
  investigation_id: z.string(),
  claim: z.string(),
  prediction: z.string(),
  refuted_by: z.string().describe("What observation would refute it."),
  status: HypothesisStatus,
  created_by: Author,
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Hypothesis = z.infer<typeof Hypothesis>;

export const Finding = z.object({
  finding_id: z.string(),
  investigation_id: z.string(),
  title: z.string(),
  claim: z.string(),
  kind: FindingKind,
  evidence_level: EvidenceLevel,
  assessment: Assessment,
  lifecycle: Lifecycle,
  superseded_by: z.string().nullable(),
  limitations: z.array(z.string()),
  next_steps: z.array(z.string()),
  references: z.array(EvidenceRef),
  created_by: Author,
  revision: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Finding = z.infer<typeof Finding>;

/** Input bounds shared by the services (and the notebook format). */
export const Title = z.string().trim().min(1, "a title is needed (1 to 200 characters)").max(200);
export const Question = z.string().max(4000);
export const ClaimText = z.string().trim().min(1).max(4000);
export const ShortText = z.string().max(4000);
export const TextList = z.array(z.string().min(1).max(2000)).max(50);
export const References = z.array(EvidenceRef).max(100);

export { CellKind, CellName };
