import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { EmberscopeError } from "../domain/errors";
import type { Cell, EvidenceRef, Finding } from "../domain/notebook";
import { NOTEBOOK_VERSION } from "../domain/notebook-document";
import {
  addCell,
  assessFinding,
  callService,
  createInvestigation,
  exportInvestigation,
  importInvestigation,
  listCells,
  listFindings,
  listInvestigations,
  recordFinding,
  recordHypothesis,
  showFinding,
  showInvestigation,
  type ServiceDef,
} from "../services";
import { integerFlag, stringFlag, type OptionSpec, type ParsedArgs } from "./args";
import { keyValues, pageFooter, table } from "./render";
import { requirePositionals, serviceCommand, type CliCommand } from "./service-command";

/** `investigations`, `cells`, `hypotheses` and `findings`: the notebook from the shell, on the same services. */

const LIST_OPTIONS: Record<string, OptionSpec> = {
  limit: { type: "string", valueName: "N", description: "Rows per page (1–500, default 50)." },
  cursor: { type: "string", valueName: "CURSOR", description: "Continue from a previous page's next_cursor." },
};

const INVESTIGATION = { name: "INVESTIGATION_ID", description: "The investigation (inv_…).", field: "investigation_id" };

function invalid(argument: string, message: string): EmberscopeError {
  return new EmberscopeError("INVALID_ARGUMENTS", message, { details: { argument } });
}

function listFlag(values: ParsedArgs["values"], name: string): string[] {
  const raw = values[name];
  return Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : [];
}

function jsonFlag(values: ParsedArgs["values"], name: string): unknown {
  const raw = stringFlag(values, name);
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw invalid(`--${name}`, `--${name} takes a JSON value.`);
  }
}

/** A cell's content from the shorthand flags (--markdown, --sql, --run) or --content JSON. */
function cellContent(args: ParsedArgs, kind: string | undefined): unknown {
  const given = ["content", "markdown", "sql", "run"].filter((f) => args.values[f] !== undefined);
  if (given.length > 1) throw invalid(`--${given[1]}`, `Give one of --content, --markdown, --sql and --run.`);
  if (args.values.content !== undefined) return jsonFlag(args.values, "content");
  if (args.values.markdown !== undefined) return { markdown: stringFlag(args.values, "markdown") };
  if (args.values.sql !== undefined) return { sql: stringFlag(args.values, "sql") };
  if (args.values.run !== undefined) return { run_id: stringFlag(args.values, "run") };
  return kind === "note" ? { markdown: "" } : kind === "sql" ? { sql: "" } : {};
}

/**
 * An evidence reference in shell spelling: `cell:CELL_ID@COMMIT`, `run:RUN_ID@COMMIT`,
 * `commit:COMMIT`, `comparison:BASE..CANDIDATE@COMMIT` or `experiment:EXPERIMENT_ID@COMMIT` (a query result needs --ref JSON).
 */
export function parseTarget(text: string, flag: string): EvidenceRef["target"] {
  const m = /^(cell|run|commit|comparison|experiment):([^@]+?)(?:@(.+))?$/.exec(text);
  if (!m) throw invalid(flag, `${flag} takes cell:ID@COMMIT, run:ID@COMMIT, commit:COMMIT, comparison:BASE..CANDIDATE@COMMIT or experiment:ID@COMMIT (got ${JSON.stringify(text)}).`);
  const [, kind, id, commit] = m;
  if (kind === "commit") {
    if (commit !== undefined) throw invalid(flag, `${flag} commit:COMMIT takes no @.`);
    return { kind: "commit", commit_id: id };
  }
  if (commit === undefined) throw invalid(flag, `${flag} ${kind}:… names the commit it was read at (@COMMIT).`);
  if (kind === "cell") return { kind: "cell", cell_id: id, commit_id: commit };
  if (kind === "run") return { kind: "run", run_id: id, commit_id: commit };
  if (kind === "experiment") return { kind: "experiment", experiment_id: id, commit_id: commit };
  const runs = id.split("..");
  if (runs.length !== 2 || !runs[0] || !runs[1]) throw invalid(flag, `${flag} comparison: takes BASE..CANDIDATE@COMMIT.`);
  return { kind: "comparison", base_run_id: runs[0], candidate_run_id: runs[1], commit_id: commit };
}

function referenceFlags(args: ParsedArgs): unknown[] {
  const refs: unknown[] = [];
  for (const relation of ["supports", "contradicts", "context"] as const) for (const t of listFlag(args.values, relation)) refs.push({ relation, target: parseTarget(t, `--${relation}`) });
  for (const raw of listFlag(args.values, "ref")) {
    try {
      refs.push(JSON.parse(raw));
    } catch {
      throw invalid("--ref", "--ref takes a JSON evidence reference.");
    }
  }
  return refs;
}

const author = (a: { actor: string; client: string | null }) => (a.actor === "agent" ? `agent${a.client ? ` (${a.client})` : ""}` : "person");

function cellSummary(c: Cell): string {
  const content = c.content as Record<string, unknown>;
  const text = c.kind === "note" ? String(content.markdown) : c.kind === "sql" ? String(content.sql) : JSON.stringify(content);
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

const cellRow = (c: Cell) => ({ cell: c.cell_id, kind: c.kind, name: c.name ?? "", commit: c.commit_id ?? "", by: author(c.created_by), rev: c.revision, content: `${c.deleted ? "(deleted) " : ""}${cellSummary(c)}` });

const referenceLine = (r: EvidenceRef) => {
  const t = r.target;
  const what = t.kind === "cell" ? `cell ${t.cell_id}` : t.kind === "run" ? `run ${t.run_id}` : t.kind === "comparison" ? `comparison ${t.base_run_id}..${t.candidate_run_id}` : t.kind === "experiment" ? `experiment ${t.experiment_id}` : t.kind === "query_result" ? `query result (${t.row_count} rows, ${t.rows_digest.slice(0, 19)}…)` : "commit";
  return `  ${r.relation} ${what} @ ${t.commit_id}${r.note ? ` — ${r.note}` : ""}`;
};

function findingText(f: Finding): string {
  return (
    keyValues([
      ["finding", f.finding_id],
      ["title", f.title],
      ["claim", f.claim],
      ["kind", f.kind],
      ["evidence level", f.evidence_level],
      ["assessment", f.assessment],
      ["lifecycle", f.lifecycle + (f.superseded_by ? ` by ${f.superseded_by}` : "")],
      ["by", author(f.created_by)],
      ["revision", f.revision],
    ]) +
    (f.limitations.length ? `\nLimitations:\n${f.limitations.map((l) => `  - ${l}`).join("\n")}` : "") +
    (f.next_steps.length ? `\nNext steps:\n${f.next_steps.map((l) => `  - ${l}`).join("\n")}` : "") +
    (f.references.length ? `\nReferences:\n${f.references.map(referenceLine).join("\n")}` : "\nReferences: none")
  );
}

const findingRow = (f: Finding) => ({ finding: f.finding_id, assessment: f.assessment, lifecycle: f.lifecycle, kind: f.kind, refs: f.references.length, by: author(f.created_by), title: f.title });

/** Longest notebook file `investigations import` reads. */
const MAX_NOTEBOOK_FILE_BYTES = 64 * 1024 * 1024;

function readNotebookFile(file: string, cwd: string): unknown {
  const full = path.resolve(cwd, file);
  let size: number;
  try {
    size = statSync(full).size;
  } catch {
    throw invalid("FILE", `No readable file at ${file}.`);
  }
  if (size > MAX_NOTEBOOK_FILE_BYTES) throw new EmberscopeError("ARTIFACT_TOO_LARGE", `A notebook file is at most ${MAX_NOTEBOOK_FILE_BYTES} bytes.`, { details: { size_bytes: size, limit_bytes: MAX_NOTEBOOK_FILE_BYTES } });
  const text = readFileSync(full, "utf8");
  try {
    return JSON.parse(text);
  } catch (error) {
    const at = /position (\d+)/.exec(String((error as Error).message))?.[1];
    throw new EmberscopeError("NOTEBOOK_INVALID", `The file is not JSON${at ? ` (at byte ${at})` : ""}.`, { details: { path: "(document)", ...(at ? { offset: Number(at) } : {}) } });
  }
}

/** Written beside the target and renamed into place, so a reader never sees half a notebook. */
function writeNotebookFile(file: string, cwd: string, text: string): string {
  const full = path.resolve(cwd, file);
  const temp = `${full}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, full);
  } catch {
    throw invalid("--out", `Cannot write ${file}.`);
  }
  return full;
}

export const NOTEBOOK_COMMANDS: CliCommand[] = [
  serviceCommand({
    path: ["investigations", "create"],
    service: createInvestigation,
    positionals: [{ name: "TITLE", description: "What the investigation is about (1–200 characters)." }],
    options: { question: { type: "string", valueName: "TEXT", description: "The question it answers." } },
    input: (args, [title]) => ({ title, question: stringFlag(args.values, "question") }),
    human: (i) => `Created investigation ${i.investigation_id}: ${i.title}\nNext: emberscope cells add ${i.investigation_id} --kind note --markdown "…"`,
  }),
  serviceCommand({
    path: ["investigations", "list"],
    service: listInvestigations,
    options: { ...LIST_OPTIONS, status: { type: "string", valueName: "STATUS", description: "Only investigations in this status: open, concluded, abandoned." } },
    input: (args) => ({ limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor"), status: stringFlag(args.values, "status") }),
    human: (page) =>
      page.items.length
        ? table(
            page.items.map((i) => ({ investigation: i.investigation_id, status: i.status, cells: i.counts.cells, findings: i.counts.findings, by: author(i.created_by), created: i.created_at, title: i.title })),
            ["investigation", "status", "cells", "findings", "by", "created", "title"],
          ) + pageFooter(page, "emberscope investigations list")
        : 'No investigations yet. Start one: emberscope investigations create "TITLE" --question "…"',
  }),
  serviceCommand({
    path: ["investigations", "show"],
    service: showInvestigation,
    positionals: [INVESTIGATION],
    options: { "include-deleted": { type: "boolean", description: "Also show deleted cells." } },
    input: (args, [id]) => ({ investigation_id: id, include_deleted: args.values["include-deleted"] === true }),
    human: (v) =>
      keyValues([
        ["investigation", v.investigation.investigation_id],
        ["title", v.investigation.title],
        ["question", v.investigation.question || "(none)"],
        ["status", v.investigation.status],
        ["by", author(v.investigation.created_by)],
        ["imported", v.investigation.imported ? `${v.investigation.imported.at} (format version ${v.investigation.imported.format_version})` : "no"],
        ["revision", v.investigation.revision],
      ]) +
      `\n\nCells (${v.counts.cells}${v.truncated.cells ? `, first ${v.cells.length}` : ""}):\n` +
      (v.cells.length ? table(v.cells.map(cellRow), ["cell", "kind", "name", "commit", "by", "rev", "content"]) : "  (none)") +
      (v.hypotheses.length ? `\n\nHypotheses:\n${table(v.hypotheses.map((h) => ({ hypothesis: h.hypothesis_id, status: h.status, by: author(h.created_by), claim: h.claim })), ["hypothesis", "status", "by", "claim"])}` : "") +
      (v.findings.length ? `\n\nFindings:\n${table(v.findings.map(findingRow), ["finding", "assessment", "lifecycle", "kind", "refs", "by", "title"])}` : ""),
  }),
  {
    path: ["investigations", "export"],
    summary: exportInvestigation.summary,
    options: { out: { type: "string", valueName: "FILE", description: "Write the notebook document to this file (default: print it)." } },
    positionals: [INVESTIGATION],
    services: [exportInvestigation as unknown as ServiceDef],
    execute: async (args, env) => {
      const [id] = requirePositionals(args, [INVESTIGATION]);
      const doc = await callService(exportInvestigation, env.ctx, { investigation_id: id });
      const out = stringFlag(args.values, "out");
      if (out === undefined) return { document: doc, human: JSON.stringify(doc, null, 2), exitCode: 0 };
      const text = `${JSON.stringify(doc, null, 2)}\n`;
      writeNotebookFile(out, env.ctx.locator.cwd, text);
      const summary = { investigation_id: id, out, bytes: Buffer.byteLength(text), format: doc.format, version: doc.version, counts: { cells: doc.cells.length, hypotheses: doc.hypotheses.length, findings: doc.findings.length } };
      return { document: summary, human: `Wrote ${out}: ${summary.counts.cells} cell(s), ${summary.counts.hypotheses} hypothesis(es), ${summary.counts.findings} finding(s) (notebook format version ${doc.version}).`, exitCode: 0 };
    },
  },
  {
    path: ["investigations", "import"],
    summary: importInvestigation.summary,
    options: {},
    positionals: [{ name: "FILE", description: "A notebook document (from investigations export, any supported version)." }],
    services: [importInvestigation as unknown as ServiceDef],
    execute: async (args, env) => {
      const [file] = requirePositionals(args, [{ name: "FILE", description: "" }]);
      const r = await callService(importInvestigation, env.ctx, { document: readNotebookFile(file, env.ctx.locator.cwd) });
      return {
        document: r,
        human:
          `Imported investigation ${r.investigation.investigation_id}: ${r.investigation.title} (${r.counts.cells} cells, ${r.counts.hypotheses} hypotheses, ${r.counts.findings} findings${r.upgraded_from !== NOTEBOOK_VERSION ? `; upgraded from format version ${r.upgraded_from}` : ""}).` +
          (r.missing_commits.length ? `\n${r.missing_commits.length} pinned commit(s) are not in this workspace; their cells show no evidence here: ${r.missing_commits.join(", ")}` : ""),
        exitCode: 0,
      };
    },
  },
  serviceCommand({
    path: ["cells", "add"],
    service: addCell,
    positionals: [INVESTIGATION],
    options: {
      kind: { type: "string", valueName: "KIND", description: "note, sql, flame, sandwich, calltree, trace, compare, hypothesis or finding." },
      content: { type: "string", valueName: "JSON", description: "The kind's content as JSON (docs/notebooks.md)." },
      markdown: { type: "string", valueName: "TEXT", field: "content", description: "A note's markdown (instead of --content)." },
      sql: { type: "string", valueName: "SQL", field: "content", description: "A SQL cell's query (instead of --content)." },
      run: { type: "string", valueName: "RUN_ID", field: "content", description: "The run of a flame, sandwich, calltree or trace cell (instead of --content)." },
      name: { type: "string", valueName: "NAME", description: "A name later SQL cells read as a table." },
      commit: { type: "string", valueName: "COMMIT", field: "commit_id", description: "The commit an evidence cell reads (default: HEAD's id now)." },
      after: { type: "string", valueName: "CELL_ID", field: "after_cell_id", description: "Insert after this cell (default: at the end)." },
      first: { type: "boolean", field: "after_cell_id", description: "Insert before every cell." },
    },
    input: (args, [id]) => {
      const kind = stringFlag(args.values, "kind") ?? (args.values.markdown !== undefined ? "note" : args.values.sql !== undefined ? "sql" : args.values.run !== undefined ? "flame" : undefined);
      if (args.values.first === true && args.values.after !== undefined) throw invalid("--first", "Give --first or --after, not both.");
      return {
        investigation_id: id,
        kind,
        content: cellContent(args, kind),
        name: stringFlag(args.values, "name"),
        commit_id: stringFlag(args.values, "commit"),
        ...(args.values.first === true ? { after_cell_id: null } : args.values.after !== undefined ? { after_cell_id: stringFlag(args.values, "after") } : {}),
      };
    },
    human: (c) => `Added ${c.kind} cell ${c.cell_id}${c.name ? ` (${c.name})` : ""}${c.commit_id ? ` pinned to ${c.commit_id}` : ""}.`,
  }),
  serviceCommand({
    path: ["cells", "list"],
    service: listCells,
    positionals: [INVESTIGATION],
    options: { ...LIST_OPTIONS, "include-deleted": { type: "boolean", description: "Also list deleted cells." } },
    input: (args, [id]) => ({ investigation_id: id, include_deleted: args.values["include-deleted"] === true, limit: integerFlag(args.values, "limit"), cursor: stringFlag(args.values, "cursor") }),
    human: (page) => (page.items.length ? table(page.items.map(cellRow), ["cell", "kind", "name", "commit", "by", "rev", "content"]) + pageFooter(page, "emberscope cells list") : "No cells yet."),
  }),
  serviceCommand({
    path: ["hypotheses", "record"],
    service: recordHypothesis,
    positionals: [INVESTIGATION],
    options: {
      claim: { type: "string", valueName: "TEXT", description: "What you think is going on." },
      prediction: { type: "string", valueName: "TEXT", description: "What the evidence should show if it holds." },
      "refuted-by": { type: "string", valueName: "TEXT", description: "What observation would refute it." },
      status: { type: "string", valueName: "STATUS", description: "open (default), supported, refuted or inconclusive." },
      "no-cell": { type: "boolean", field: "add_cell", description: "Do not add a hypothesis cell to the notebook." },
    },
    input: (args, [id]) => ({
      investigation_id: id,
      claim: stringFlag(args.values, "claim"),
      prediction: stringFlag(args.values, "prediction"),
      refuted_by: stringFlag(args.values, "refuted-by"),
      status: stringFlag(args.values, "status"),
      add_cell: args.values["no-cell"] !== true,
    }),
    human: (r) => `Recorded hypothesis ${r.hypothesis.hypothesis_id}${r.cell ? ` (cell ${r.cell.cell_id})` : ""}.`,
  }),
  serviceCommand({
    path: ["findings", "record"],
    service: recordFinding,
    positionals: [INVESTIGATION],
    options: {
      title: { type: "string", valueName: "TEXT", description: "A short title." },
      claim: { type: "string", valueName: "TEXT", description: "What the evidence shows." },
      kind: { type: "string", valueName: "KIND", description: "observation (default), regression, improvement, root_cause or other." },
      "evidence-level": { type: "string", valueName: "LEVEL", description: "observed, derived or inferred." },
      assessment: { type: "string", valueName: "A", description: "unassessed (default), supported, refuted or inconclusive." },
      limitation: { type: "string", valueName: "TEXT", multiple: true, field: "limitations", description: "A limitation (repeatable)." },
      "next-step": { type: "string", valueName: "TEXT", multiple: true, field: "next_steps", description: "A next step (repeatable)." },
      supports: { type: "string", valueName: "TARGET", multiple: true, field: "references", description: "Evidence that supports it: cell:ID@COMMIT, run:ID@COMMIT, commit:COMMIT, comparison:BASE..CANDIDATE@COMMIT (repeatable)." },
      contradicts: { type: "string", valueName: "TARGET", multiple: true, field: "references", description: "Evidence that contradicts it (as --supports)." },
      context: { type: "string", valueName: "TARGET", multiple: true, field: "references", description: "Evidence for context (as --supports)." },
      ref: { type: "string", valueName: "JSON", multiple: true, field: "references", description: "A whole evidence reference as JSON, e.g. a query_result (repeatable)." },
      "no-cell": { type: "boolean", field: "add_cell", description: "Do not add a finding cell to the notebook." },
    },
    input: (args, [id]) => ({
      investigation_id: id,
      title: stringFlag(args.values, "title"),
      claim: stringFlag(args.values, "claim"),
      kind: stringFlag(args.values, "kind"),
      evidence_level: stringFlag(args.values, "evidence-level"),
      assessment: stringFlag(args.values, "assessment"),
      limitations: listFlag(args.values, "limitation"),
      next_steps: listFlag(args.values, "next-step"),
      references: referenceFlags(args),
      add_cell: args.values["no-cell"] !== true,
    }),
    human: (r) => `Recorded finding ${r.finding.finding_id} (${r.finding.assessment}, ${r.finding.references.length} reference(s))${r.cell ? `, cell ${r.cell.cell_id}` : ""}.`,
  }),
  serviceCommand({
    path: ["findings", "list"],
    service: listFindings,
    options: {
      ...LIST_OPTIONS,
      investigation: { type: "string", valueName: "ID", field: "investigation_id", description: "Only this investigation's findings." },
      assessment: { type: "string", valueName: "A", description: "Only findings so assessed." },
      lifecycle: { type: "string", valueName: "L", description: "active, superseded or retracted." },
      kind: { type: "string", valueName: "KIND", description: "Only findings of this kind." },
    },
    input: (args) => ({
      investigation_id: stringFlag(args.values, "investigation"),
      assessment: stringFlag(args.values, "assessment"),
      lifecycle: stringFlag(args.values, "lifecycle"),
      kind: stringFlag(args.values, "kind"),
      limit: integerFlag(args.values, "limit"),
      cursor: stringFlag(args.values, "cursor"),
    }),
    human: (page) => (page.items.length ? table(page.items.map(findingRow), ["finding", "assessment", "lifecycle", "kind", "refs", "by", "title"]) + pageFooter(page, "emberscope findings list") : "No findings."),
  }),
  serviceCommand({
    path: ["findings", "show"],
    service: showFinding,
    positionals: [{ name: "FINDING_ID", description: "The finding (fnd_…).", field: "finding_id" }],
    input: (_args, [id]) => ({ finding_id: id }),
    human: findingText,
  }),
  serviceCommand({
    path: ["findings", "assess"],
    service: assessFinding,
    positionals: [
      { name: "FINDING_ID", description: "The finding (fnd_…).", field: "finding_id" },
      { name: "ASSESSMENT", description: "supported (needs a supports reference), refuted, inconclusive or unassessed." },
    ],
    options: { revision: { type: "string", valueName: "N", field: "expected_revision", description: "The revision you read (findings show); refused if it changed since." } },
    input: (args, [id, assessment]) => ({ finding_id: id, assessment, expected_revision: integerFlag(args.values, "revision") }),
    human: (f) => `Finding ${f.finding_id} is ${f.assessment} (revision ${f.revision}).`,
  }),
];
