import type { z } from "zod";
import { cellKind, CELL_KIND_NAMES, type CellKindDef } from "../../analysis/notebook/cells";
import { EmberscopeError } from "../domain/errors";
import type { Decision } from "../domain/experiment";
import type { Author, Cell, EvidenceRef, Finding } from "../domain/notebook";
import type { SqliteDatabase } from "../store/control-store";
import { findCell } from "../store/cells";
import { getCommit, headCommit } from "../store/corpus";
import { findExperiment } from "../store/experiments";
import { findFinding, findingNotFound } from "../store/findings";
import { hypothesisNotFound } from "../store/hypotheses";
import { runVisibleInCommit } from "../store/pins";
import { getRun } from "../store/runs";
import { DOCUMENT_LIMITS } from "../domain/notebook-document";
import type { ServiceContext } from "./service";

/**
 * The rules every notebook service shares: who wrote a record and who may change it, what a
 * cell's content and pin must be, and what evidence a reference may cite.
 */

/** Longest client name kept: it is self-declared text from the MCP handshake. */
const MAX_CLIENT_NAME = 200;

export function authorFor(ctx: ServiceContext): Author {
  if (ctx.actor !== "agent") return { actor: "person", client: null };
  const client = ctx.client?.trim().slice(0, MAX_CLIENT_NAME) || null;
  return { actor: "agent", client };
}

/** An agent may add to a person's investigation, but never change or reassess what a person wrote. */
export function refuseAgentOverPerson(ctx: ServiceContext, record: { created_by: Author; investigation_id: string }, what: string, ids: Record<string, string>): void {
  if (ctx.actor === "agent" && record.created_by.actor === "person") {
    throw new EmberscopeError("POLICY_DENIED", `A person wrote this ${what}; an agent cannot change or reassess it. Record your own instead.`, {
      details: { ...ids, investigation_id: record.investigation_id, created_by: record.created_by, actor: "agent" },
    });
  }
}

function invalid(argument: string, message: string, details: Record<string, unknown> = {}): EmberscopeError {
  return new EmberscopeError("INVALID_ARGUMENTS", message, { details: { argument, ...details } });
}

export function kindDef(kind: string): CellKindDef {
  const def = cellKind(kind);
  if (!def) throw invalid("kind", `Unknown cell kind ${kind}.`, { supported: CELL_KIND_NAMES });
  return def;
}

/** The content parsed by its kind's schema; a failure names the field (`content.sql`). */
export function parseContent(def: CellKindDef, raw: unknown): Record<string, unknown> {
  const parsed = def.content.safeParse(raw);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const issue = parsed.error.issues[0];
  const where = issue.code === "unrecognized_keys" ? issue.keys.join(", ") : issue.path.map(String).join(".");
  const argument = where ? `content.${where}` : "content";
  throw invalid(argument, `Invalid ${def.kind} cell content ${argument}: ${issue.message}.`, {
    kind: def.kind,
    issues: parsed.error.issues.slice(0, 10).map((i) => ({ path: ["content", ...i.path.map(String)].join("."), message: i.message })),
  });
}

/**
 * The commit a cell of this kind reads: the given concrete id (which must exist), or the HEAD of
 * this moment when none is given; null for kinds that read no evidence (which refuse one).
 */
export function pinFor(db: SqliteDatabase, def: CellKindDef, commitId: string | undefined): string | null {
  if (!def.readsEvidence) {
    if (commitId !== undefined) throw invalid("commit_id", `A ${def.kind} cell reads no evidence, so it pins no commit.`);
    return null;
  }
  return commitId === undefined ? headCommit(db).commit_id : getCommit(db, commitId).commit_id;
}

function requireRunAt(db: SqliteDatabase, runId: string, commitId: string, argument: string): void {
  getRun(db, runId);
  if (!runVisibleInCommit(db, runId, commitId)) {
    throw new EmberscopeError("RUN_NOT_IN_COMMIT", "The run's evidence is not visible in that commit (it was published later, or not at all).", {
      details: { argument, run_id: runId, commit_id: commitId },
      recovery: { operation: "runs.get", arguments: { run_id: runId }, safe_to_repeat: true },
    });
  }
}

/**
 * Checks what a cell's content names: its runs are visible in its commit, and the hypothesis or
 * finding it shows belongs to the same investigation.
 */
export function checkCellTargets(db: SqliteDatabase, investigationId: string, def: CellKindDef, content: Record<string, unknown>, commitId: string | null): void {
  if (def.runs && commitId) for (const runId of def.runs(content as z.output<typeof def.content>)) requireRunAt(db, runId, commitId, "content.run_id");
  const records = def.records?.(content as z.output<typeof def.content>) ?? {};
  for (const id of records.hypotheses ?? []) {
    const row = db.prepare("SELECT investigation_id FROM hypotheses WHERE id = ?").get(id) as { investigation_id: string } | undefined;
    if (row?.investigation_id !== investigationId) throw hypothesisNotFound(id, investigationId);
  }
  for (const id of records.findings ?? []) {
    if (findFinding(db, id)?.investigation_id !== investigationId) throw findingNotFound(id, investigationId);
  }
}

/**
 * Every reference names a concrete commit this workspace holds, and what it cites exists there:
 * a cell of the same investigation that reads evidence at exactly that commit, runs visible in it.
 */
export function checkReferences(db: SqliteDatabase, investigationId: string, refs: readonly EvidenceRef[]): void {
  refs.forEach((ref, i) => {
    const at = `references.${i}.target`;
    const t = ref.target;
    try {
      getCommit(db, t.commit_id);
    } catch (error) {
      if (error instanceof EmberscopeError && error.code === "COMMIT_NOT_FOUND") {
        throw new EmberscopeError("COMMIT_NOT_FOUND", "A reference cites a commit that does not exist in this workspace.", {
          details: { argument: `${at}.commit_id`, commit_id: t.commit_id },
          recovery: { operation: "commits.list", arguments: {}, safe_to_repeat: true },
        });
      }
      throw error;
    }
    if (t.kind === "cell") {
      const cell = findCell(db, t.cell_id);
      if (!cell || cell.investigation_id !== investigationId) {
        throw new EmberscopeError("CELL_NOT_FOUND", "A reference cites a cell that is not in this investigation.", {
          details: { argument: `${at}.cell_id`, cell_id: t.cell_id, investigation_id: investigationId },
          recovery: { operation: "cells.list", arguments: { investigation_id: investigationId }, safe_to_repeat: true },
        });
      }
      if (cell.commit_id === null) throw invalid(`${at}.cell_id`, `A ${cell.kind} cell reads no evidence; cite an evidence cell (or a run, commit or query result).`, { cell_id: cell.cell_id });
      if (cell.commit_id !== t.commit_id) {
        throw invalid(`${at}.commit_id`, "The cited commit is not the one the cell is pinned to; cite what the cell shows.", { cell_id: cell.cell_id, cell_commit_id: cell.commit_id });
      }
    } else if (t.kind === "run") {
      requireRunAt(db, t.run_id, t.commit_id, `${at}.run_id`);
    } else if (t.kind === "comparison") {
      requireRunAt(db, t.base_run_id, t.commit_id, `${at}.base_run_id`);
      requireRunAt(db, t.candidate_run_id, t.commit_id, `${at}.candidate_run_id`);
    } else if (t.kind === "experiment") {
      if (findExperiment(db, t.experiment_id)?.investigation_id !== investigationId) {
        throw new EmberscopeError("EXPERIMENT_NOT_FOUND", "A reference cites an experiment that is not in this investigation.", {
          details: { argument: `${at}.experiment_id`, experiment_id: t.experiment_id, investigation_id: investigationId },
          recovery: { operation: "experiments.list", arguments: { investigation_id: investigationId }, safe_to_repeat: true },
        });
      }
    }
  });
}

/** A finding assessed `supported` needs at least one `supports` reference. */
export function requireSupport(finding: Pick<Finding, "assessment" | "references">, findingId: string | null): void {
  if (finding.assessment !== "supported") return;
  if (finding.references.some((r) => r.relation === "supports")) return;
  throw new EmberscopeError("FINDING_UNSUPPORTED", "A finding cannot be supported without at least one `supports` reference to pinned evidence.", {
    details: {
      ...(findingId ? { finding_id: findingId } : {}),
      references: finding.references.length,
      supports: 0,
    },
    ...(findingId ? { recovery: { operation: "findings.get", arguments: { finding_id: findingId }, safe_to_repeat: true } } : {}),
  });
}

/** The decisions that support a finding of each kind: a regression needs a regression, an improvement an improvement. */
const SUPPORTING_DECISIONS: Partial<Record<Finding["kind"], readonly Decision[]>> = { regression: ["meaningful_regression"], improvement: ["meaningful_improvement"] };

/**
 * A finding assessed `supported` that cites an experiment as `supports` needs a decision of that
 * experiment (a variant against its baseline) meaningful in the claimed direction: a regression
 * finding needs meaningful_regression, an improvement meaningful_improvement, any other kind
 * either. An experiment not yet analysed, inconclusive or without a meaningful difference
 * supports nothing.
 */
export function requireExperimentDecisions(db: SqliteDatabase, finding: Pick<Finding, "assessment" | "references" | "kind">, findingId: string | null): void {
  if (finding.assessment !== "supported") return;
  const accepted = SUPPORTING_DECISIONS[finding.kind] ?? ["meaningful_regression", "meaningful_improvement"];
  for (const ref of finding.references) {
    if (ref.relation !== "supports" || ref.target.kind !== "experiment") continue;
    const decisions = findExperiment(db, ref.target.experiment_id)?.analysis?.comparisons.map((c) => ({ variant: c.variant, baseline: c.baseline, decision: c.decision })) ?? [];
    if (decisions.some((d) => accepted.includes(d.decision))) continue;
    throw new EmberscopeError("FINDING_UNSUPPORTED", `The cited experiment does not support a ${finding.kind} finding: its decision${decisions.length === 1 ? " is" : "s are"} ${decisions.map((d) => d.decision).join(", ") || "not analysed yet"}, and supported needs one of ${accepted.join(" or ")}.`, {
      details: { ...(findingId ? { finding_id: findingId } : {}), experiment_id: ref.target.experiment_id, decisions, accepted },
      recovery: { operation: "experiments.get", arguments: { experiment_id: ref.target.experiment_id }, safe_to_repeat: true },
    });
  }
}

export function refuseDeleted(cell: Cell): void {
  if (cell.deleted) {
    throw new EmberscopeError("CELL_DELETED", "The cell is deleted; restore it before changing it.", {
      details: { cell_id: cell.cell_id, revision: cell.revision },
      recovery: { operation: "cells.restore", arguments: { cell_id: cell.cell_id, expected_revision: cell.revision }, safe_to_repeat: false },
    });
  }
}

/** Hypotheses and findings per investigation are bounded as a notebook document bounds them. */
export function refuseOverLimit(db: SqliteDatabase, investigationId: string, table: "hypotheses" | "findings"): void {
  const n = (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE investigation_id = ?`).get(investigationId) as { n: number }).n;
  if (n >= DOCUMENT_LIMITS[table]) {
    throw new EmberscopeError("INVALID_ARGUMENTS", `An investigation holds at most ${DOCUMENT_LIMITS[table]} ${table}.`, { details: { argument: "investigation_id", limit: DOCUMENT_LIMITS[table] } });
  }
}
