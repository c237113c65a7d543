import { LATEST_SCHEMA_VERSION } from "../../server/store/migrations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createRun } from "../../server/store/runs";
import { seedImport } from "../helpers/seed";
import { openWorkspace } from "../../server/store/workspace";
import { startServer, type RunningServer } from "../helpers/server";
import { cliTransport, directTransport, trpcTransport, type Outcome, type Transport } from "../helpers/transports";

/**
 * The behaviour contract, written once and run through every transport: a direct service call,
 * tRPC over real HTTP against the built app, and the CLI as a child process.
 */
async function behaviour(transport: Transport, projectRoot: string) {
  const expectError = (outcome: Outcome, code: string) => {
    expect(outcome.ok, `${transport.name}: expected ${code}`).toBe(false);
    return (outcome as Extract<Outcome, { ok: false }>).error;
  };
  const expectOk = (outcome: Outcome) => {
    expect(outcome.ok, `${transport.name}: ${JSON.stringify(outcome)}`).toBe(true);
    return (outcome as Extract<Outcome, { ok: true }>).value;
  };

  const missing = expectError(await transport.call("workspace.status", {}), "WORKSPACE_NOT_FOUND");
  expect(missing).toEqual({
    code: "WORKSPACE_NOT_FOUND",
    message: "No Emberscope workspace found in the given project root.",
    retryable: false,
    details: { searched: "in the given project root" },
    recovery: { operation: "workspace.init", arguments: {}, safe_to_repeat: true },
  });

  const init = expectOk(await transport.call("workspace.init", {}));
  expect(init).toEqual({ workspace_id: expect.stringMatching(/^ws_/), schema_version: LATEST_SCHEMA_VERSION, project_root: ".", head_commit_id: expect.stringMatching(/^cmt_/) });

  const exists = expectError(await transport.call("workspace.init", {}), "WORKSPACE_EXISTS");
  expect(exists.code).toBe("WORKSPACE_EXISTS");

  const status = expectOk(await transport.call("workspace.status", {}));
  expect(status).toMatchObject({
    workspace_id: init.workspace_id,
    schema_version: LATEST_SCHEMA_VERSION,
    project_root: ".",
    head_commit_id: init.head_commit_id,
    counts: { runs: 0, artifacts: 0, commits: 1, generations: 0, operations_active: 0 },
  });

  expect(expectOk(await transport.call("runs.list", {}))).toEqual({ items: [], next_cursor: null, previous_cursor: null, truncated: false, limit: 50, matching: 0 });

  const ws = openWorkspace({ cwd: projectRoot, projectRoot });
  const created = ["first", "second", "third"].map((title) => createRun(ws.db, { kind: "import", source: "folded", title }));
  ws.close();

  const page1 = expectOk(await transport.call("runs.list", { limit: 2 }));
  expect(page1.items.map((r: { title: string }) => r.title)).toEqual(["third", "second"]);
  expect(page1.next_cursor).toEqual(expect.any(String));
  const page2 = expectOk(await transport.call("runs.list", { limit: 2, cursor: page1.next_cursor }));
  expect(page2.items.map((r: { run_id: string }) => r.run_id)).toEqual([created[0].run_id]);
  expect(page2.next_cursor).toBeNull();
  const back = expectOk(await transport.call("runs.list", { limit: 2, cursor: page2.previous_cursor }));
  expect(back.items.map((r: { run_id: string }) => r.run_id)).toEqual(page1.items.map((r: { run_id: string }) => r.run_id));
  expect(back).toMatchObject({ previous_cursor: null, matching: 3 });
  const found = expectOk(await transport.call("runs.list", { text: "SEC", order: "title" }));
  expect(found.items.map((r: { title: string }) => r.title)).toEqual(["second"]);

  const stale = expectError(await transport.call("runs.list", { limit: 2, cursor: page1.next_cursor, kind: "capture" }), "STALE_CURSOR");
  expect(stale).toMatchObject({ code: "STALE_CURSOR", recovery: { operation: "runs.list", arguments: { kind: "capture", limit: 2 } } });

  expect(expectOk(await transport.call("runs.get", { run_id: created[1].run_id }))).toEqual(created[1]);
  expect(expectError(await transport.call("runs.get", { run_id: "run_missing" }), "RUN_NOT_FOUND")).toEqual({
    code: "RUN_NOT_FOUND",
    message: "No run has that id.",
    retryable: false,
    details: { run_id: "run_missing" },
    recovery: { operation: "runs.list", arguments: {}, safe_to_repeat: true },
  });
  expect(expectError(await transport.call("runs.list", { limit: 0 }), "INVALID_ARGUMENTS")).toMatchObject({ code: "INVALID_ARGUMENTS", retryable: false });
  // The CLI names the argument by its flag (--from), the others by the field (created_from).
  expect(expectError(await transport.call("runs.list", { created_from: "last week" }), "INVALID_ARGUMENTS").details.argument).toMatch(/^(created_from|--from)$/);

  const renamed = expectOk(await transport.call("runs.update", { run_id: created[2].run_id, title: "third, renamed", expected_revision: 1 }));
  expect(renamed).toMatchObject({ run_id: created[2].run_id, title: "third, renamed", revision: 2 });
  expect(expectError(await transport.call("runs.update", { run_id: created[2].run_id, title: "lost", expected_revision: 1 }), "REVISION_CONFLICT")).toMatchObject({
    code: "REVISION_CONFLICT",
    retryable: true,
    details: { run_id: created[2].run_id, expected_revision: 1, current_revision: 2 },
    recovery: { operation: "runs.get", arguments: { run_id: created[2].run_id }, safe_to_repeat: true },
  });
  expect(expectOk(await transport.call("commits.get", { commit_id: "HEAD" }))).toMatchObject({ commit_id: init.head_commit_id, generations: [] });

  await notebookBehaviour(transport, projectRoot, { expectOk, expectError });
}

/** One notebook through the transport: create, add cells, record a finding citing a run, assess it. */
async function notebookBehaviour(
  transport: Transport,
  projectRoot: string,
  { expectOk, expectError }: { expectOk: (o: Outcome) => any; expectError: (o: Outcome, code: string) => any },
) {
  const ws = openWorkspace({ cwd: projectRoot, projectRoot });
  const seeded = await seedImport(ws, { title: "startup", native: "main;require 80\nmain;run 20" });
  ws.close();
  const runId = seeded.run.run_id;
  const commitId = seeded.published.commit_id;

  const inv = expectOk(await transport.call("investigations.create", { title: "Why is startup slow?", question: "What dominates?" }));
  expect(inv).toMatchObject({ investigation_id: expect.stringMatching(/^inv_/), status: "open", revision: 1, created_by: { actor: "person", client: null }, imported: null });
  const id = inv.investigation_id;
  const flame = expectOk(await transport.call("cells.add", { investigation_id: id, kind: "flame", content: { run_id: runId, search: "require" } }));
  expect(flame).toMatchObject({ kind: "flame", commit_id: commitId, content: { run_id: runId, search: "require" }, revision: 1, deleted: false });
  const note = expectOk(await transport.call("cells.add", { investigation_id: id, kind: "note", content: { markdown: "require() looks wide" } }));
  expect(note.commit_id).toBeNull();
  expect(expectError(await transport.call("cells.add", { investigation_id: id, kind: "poem", content: {} }), "INVALID_ARGUMENTS").code).toBe("INVALID_ARGUMENTS");

  const unsupported = expectError(await transport.call("findings.record", { investigation_id: id, title: "require dominates", claim: "80% of samples", evidence_level: "observed", assessment: "supported", references: [] }), "FINDING_UNSUPPORTED");
  expect(unsupported).toMatchObject({ code: "FINDING_UNSUPPORTED", retryable: false, details: { references: 0, supports: 0 } });

  const recorded = expectOk(
    await transport.call("findings.record", {
      investigation_id: id,
      title: "require dominates",
      claim: "80% of samples",
      evidence_level: "observed",
      references: [{ relation: "supports", target: { kind: "run", run_id: runId, commit_id: commitId } }],
    }),
  );
  expect(recorded.finding).toMatchObject({ assessment: "unassessed", revision: 1, references: [{ relation: "supports", target: { kind: "run", run_id: runId, commit_id: commitId } }] });
  expect(recorded.cell).toMatchObject({ kind: "finding", content: { finding_id: recorded.finding.finding_id } });
  const findingId = recorded.finding.finding_id;
  const assessed = expectOk(await transport.call("findings.assess", { finding_id: findingId, expected_revision: 1, assessment: "supported" }));
  expect(assessed).toMatchObject({ finding_id: findingId, assessment: "supported", revision: 2 });
  const stale = expectError(await transport.call("findings.assess", { finding_id: findingId, expected_revision: 1, assessment: "refuted" }), "REVISION_CONFLICT");
  expect(stale).toEqual({
    code: "REVISION_CONFLICT",
    message: "The finding changed since it was read (revision 2, not 1).",
    retryable: true,
    details: { finding_id: findingId, investigation_id: id, expected_revision: 1, current_revision: 2, updated_at: assessed.updated_at },
    recovery: { operation: "findings.get", arguments: { finding_id: findingId }, safe_to_repeat: true },
  });

  const view = expectOk(await transport.call("investigations.get", { investigation_id: id }));
  expect(view.cells.map((c: { cell_id: string }) => c.cell_id)).toEqual([flame.cell_id, note.cell_id, recorded.cell.cell_id]);
  expect(view.findings).toEqual([assessed]);
  expect(view).toMatchObject({ counts: { cells: 3, hypotheses: 0, findings: 1 }, truncated: { cells: false, hypotheses: false, findings: false } });
}

describe("transport parity", () => {
  const roots: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-parity-"));
    roots.push(dir);
    return dir;
  };
  let server: RunningServer | undefined;
  let serverRoot = "";

  beforeAll(async () => {
    serverRoot = fresh();
    server = await startServer(serverRoot);
  });
  afterAll(async () => {
    await server?.stop();
    for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  });

  it("holds through a direct service call", async () => {
    const root = fresh();
    await behaviour(directTransport(root), root);
  });

  it("holds through tRPC over real HTTP against the built app", async () => {
    await behaviour(trpcTransport(server!.url), serverRoot);
  });

  it("holds through the CLI as a child process", async () => {
    const root = fresh();
    await behaviour(cliTransport(root), root);
  }, 60_000);
});
