import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { exitCodeFor } from "../../server/domain/errors";
import { openWorkspace } from "../../server/store/workspace";
import { runCli } from "../helpers/cli";
import { tempProject } from "../helpers/project";

const FIXTURE = path.join(import.meta.dirname, "..", "fixtures", "notebooks", "startup-v0.json");

async function cli(root: string, ...args: string[]) {
  return runCli([...args, "--json"], { cwd: root });
}

async function ok(root: string, ...args: string[]) {
  const r = await cli(root, ...args);
  expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
  return r.json;
}

describe("notebooks from the CLI (child processes, real files)", () => {
  it("records a notebook on an imported profile, exports it to a file and imports the file into another project", async () => {
    const root = tempProject();
    await ok(root, "init");
    writeFileSync(path.join(root, "startup.folded"), "main;require;compile 60\nmain;run 40\n");
    const imported = await ok(root, "import", "startup.folded");
    const inv = await ok(root, "investigations", "create", "Why is startup slow?", "--question", "What dominates?");
    const note = await ok(root, "cells", "add", inv.investigation_id, "--markdown", "require() is wide");
    const flame = await ok(root, "cells", "add", inv.investigation_id, "--run", imported.run_id, "--first");
    expect(flame).toMatchObject({ kind: "flame", commit_id: imported.commit_id, content: { run_id: imported.run_id } });
    const finding = await ok(root, "findings", "record", inv.investigation_id, "--title", "require dominates", "--claim", "60% of samples", "--evidence-level", "observed", "--kind", "root_cause", "--supports", `cell:${flame.cell_id}@${imported.commit_id}`, "--context", `run:${imported.run_id}@${imported.commit_id}`, "--limitation", "one run");
    expect(finding.finding.references).toEqual([
      { relation: "supports", target: { kind: "cell", cell_id: flame.cell_id, commit_id: imported.commit_id } },
      { relation: "context", target: { kind: "run", run_id: imported.run_id, commit_id: imported.commit_id } },
    ]);
    const hypothesis = await ok(root, "hypotheses", "record", inv.investigation_id, "--claim", "module loading", "--refuted-by", "require under 20%");
    expect(hypothesis.hypothesis.refuted_by).toBe("require under 20%");

    const noRevision = await cli(root, "findings", "assess", finding.finding.finding_id, "supported");
    expect(noRevision.code).toBe(exitCodeFor("INVALID_ARGUMENTS"));
    expect(noRevision.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--revision" } });
    const badRef = await cli(root, "findings", "record", inv.investigation_id, "--title", "t", "--claim", "c", "--evidence-level", "observed", "--supports", `run:${imported.run_id}`);
    expect(badRef.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--supports" } });

    const listed = await ok(root, "cells", "list", inv.investigation_id);
    expect(listed.items.map((c: { cell_id: string }) => c.cell_id)).toEqual([flame.cell_id, note.cell_id, finding.cell.cell_id, hypothesis.cell.cell_id]);

    const exported = await ok(root, "investigations", "export", inv.investigation_id, "--out", "notebook.json");
    expect(exported).toMatchObject({ investigation_id: inv.investigation_id, out: "notebook.json", format: "emberscope-notebook", version: 1, counts: { cells: 4, hypotheses: 1, findings: 1 } });
    const file = JSON.parse(readFileSync(path.join(root, "notebook.json"), "utf8"));
    expect(file.cells.map((c: { cell_id: string }) => c.cell_id)).toEqual(listed.items.map((c: { cell_id: string }) => c.cell_id));
    expect(Buffer.byteLength(readFileSync(path.join(root, "notebook.json")))).toBe(exported.bytes);

    const other = tempProject();
    await ok(other, "init");
    writeFileSync(path.join(other, "notebook.json"), readFileSync(path.join(root, "notebook.json")));
    const into = await ok(other, "investigations", "import", "notebook.json");
    expect(into).toMatchObject({ upgraded_from: 1, counts: { cells: 4, hypotheses: 1, findings: 1 }, missing_commits: [imported.commit_id] });
    const shown = await ok(other, "investigations", "show", inv.investigation_id);
    expect(shown.cells.map((c: { cell_id: string; commit_id: string | null }) => [c.cell_id, c.commit_id])).toEqual(listed.items.map((c: { cell_id: string; commit_id: string | null }) => [c.cell_id, c.commit_id]));
    expect(shown.findings[0].references).toEqual(finding.finding.references);
    const human = await runCli(["investigations", "show", inv.investigation_id], { cwd: other });
    expect(human.stdout).toMatch(/imported\s+\S+ \(format version 1\)/);
  }, 120_000);

  it("imports a version-0 file by upgrading it, and refuses a file that is not JSON with the input family's exit code", async () => {
    const root = tempProject();
    await ok(root, "init");
    writeFileSync(path.join(root, "old.json"), readFileSync(FIXTURE));
    const upgraded = await ok(root, "investigations", "import", "old.json");
    expect(upgraded).toMatchObject({ upgraded_from: 0, counts: { cells: 5, hypotheses: 1, findings: 1 } });
    writeFileSync(path.join(root, "broken.json"), '{"format": "emberscope-notebook", "version": 1,');
    const broken = await cli(root, "investigations", "import", "broken.json");
    expect(broken.code).toBe(exitCodeFor("NOTEBOOK_INVALID"));
    expect(broken.json).toMatchObject({ code: "NOTEBOOK_INVALID", details: { path: "(document)" } });
    const missing = await cli(root, "investigations", "import", "nowhere.json");
    expect(missing.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "FILE" } });
  }, 120_000);

  it("two processes assessing one finding from the same revision: one wins, the other gets REVISION_CONFLICT, and both revisions are kept", async () => {
    const root = tempProject();
    await ok(root, "init");
    writeFileSync(path.join(root, "p.folded"), "main;work 10\n");
    const imported = await ok(root, "import", "p.folded");
    const inv = await ok(root, "investigations", "create", "Race");
    const recorded = await ok(root, "findings", "record", inv.investigation_id, "--title", "work", "--claim", "all work", "--evidence-level", "observed", "--supports", `run:${imported.run_id}@${imported.commit_id}`);
    const id = recorded.finding.finding_id;
    const [a, b] = await Promise.all([cli(root, "findings", "assess", id, "supported", "--revision", "1"), cli(root, "findings", "assess", id, "refuted", "--revision", "1")]);
    const outcomes = [a, b].map((r) => (r.code === 0 ? "ok" : r.json.code)).sort();
    expect(outcomes).toEqual(["REVISION_CONFLICT", "ok"]);
    const loser = [a, b].find((r) => r.code !== 0)!;
    expect(loser.code).toBe(exitCodeFor("REVISION_CONFLICT"));
    expect(loser.json).toMatchObject({ details: { current_revision: 2, expected_revision: 1 }, recovery: { operation: "findings.get", command: expect.stringContaining(`findings show ${id}`) } });
    const winner = [a, b].find((r) => r.code === 0)!.json;
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const revisions = ws.db.prepare("SELECT revision, snapshot FROM finding_revisions WHERE finding_id = ? ORDER BY revision").all(id) as { revision: number; snapshot: string }[];
      expect(revisions.map((r) => [r.revision, JSON.parse(r.snapshot).assessment])).toEqual([
        [1, "unassessed"],
        [2, winner.assessment],
      ]);
    } finally {
      ws.close();
    }
  }, 120_000);
});
