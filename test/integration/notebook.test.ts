import { describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import {
  addCell,
  assessFinding,
  callService,
  changeCell,
  changeFinding,
  changeHypothesis,
  changeInvestigation,
  createInvestigation,
  deleteCell,
  listCellRevisions,
  listCells,
  listFindings,
  listInvestigations,
  moveCell,
  recordFinding,
  recordHypothesis,
  restoreCell,
  showCell,
  showInvestigation,
  type ServiceContext,
} from "../../server/services";
import { headCommit } from "../../server/store/corpus";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { seedImport } from "../helpers/seed";

const person = (root: string): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor: "cli" });
const agent = (root: string, client = "probe-agent"): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor: "agent", client });

async function refusal(promise: Promise<unknown>): Promise<EmberscopeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EmberscopeError) return error;
    throw error;
  }
  throw new Error("expected a typed error, got a result");
}

/** A workspace with one imported run, its commit, and an open investigation. */
async function notebook() {
  const root = tempProject();
  const ws = initWorkspace(root);
  const first = await seedImport(ws, { title: "first", native: "main;work 10" });
  ws.close();
  const inv = await callService(createInvestigation, person(root), { title: "Why is startup slow?", question: "What dominates the first second?" });
  return { root, inv, run: first.run.run_id, commit: first.published.commit_id };
}

describe("investigations as notebooks (services, real SQLite)", () => {
  it("creates an investigation as the person's, lists it with its counts, and changes it by compare-and-set", async () => {
    const { root, inv } = await notebook();
    expect(inv).toMatchObject({ investigation_id: expect.stringMatching(/^inv_/), status: "open", revision: 1, created_by: { actor: "person", client: null }, imported: null });
    const page = await callService(listInvestigations, person(root), { status: "open" });
    expect(page.items.map((i) => [i.investigation_id, i.counts])).toEqual([[inv.investigation_id, { cells: 0, hypotheses: 0, findings: 0 }]]);
    const concluded = await callService(changeInvestigation, person(root), { investigation_id: inv.investigation_id, expected_revision: 1, status: "concluded" });
    expect(concluded).toMatchObject({ status: "concluded", revision: 2, title: inv.title });
    const stale = await refusal(callService(changeInvestigation, person(root), { investigation_id: inv.investigation_id, expected_revision: 1, title: "Other" }));
    expect(stale.code).toBe("REVISION_CONFLICT");
    expect(stale.details).toMatchObject({ current_revision: 2, expected_revision: 1 });
    expect(stale.recovery).toEqual({ operation: "investigations.get", arguments: { investigation_id: inv.investigation_id }, safe_to_repeat: true });
    expect((await callService(listInvestigations, person(root), { status: "open" })).items).toEqual([]);
  });

  it("an evidence cell pins the HEAD of the moment and keeps it after a new import moves HEAD; re-pinning is an explicit revision", async () => {
    const { root, inv, run, commit } = await notebook();
    const flame = await callService(addCell, person(root), { investigation_id: inv.investigation_id, kind: "flame", content: { run_id: run, search: "work" } });
    expect(flame).toMatchObject({ kind: "flame", commit_id: commit, revision: 1, content: { run_id: run, search: "work" } });
    const note = await callService(addCell, person(root), { investigation_id: inv.investigation_id, kind: "note", content: { markdown: "Startup feels slow." } });
    expect(note.commit_id).toBeNull();

    const open = openWorkspace({ cwd: root, projectRoot: root });
    const second = await seedImport(open, { title: "second", native: "main;other 5" });
    const head = headCommit(open.db).commit_id;
    open.close();
    expect(head).toBe(second.published.commit_id);
    expect(head).not.toBe(commit);

    expect((await callService(showCell, person(root), { cell_id: flame.cell_id })).commit_id).toBe(commit);
    const later = await callService(addCell, person(root), { investigation_id: inv.investigation_id, kind: "flame", content: { run_id: second.run.run_id } });
    expect(later.commit_id).toBe(head);

    // The second run was published after the first cell's commit: that commit cannot show it.
    const notThere = await refusal(callService(addCell, person(root), { investigation_id: inv.investigation_id, kind: "flame", content: { run_id: second.run.run_id }, commit_id: commit }));
    expect(notThere.code).toBe("RUN_NOT_IN_COMMIT");
    expect(notThere.details).toMatchObject({ run_id: second.run.run_id, commit_id: commit });

    const repinned = await callService(changeCell, person(root), { cell_id: flame.cell_id, expected_revision: 1, commit_id: head });
    expect(repinned).toMatchObject({ commit_id: head, revision: 2, content: { run_id: run, search: "work" } });
    const notebookView = await callService(showInvestigation, person(root), { investigation_id: inv.investigation_id });
    expect(notebookView.cells.map((c) => [c.cell_id, c.commit_id])).toEqual([
      [flame.cell_id, head],
      [note.cell_id, null],
      [later.cell_id, head],
    ]);
    const floating = await refusal(callService(changeCell, person(root), { cell_id: flame.cell_id, expected_revision: 2, commit_id: "HEAD" }));
    expect(floating.code).toBe("INVALID_ARGUMENTS");
    expect(floating.details.argument).toBe("commit_id");
  });

  it("two updates from the same revision: the second gets REVISION_CONFLICT, and cells.revisions keeps both versions", async () => {
    const { root, inv } = await notebook();
    const cell = await callService(addCell, person(root), { investigation_id: inv.investigation_id, kind: "sql", name: "hot", content: { sql: "SELECT 1" } });
    expect(cell.content).toEqual({ sql: "SELECT 1", view: {} });
    const first = await callService(changeCell, person(root), { cell_id: cell.cell_id, expected_revision: 1, content: { sql: "SELECT 2", view: {} } });
    expect(first.revision).toBe(2);
    const second = await refusal(callService(changeCell, person(root), { cell_id: cell.cell_id, expected_revision: 1, content: { sql: "SELECT 3", view: {} } }));
    expect(second.code).toBe("REVISION_CONFLICT");
    expect(second.retryable).toBe(true);
    expect(second.details).toMatchObject({ cell_id: cell.cell_id, expected_revision: 1, current_revision: 2 });
    expect(second.recovery).toEqual({ operation: "cells.get", arguments: { cell_id: cell.cell_id }, safe_to_repeat: true });
    const revisions = await callService(listCellRevisions, person(root), { cell_id: cell.cell_id });
    expect(revisions.items.map((r) => [r.revision, (r.content as { sql: string }).sql])).toEqual([
      [2, "SELECT 2"],
      [1, "SELECT 1"],
    ]);
    expect((await callService(showCell, person(root), { cell_id: cell.cell_id })).content).toEqual({ sql: "SELECT 2", view: {} });
  });

  it("moves, deletes and restores a cell, each one revision of that cell only", async () => {
    const { root, inv } = await notebook();
    const add = (markdown: string, after?: string | null) => callService(addCell, person(root), { investigation_id: inv.investigation_id, kind: "note", content: { markdown }, ...(after !== undefined ? { after_cell_id: after } : {}) });
    const a = await add("a");
    const c = await add("c");
    const b = await add("b", a.cell_id);
    const zero = await add("zero", null);
    const order = async (include_deleted = false) => (await callService(listCells, person(root), { investigation_id: inv.investigation_id, include_deleted })).items.map((x) => (x.content as { markdown: string }).markdown);
    expect(await order()).toEqual(["zero", "a", "b", "c"]);

    const moved = await callService(moveCell, person(root), { cell_id: zero.cell_id, expected_revision: 1, after_cell_id: c.cell_id });
    expect(moved.revision).toBe(2);
    expect(await order()).toEqual(["a", "b", "c", "zero"]);
    for (const other of [a, b, c]) expect((await callService(showCell, person(root), { cell_id: other.cell_id })).revision).toBe(1);

    const deleted = await callService(deleteCell, person(root), { cell_id: b.cell_id, expected_revision: 1 });
    expect(deleted).toMatchObject({ deleted: true, revision: 2 });
    expect(await order()).toEqual(["a", "c", "zero"]);
    expect(await order(true)).toEqual(["a", "b", "c", "zero"]);
    await add("after a", a.cell_id);
    expect(await order(true)).toEqual(["a", "after a", "b", "c", "zero"]);

    const editDeleted = await refusal(callService(changeCell, person(root), { cell_id: b.cell_id, expected_revision: 2, content: { markdown: "B" } }));
    expect(editDeleted.code).toBe("CELL_DELETED");
    expect(editDeleted.recovery).toEqual({ operation: "cells.restore", arguments: { cell_id: b.cell_id, expected_revision: 2 }, safe_to_repeat: false });
    const restored = await callService(restoreCell, person(root), { cell_id: b.cell_id, expected_revision: 2 });
    expect(restored).toMatchObject({ deleted: false, revision: 3 });
    expect(await order()).toEqual(["a", "after a", "b", "c", "zero"]);
  });

  it("refuses bad cells with typed errors and writes nothing", async () => {
    const { root, inv, run } = await notebook();
    const id = inv.investigation_id;
    const unknownKind = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "poem", content: {} }));
    expect(unknownKind).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "kind" } });
    const badContent = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "sql", content: { sql: 42 } }));
    expect(badContent).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "content.sql", kind: "sql" } });
    const extraKey = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "note", content: { markdown: "x", html: "<b>" } }));
    expect(extraKey.details.argument).toBe("content.html");
    const badRange = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "trace", content: { run_id: run, window: [10, 5] } }));
    expect(badRange.details.argument).toBe("content.window");
    const missingRun = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "flame", content: { run_id: "run_nope" } }));
    expect(missingRun.code).toBe("RUN_NOT_FOUND");
    const noteWithCommit = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "note", content: { markdown: "x" }, commit_id: "cmt_0000000000" }));
    expect(noteWithCommit.details.argument).toBe("commit_id");
    const missingCommit = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "sql", content: { sql: "" }, commit_id: "cmt_0000000000" }));
    expect(missingCommit.code).toBe("COMMIT_NOT_FOUND");
    const reserved = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "sql", name: "samples", content: { sql: "" } }));
    expect(reserved.details.argument).toBe("name");
    const badName = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "sql", name: "Hot Frames", content: { sql: "" } }));
    expect(badName.details.argument).toBe("name");
    const noInvestigation = await refusal(callService(addCell, person(root), { investigation_id: "inv_missing", kind: "note", content: { markdown: "" } }));
    expect(noInvestigation.code).toBe("INVESTIGATION_NOT_FOUND");
    const badAnchor = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "note", content: { markdown: "" }, after_cell_id: "cell_missing" }));
    expect(badAnchor.code).toBe("CELL_NOT_FOUND");
    const foreignFinding = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "finding", content: { finding_id: "fnd_missing" } }));
    expect(foreignFinding.code).toBe("FINDING_NOT_FOUND");
    expect((await callService(showInvestigation, person(root), { investigation_id: id })).cells).toEqual([]);

    const hot = await callService(addCell, person(root), { investigation_id: id, kind: "sql", name: "hot", content: { sql: "SELECT 1" } });
    const taken = await refusal(callService(addCell, person(root), { investigation_id: id, kind: "sql", name: "hot", content: { sql: "SELECT 2" } }));
    expect(taken).toMatchObject({ code: "CELL_NAME_TAKEN", details: { name: "hot", cell_id: hot.cell_id } });
    const other = await callService(addCell, person(root), { investigation_id: id, kind: "sql", name: "cold", content: { sql: "SELECT 2" } });
    const renamed = await refusal(callService(changeCell, person(root), { cell_id: other.cell_id, expected_revision: 1, name: "hot" }));
    expect(renamed.code).toBe("CELL_NAME_TAKEN");
    expect((await callService(showCell, person(root), { cell_id: other.cell_id })).revision).toBe(1);

    // A deleted cell frees its name; restoring it while the name is taken again is refused.
    await callService(deleteCell, person(root), { cell_id: hot.cell_id, expected_revision: 1 });
    const again = await callService(addCell, person(root), { investigation_id: id, kind: "sql", name: "hot", content: { sql: "SELECT 3" } });
    const clash = await refusal(callService(restoreCell, person(root), { cell_id: hot.cell_id, expected_revision: 2 }));
    expect(clash).toMatchObject({ code: "CELL_NAME_TAKEN", details: { cell_id: again.cell_id } });
  });

  it("findings cite pinned evidence: supported needs a supports reference, and every cited commit, run and cell must exist there", async () => {
    const { root, inv, run, commit } = await notebook();
    const id = inv.investigation_id;
    const flame = await callService(addCell, person(root), { investigation_id: id, kind: "flame", content: { run_id: run } });
    const note = await callService(addCell, person(root), { investigation_id: id, kind: "note", content: { markdown: "n" } });
    const base = { investigation_id: id, title: "work dominates", claim: "work() takes most samples", evidence_level: "observed" };

    const unsupported = await refusal(callService(recordFinding, person(root), { ...base, assessment: "supported", references: [{ relation: "context", target: { kind: "commit", commit_id: commit } }] }));
    expect(unsupported.code).toBe("FINDING_UNSUPPORTED");
    const ghostCommit = await refusal(callService(recordFinding, person(root), { ...base, references: [{ relation: "supports", target: { kind: "run", run_id: run, commit_id: "cmt_doesnotexist" } }] }));
    expect(ghostCommit).toMatchObject({ code: "COMMIT_NOT_FOUND", details: { argument: "references.0.target.commit_id", commit_id: "cmt_doesnotexist" } });
    const headAlias = await refusal(callService(recordFinding, person(root), { ...base, references: [{ relation: "supports", target: { kind: "commit", commit_id: "HEAD" } }] }));
    expect(headAlias).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "references.0.target.commit_id" } });
    const noteCited = await refusal(callService(recordFinding, person(root), { ...base, references: [{ relation: "supports", target: { kind: "cell", cell_id: note.cell_id, commit_id: commit } }] }));
    expect(noteCited.details.argument).toBe("references.0.target.cell_id");
    const ghostRun = await refusal(callService(recordFinding, person(root), { ...base, references: [{ relation: "supports", target: { kind: "comparison", base_run_id: run, candidate_run_id: "run_nope", commit_id: commit } }] }));
    expect(ghostRun.code).toBe("RUN_NOT_FOUND");
    expect((await callService(listFindings, person(root), { investigation_id: id })).items).toEqual([]);

    const recorded = await callService(recordFinding, person(root), {
      ...base,
      kind: "root_cause",
      limitations: ["one run only"],
      references: [
        { relation: "supports", note: "the widest frame", target: { kind: "cell", cell_id: flame.cell_id, commit_id: commit } },
        { relation: "context", target: { kind: "query_result", sql: "SELECT 1", commit_id: commit, rows_digest: `sha256:${"a".repeat(64)}`, row_count: 1 } },
      ],
    });
    expect(recorded.finding).toMatchObject({ assessment: "unassessed", lifecycle: "active", kind: "root_cause", revision: 1 });
    expect(recorded.cell).toMatchObject({ kind: "finding", content: { finding_id: recorded.finding.finding_id }, commit_id: null });
    const assessed = await callService(assessFinding, person(root), { finding_id: recorded.finding.finding_id, expected_revision: 1, assessment: "supported" });
    expect(assessed).toMatchObject({ assessment: "supported", revision: 2 });
    const dropSupport = await refusal(callService(changeFinding, person(root), { finding_id: assessed.finding_id, expected_revision: 2, references: [] }));
    expect(dropSupport.code).toBe("FINDING_UNSUPPORTED");

    const other = await callService(recordFinding, person(root), { ...base, title: "better explanation", add_cell: false });
    expect(other.cell).toBeNull();
    const superseded = await callService(changeFinding, person(root), { finding_id: assessed.finding_id, expected_revision: 2, lifecycle: "superseded", superseded_by: other.finding.finding_id });
    expect(superseded).toMatchObject({ lifecycle: "superseded", superseded_by: other.finding.finding_id, revision: 3 });
    const noSuccessor = await refusal(callService(changeFinding, person(root), { finding_id: other.finding.finding_id, expected_revision: 1, lifecycle: "superseded" }));
    expect(noSuccessor.details.argument).toBe("superseded_by");
    const view = await callService(showInvestigation, person(root), { investigation_id: id });
    expect(view.findings.map((f) => f.finding_id)).toEqual([other.finding.finding_id, recorded.finding.finding_id]);
    expect(view.cells.map((c) => c.kind)).toEqual(["flame", "note", "finding"]);
  });

  it("an agent's records are marked with its client name; it cannot change or reassess what a person wrote, and a person can change the agent's", async () => {
    const { root, inv, run, commit } = await notebook();
    const id = inv.investigation_id;
    const personNote = await callService(addCell, person(root), { investigation_id: id, kind: "note", content: { markdown: "mine" } });
    const personFinding = await callService(recordFinding, person(root), { investigation_id: id, title: "t", claim: "c", evidence_level: "inferred" });
    const personHypothesis = await callService(recordHypothesis, person(root), { investigation_id: id, claim: "GC pauses", prediction: "gc frames are wide", refuted_by: "no gc frames" });

    const agentNote = await callService(addCell, agent(root), { investigation_id: id, kind: "note", content: { markdown: "from the agent" } });
    expect(agentNote.created_by).toEqual({ actor: "agent", client: "probe-agent" });
    const agentFinding = await callService(recordFinding, agent(root), { investigation_id: id, title: "t", claim: "c", evidence_level: "observed", references: [{ relation: "supports", target: { kind: "run", run_id: run, commit_id: commit } }] });
    expect(agentFinding.finding.created_by).toEqual({ actor: "agent", client: "probe-agent" });
    expect(agentFinding.cell!.created_by).toEqual({ actor: "agent", client: "probe-agent" });

    for (const attempt of [
      callService(assessFinding, agent(root), { finding_id: personFinding.finding.finding_id, expected_revision: 1, assessment: "refuted" }),
      callService(changeFinding, agent(root), { finding_id: personFinding.finding.finding_id, expected_revision: 1, title: "mine now" }),
      callService(changeCell, agent(root), { cell_id: personNote.cell_id, expected_revision: 1, content: { markdown: "rewritten" } }),
      callService(deleteCell, agent(root), { cell_id: personNote.cell_id, expected_revision: 1 }),
      callService(moveCell, agent(root), { cell_id: personNote.cell_id, expected_revision: 1, after_cell_id: null }),
      callService(changeHypothesis, agent(root), { hypothesis_id: personHypothesis.hypothesis.hypothesis_id, expected_revision: 1, status: "refuted" }),
      callService(changeInvestigation, agent(root), { investigation_id: id, expected_revision: 1, status: "abandoned" }),
    ]) {
      const refused = await refusal(attempt);
      expect(refused.code).toBe("POLICY_DENIED");
      expect(refused.details.created_by).toEqual({ actor: "person", client: null });
    }
    expect((await callService(showInvestigation, person(root), { investigation_id: id })).findings.find((f) => f.finding_id === personFinding.finding.finding_id)).toMatchObject({ revision: 1, assessment: "unassessed" });

    const ownAssessed = await callService(assessFinding, agent(root), { finding_id: agentFinding.finding.finding_id, expected_revision: 1, assessment: "supported" });
    expect(ownAssessed.assessment).toBe("supported");
    const byPerson = await callService(assessFinding, person(root), { finding_id: agentFinding.finding.finding_id, expected_revision: 2, assessment: "inconclusive" });
    expect(byPerson).toMatchObject({ assessment: "inconclusive", created_by: { actor: "agent" } });
  });
});
