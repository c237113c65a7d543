import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import {
  addCell,
  callService,
  deleteCell,
  exportInvestigation,
  importInvestigation,
  listInvestigations,
  moveCell,
  recordFinding,
  recordHypothesis,
  showInvestigation,
  createInvestigation,
  type ServiceContext,
} from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { seedImport } from "../helpers/seed";

const FIXTURE = path.join(import.meta.dirname, "..", "fixtures", "notebooks", "startup-v0.json");
const ctx = (root: string, actor: ServiceContext["actor"] = "cli", client?: string): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor, client });

async function refusal(promise: Promise<unknown>): Promise<EmberscopeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EmberscopeError) return error;
    throw error;
  }
  throw new Error("expected a typed error, got a result");
}

function freshWorkspace(): string {
  const root = tempProject();
  initWorkspace(root).close();
  return root;
}

describe("the notebook format", () => {
  it("export → import into a fresh workspace keeps ids, order, pins, authors and references, and marks the copy imported", async () => {
    const source = tempProject();
    const ws = initWorkspace(source);
    const a = await seedImport(ws, { title: "a", native: "main;a 1" });
    const b = await seedImport(ws, { title: "b", native: "main;b 2" });
    const sourceWorkspaceId = ws.id;
    ws.close();
    const inv = await callService(createInvestigation, ctx(source), { title: "Regression in b", question: "Why is b slower than a?" });
    const id = inv.investigation_id;
    const flameA = await callService(addCell, ctx(source), { investigation_id: id, kind: "flame", content: { run_id: a.run.run_id, zoom: "n42" }, commit_id: a.published.commit_id });
    const note = await callService(addCell, ctx(source, "agent", "claude-code"), { investigation_id: id, kind: "note", content: { markdown: "b adds a frame" } });
    const hot = await callService(addCell, ctx(source), { investigation_id: id, kind: "sql", name: "hot", content: { sql: "SELECT 1 AS x", view: { chart: { kind: "bar", x: "x" } } } });
    const gone = await callService(addCell, ctx(source), { investigation_id: id, kind: "note", content: { markdown: "scratch" } });
    await callService(deleteCell, ctx(source), { cell_id: gone.cell_id, expected_revision: 1 });
    await callService(moveCell, ctx(source), { cell_id: hot.cell_id, expected_revision: 1, after_cell_id: null });
    const compare = await callService(addCell, ctx(source), { investigation_id: id, kind: "compare", content: { base_run_id: a.run.run_id, candidate_run_id: b.run.run_id, normalize: true } });
    const hypothesis = await callService(recordHypothesis, ctx(source), { investigation_id: id, claim: "b calls more", prediction: "b's frame is new", refuted_by: "same frames" });
    const finding = await callService(recordFinding, ctx(source), {
      investigation_id: id,
      title: "b adds work",
      claim: "The candidate has a frame the base lacks.",
      kind: "regression",
      evidence_level: "observed",
      assessment: "supported",
      limitations: ["toy runs"],
      references: [
        { relation: "supports", target: { kind: "cell", cell_id: flameA.cell_id, commit_id: a.published.commit_id } },
        { relation: "supports", note: "side by side", target: { kind: "comparison", base_run_id: a.run.run_id, candidate_run_id: b.run.run_id, commit_id: b.published.commit_id } },
        { relation: "context", target: { kind: "query_result", sql: "SELECT 1 AS x", commit_id: b.published.commit_id, rows_digest: `sha256:${"0".repeat(64)}`, row_count: 1 } },
      ],
    });
    const exported = await callService(exportInvestigation, ctx(source), { investigation_id: id });
    expect(exported).toMatchObject({ format: "emberscope-notebook", version: 1, source: { workspace_id: sourceWorkspaceId } });
    expect(exported.cells.map((c) => c.cell_id)).toEqual([hot.cell_id, flameA.cell_id, note.cell_id, compare.cell_id, hypothesis.cell!.cell_id, finding.cell!.cell_id]);
    expect(exported.commits.map((c) => c.commit_id).sort()).toEqual([a.published.commit_id, b.published.commit_id].sort());
    expect(JSON.stringify(exported)).not.toContain("scratch");

    // Through bytes, as the CLI writes and reads it.
    const document = JSON.parse(JSON.stringify(exported));
    const target = freshWorkspace();
    const imported = await callService(importInvestigation, ctx(target), { document });
    expect(imported).toMatchObject({ counts: { cells: 6, hypotheses: 1, findings: 1 }, upgraded_from: 1, investigation: { investigation_id: id, imported: { format_version: 1, source_workspace_id: sourceWorkspaceId, exported_at: exported.exported_at } } });
    expect(imported.missing_commits.sort()).toEqual([a.published.commit_id, b.published.commit_id].sort());

    const before = await callService(showInvestigation, ctx(source), { investigation_id: id });
    const after = await callService(showInvestigation, ctx(target), { investigation_id: id });
    const { imported: mark, ...invAfter } = after.investigation;
    expect(mark).not.toBeNull();
    const { imported: unmarked, ...invBefore } = before.investigation;
    expect(unmarked).toBeNull();
    expect(invAfter).toEqual(invBefore);
    expect(after.cells).toEqual(before.cells);
    expect(after.hypotheses).toEqual(before.hypotheses);
    expect(after.findings).toEqual(before.findings);
    expect(after.findings[0].references).toEqual(finding.finding.references);
    expect(after.cells.find((c) => c.cell_id === note.cell_id)!.created_by).toEqual({ actor: "agent", client: "claude-code" });

    const again = await callService(exportInvestigation, ctx(target), { investigation_id: id });
    expect({ ...again, exported_at: null, source: null }).toEqual({ ...exported, exported_at: null, source: null, commits: exported.commits.map((c) => ({ commit_id: c.commit_id, seq: null, created_at: null })) });

    const twice = await refusal(callService(importInvestigation, ctx(target), { document }));
    expect(twice).toMatchObject({ code: "INVESTIGATION_EXISTS", details: { investigation_id: id } });
    const home = await refusal(callService(importInvestigation, ctx(source), { document }));
    expect(home.code).toBe("INVESTIGATION_EXISTS");
  });

  it("upgrades a version-0 file step by step instead of guessing", async () => {
    const raw = JSON.parse(readFileSync(FIXTURE, "utf8"));
    const root = freshWorkspace();
    const result = await callService(importInvestigation, ctx(root), { document: raw });
    expect(result.upgraded_from).toBe(0);
    expect(result.investigation).toMatchObject({ investigation_id: raw.notebook.id, title: raw.notebook.title, question: raw.notebook.question, status: "concluded", created_by: { actor: "person", client: null }, revision: 1, imported: { format_version: 0, source_workspace_id: null } });
    expect(result.missing_commits).toEqual(["cmt_01k6h2w0000000000000000c01"]);
    const view = await callService(showInvestigation, ctx(root), { investigation_id: raw.notebook.id });
    expect(view.cells.map((c) => [c.cell_id, c.kind, c.commit_id])).toEqual(raw.cells.map((c: { id: string; type: string; commit: string | null }) => [c.id, c.type === "markdown" ? "note" : c.type, c.commit]));
    expect(view.cells[0].content).toEqual({ markdown: raw.cells[0].source });
    expect(view.cells[1]).toMatchObject({ name: "hot", content: { sql: raw.cells[1].source, view: { chart: { kind: "bar", x: "name", y: "v" } } } });
    expect(view.cells[2]).toMatchObject({ content: raw.cells[2].state, created_by: { actor: "agent", client: "claude-code" } });
    expect(view.cells[3].content).toEqual({ hypothesis_id: raw.hypotheses[0].id });
    expect(view.hypotheses).toEqual([expect.objectContaining({ hypothesis_id: raw.hypotheses[0].id, refuted_by: raw.hypotheses[0].falsifier, status: "supported" })]);
    const [finding] = view.findings;
    expect(finding).toMatchObject({ finding_id: raw.findings[0].id, evidence_level: "observed", assessment: "supported", lifecycle: "active", superseded_by: null, limitations: ["one CI machine"], created_by: { actor: "agent", client: "claude-code" } });
    expect(finding.references).toEqual([
      { relation: "supports", note: "the widest frame", target: { kind: "cell", cell_id: raw.cells[2].id, commit_id: "cmt_01k6h2w0000000000000000c01" } },
      { relation: "context", target: { kind: "run", run_id: "run_01k6h2v0000000000000000r01", commit_id: "cmt_01k6h2w0000000000000000c01" } },
      { relation: "context", target: { kind: "commit", commit_id: "cmt_01k6h2w0000000000000000c01" } },
    ]);
  });

  it("refuses documents of another format, without a version, newer, or malformed, naming what is wrong and writing nothing", async () => {
    const raw = JSON.parse(readFileSync(FIXTURE, "utf8"));
    const root = freshWorkspace();
    const tryImport = (document: unknown) => refusal(callService(importInvestigation, ctx(root), { document }));

    const { version: _version, ...unversioned } = raw;
    expect(await tryImport(unversioned)).toMatchObject({ code: "NOTEBOOK_VERSION_UNSUPPORTED", details: { found_version: null, supported_versions: [0, 1] } });
    expect(await tryImport({ ...raw, version: 2 })).toMatchObject({ code: "NOTEBOOK_VERSION_UNSUPPORTED", details: { found_version: 2 } });
    expect(await tryImport({ ...raw, version: -1 })).toMatchObject({ code: "NOTEBOOK_VERSION_UNSUPPORTED" });
    expect(await tryImport({ ...raw, format: "jupyter" })).toMatchObject({ code: "NOTEBOOK_VERSION_UNSUPPORTED", details: { found_format: "jupyter" } });
    // A version-1 body labelled version 0 is read as version 0 and refused, not guessed at.
    const v1Shaped = { ...raw, investigation: { title: "x" }, notebook: undefined };
    expect(await tryImport(v1Shaped)).toMatchObject({ code: "NOTEBOOK_INVALID", details: { version: 0 } });
    expect(await tryImport({ ...raw, cells: [{ ...raw.cells[0], type: "poem" }] })).toMatchObject({ code: "NOTEBOOK_INVALID", details: { path: "cells.0.type" } });

    const upgraded = JSON.parse(JSON.stringify(raw));
    upgraded.findings[0].evidence = [];
    expect(await tryImport(upgraded)).toMatchObject({ code: "NOTEBOOK_INVALID", details: { path: "findings.0.assessment" } });
    const dupName = JSON.parse(JSON.stringify(raw));
    dupName.cells[0] = { ...dupName.cells[1], id: "cell_01k6h2xa0000000000000000a0" };
    expect(await tryImport(dupName)).toMatchObject({ code: "NOTEBOOK_INVALID", details: { path: "cells.1.name" } });
    const pinnedNote = JSON.parse(JSON.stringify(raw));
    pinnedNote.cells[0].commit = "cmt_01k6h2w0000000000000000c01";
    expect(await tryImport(pinnedNote)).toMatchObject({ code: "NOTEBOOK_INVALID", details: { path: "cells.0.commit_id" } });
    const badContent = JSON.parse(JSON.stringify(raw));
    badContent.cells[2].state = { run_id: "run_x", orientation: "sideways" };
    expect(await tryImport(badContent)).toMatchObject({ code: "NOTEBOOK_INVALID", details: { path: "cells.2.content.orientation", version: 1 } });
    expect(await tryImport([raw])).toMatchObject({ code: "INVALID_ARGUMENTS" });

    expect((await callService(listInvestigations, ctx(root), {})).items).toEqual([]);
  });
});
