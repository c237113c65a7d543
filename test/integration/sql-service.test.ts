import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { callService, importArtifact, listCommits, listCorpusFiles, renameRun, runSql, showRun } from "../../server/services";
import { EmberscopeError } from "../../server/domain/errors";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";

/** Two folded profiles whose per-function sample counts are known by hand. */
const FIRST = "main;parse 3\nmain;render 5\nmain;render;paint 2\n";
const SECOND = "main;parse 7\nidle 1\n";

async function twoRuns() {
  const root = tempProject();
  initWorkspace(root).close();
  const ctx = { locator: { cwd: root, projectRoot: root }, actor: "test" as const };
  const write = (name: string, text: string) => {
    const file = path.join(root, name);
    writeFileSync(file, text);
    return file;
  };
  const first = await callService(importArtifact, ctx, { path: write("first.folded", FIRST) });
  const second = await callService(importArtifact, ctx, { path: write("second.folded", SECOND) });
  return { ctx, first, second };
}

const SELF_BY_NAME = `SELECT f.name, sum(s.value) AS samples
FROM samples s
JOIN stacks st ON st.generation_id = s.generation_id AND st.stack_id = s.stack_id
JOIN frames f ON f.generation_id = st.generation_id AND f.frame_id = st.frame_id
JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id
WHERE m.name = 'samples'
GROUP BY f.name ORDER BY f.name`;

async function refusal(work: Promise<unknown>): Promise<EmberscopeError> {
  const thrown = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(thrown).toBeInstanceOf(EmberscopeError);
  return thrown as EmberscopeError;
}

describe("sql.query: a person's read-only SQL on the server's DuckDB, with the browser console's tables", () => {
  it("answers over the whole commit, or only a run's generations, with the counts the folded text gives", async () => {
    const { ctx, first, second } = await twoRuns();
    const all = await callService(runSql, ctx, { sql: SELF_BY_NAME });
    expect(all).toMatchObject({ commit_id: second.commit_id, engine: "server", truncated: false });
    expect(all.engine_version).toMatch(/^DuckDB v1\.\d+\.\d+ \(node-api\)$/);
    expect(all.generations.sort()).toEqual([first.generation_id, second.generation_id].sort());
    // Self samples per leaf function, summed by hand from both files.
    expect(all.rows).toEqual([
      { name: "idle", samples: 1 },
      { name: "paint", samples: 2 },
      { name: "parse", samples: 10 },
      { name: "render", samples: 5 },
    ]);
    expect(all.columns.map((c) => c.name)).toEqual(["name", "samples"]);

    const scoped = await callService(runSql, ctx, { sql: SELF_BY_NAME, run_id: first.run_id });
    expect(scoped.generations).toEqual([first.generation_id]);
    expect(scoped.rows).toEqual([
      { name: "paint", samples: 2 },
      { name: "parse", samples: 3 },
      { name: "render", samples: 5 },
    ]);
    // The scope lives on that query's connection only: the next whole-commit answer is whole again.
    expect((await callService(runSql, ctx, { sql: "SELECT count(*) AS n FROM frames" })).rows[0].n).toBeGreaterThan(scoped.rows.length);

    // An older commit holds only the first run.
    const older = await callService(runSql, ctx, { sql: "SELECT DISTINCT generation_id FROM samples", commit_id: first.commit_id });
    expect(older.rows).toEqual([{ generation_id: first.generation_id }]);
  });

  it("has a runs table with each run's current title per generation, as corpus.files lists it for the browser", async () => {
    const { ctx, first, second } = await twoRuns();
    const run = await callService(showRun, ctx, { run_id: first.run_id });
    const hostile = "it's \"quoted\"; DROP TABLE runs; -- ünïcode";
    await callService(renameRun, ctx, { run_id: first.run_id, title: hostile, expected_revision: run.revision });
    const answer = await callService(runSql, ctx, { sql: "SELECT run_id, title, generation_id, source FROM runs ORDER BY created_at, run_id" });
    expect(answer.rows).toEqual([
      { run_id: first.run_id, title: hostile, generation_id: first.generation_id, source: "folded" },
      { run_id: second.run_id, title: "second.folded", generation_id: second.generation_id, source: "folded" },
    ]);
    const listing = await callService(listCorpusFiles, ctx, {});
    expect(listing.runs.map((r) => [r.run_id, r.title, r.generation_id])).toEqual(answer.rows.map((r) => [r.run_id, r.title, r.generation_id]));
    // Titles join the evidence: samples per run title.
    const joined = await callService(runSql, ctx, {
      sql: "SELECT r.title, sum(s.value) AS samples FROM samples s JOIN runs r USING (generation_id) JOIN metrics m ON m.generation_id = s.generation_id AND m.metric_id = s.metric_id WHERE m.name = 'samples' GROUP BY r.title ORDER BY samples",
    });
    expect(joined.rows).toEqual([
      { title: "second.folded", samples: 8 },
      { title: hostile, samples: 10 },
    ]);
  });

  it("refuses anything but reads, before any statement runs, and keeps DuckDB's message with its line breaks", async () => {
    const { ctx } = await twoRuns();
    for (const sql of ["DROP VIEW samples", "SELECT 1; CREATE TABLE x (a INT)", "ATTACH 'other.db'", "SET threads = 1", "COPY frames TO 'out.csv'", "INSTALL httpfs"]) {
      const error = await refusal(callService(runSql, ctx, { sql }));
      expect(error.code, sql).toBe("QUERY_INVALID");
    }
    // Nothing was changed: the views still answer (the CREATE after a SELECT never ran).
    expect((await callService(runSql, ctx, { sql: "SELECT count(*) AS n FROM samples" })).rows[0].n).toBeGreaterThan(0);
    await expect(callService(runSql, ctx, { sql: "SELECT * FROM x" })).rejects.toMatchObject({ code: "QUERY_INVALID" });

    const unknown = await refusal(callService(runSql, ctx, { sql: "SELECT nope\nFROM samples" }));
    expect(unknown.code).toBe("QUERY_INVALID");
    expect(unknown.message).toMatch(/nope/);
    expect(unknown.message).toContain("\nLINE 1:");

    // Files other than the commit's stay out of reach, whatever the path.
    const outside = await refusal(callService(runSql, ctx, { sql: "SELECT * FROM read_csv('/etc/passwd')" }));
    expect(outside.code).toBe("QUERY_INVALID");
    await expect(callService(runSql, ctx, { sql: "   -- only a comment" })).rejects.toMatchObject({ code: "QUERY_INVALID" });
    await expect(callService(runSql, ctx, { sql: "" })).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    await expect(callService(runSql, ctx, { sql: "SELECT 1", extra: true } as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    await expect(callService(runSql, ctx, { sql: "SELECT 1", commit_id: "c_nope" })).rejects.toMatchObject({ code: "COMMIT_NOT_FOUND" });
    await expect(callService(runSql, ctx, { sql: "SELECT 1", run_id: "r_nope" })).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  });

  it("commits.list with run_id offers only the commits that hold the run (the run page's commit picker)", async () => {
    const { ctx, first, second } = await twoRuns();
    const all = await callService(listCommits, ctx, { limit: 50 });
    expect(all.items.length).toBe(3);
    expect((await callService(listCommits, ctx, { limit: 50, run_id: first.run_id })).items.map((c) => c.commit_id)).toEqual([second.commit_id, first.commit_id]);
    expect((await callService(listCommits, ctx, { limit: 50, run_id: second.run_id })).items.map((c) => c.commit_id)).toEqual([second.commit_id]);
    await expect(callService(listCommits, ctx, { limit: 50, run_id: "run_nope" })).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
  });

  it("returns at most 5,000 rows and says so", async () => {
    const { ctx } = await twoRuns();
    const many = await callService(runSql, ctx, { sql: "SELECT range AS i FROM range(12000)" });
    expect(many.rows.length).toBe(5000);
    expect(many.truncated).toBe(true);
    expect(many.rows[4999]).toEqual({ i: 4999 });
    const exact = await callService(runSql, ctx, { sql: "SELECT range AS i FROM range(5000)" });
    expect(exact).toMatchObject({ truncated: false });
    expect(exact.rows.length).toBe(5000);
  });
});
