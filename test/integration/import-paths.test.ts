import { mkdirSync, readFileSync, readdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { analyzeHotspots, callService, importArtifact, importUploadedFile, listArtifacts, listRuns, type ServiceContext } from "../../server/services";
import { openRequestedFile } from "../../server/services/input-file";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { failure } from "../helpers/failure";

const OUTSIDE_SECRET = "outsideSecretFrame;leakedFunction 7\n";

/** A project with a workspace, a folder outside it holding a secret profile, and links from one to the other. */
function setup() {
  const root = tempProject();
  initWorkspace(root).close();
  const outside = tempProject();
  writeFileSync(path.join(outside, "secret.folded"), OUTSIDE_SECRET);
  symlinkSync(path.join(outside, "secret.folded"), path.join(root, "file-link.folded"));
  symlinkSync(outside, path.join(root, "dir-link"));
  symlinkSync(path.join(root, ".emberscope", "emberscope.sqlite"), path.join(root, "store-link.folded"));
  symlinkSync(path.join(root, ".emberscope"), path.join(root, "workspace-link"));
  writeFileSync(path.join(root, "..dotdot.folded"), "main;inside 3\n");
  mkdirSync(path.join(root, "profiles"));
  writeFileSync(path.join(root, "profiles", "app.folded"), "main;app 5\n");
  symlinkSync(path.join(root, "profiles", "app.folded"), path.join(root, "inside-link.folded"));
  const ctx = (actor: ServiceContext["actor"]): ServiceContext => ({ locator: { cwd: root, projectRoot: root }, actor });
  return { root, outside, ctx };
}

/** Nothing was stored or run for a refused path. */
async function nothingImported(ctx: ServiceContext) {
  expect((await callService(listRuns, ctx, {})).items).toEqual([]);
  expect((await callService(listArtifacts, ctx, {})).items).toEqual([]);
}

describe("import paths: resolved after every link, confined, never the workspace", () => {
  it.each(["agent", "web"] as const)("refuses a %s's link to a file outside the root, through a linked directory, and into .emberscope", async (actor) => {
    const { ctx, outside } = setup();
    for (const requested of ["file-link.folded", "dir-link/secret.folded", "store-link.folded", "workspace-link/emberscope.sqlite", ".emberscope/emberscope.sqlite", "../x.folded", path.join(outside, "secret.folded")]) {
      const error = await failure(callService(importArtifact, ctx(actor), { path: requested, format: "folded" }));
      expect(error.code, requested).toBe("POLICY_DENIED");
      expect(error.details).toEqual({ argument: "path" });
      expect(JSON.stringify(error.toDocument())).not.toContain(outside);
    }
    await nothingImported(ctx(actor));
  });

  it("accepts a file whose name starts with '..' and a link that stays inside the root", async () => {
    const { ctx } = setup();
    const dotdot = await callService(importArtifact, ctx("agent"), { path: "..dotdot.folded" });
    expect((await callService(analyzeHotspots, ctx("agent"), { run_id: dotdot.run_id })).rows.map((r) => r.name).sort()).toEqual(["inside", "main"]);
    const linked = await callService(importArtifact, ctx("agent"), { path: "inside-link.folded" });
    // The run is titled by the name the caller gave.
    expect((await callService(listRuns, ctx("agent"), {})).items.find((r) => r.run_id === linked.run_id)?.title).toBe("inside-link.folded");
  });

  it("reads an agent's relative path from the project root, wherever the server runs", async () => {
    const { root, outside } = setup();
    const elsewhere: ServiceContext = { locator: { cwd: outside, projectRoot: root }, actor: "agent" };
    expect((await callService(importArtifact, elsewhere, { path: "profiles/app.folded" })).rows.samples).toBe(1);
    // secret.folded is in the server's directory, not in the root: it is looked for in the root.
    expect((await failure(callService(importArtifact, elsewhere, { path: "secret.folded" }))).code).toBe("INVALID_ARGUMENTS");
  });

  it("lets a person at the CLI import a readable file outside the root, but never one inside any workspace folder", async () => {
    const { ctx, outside, root } = setup();
    const imported = await callService(importArtifact, ctx("cli"), { path: "file-link.folded" });
    expect(imported.rows.samples).toBe(1);
    const other = tempProject();
    initWorkspace(other).close();
    const otherStore = path.join(other, ".emberscope", "emberscope.sqlite");
    for (const requested of ["store-link.folded", "workspace-link/emberscope.sqlite", ".emberscope/emberscope.sqlite", otherStore]) {
      const error = await failure(callService(importArtifact, ctx("cli"), { path: requested, format: "folded" }));
      expect(error.code, requested).toBe("POLICY_DENIED");
    }
    // The workspace folder reached through a link under another name is still the workspace.
    const aliased = path.join(outside, "aliased-workspace");
    symlinkSync(path.join(root, ".emberscope"), aliased);
    expect((await failure(callService(importArtifact, ctx("cli"), { path: path.join(aliased, "emberscope.sqlite"), format: "folded" }))).code).toBe("POLICY_DENIED");
  });

  it("holds the file it checked: a directory swapped for a link after the open does not redirect the reads", async () => {
    const { root, outside } = setup();
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      const source = await openRequestedFile({ locator: { cwd: root, projectRoot: root }, actor: "agent" }, ws, "profiles/app.folded");
      try {
        renameSync(path.join(root, "profiles"), path.join(root, "profiles.old"));
        writeFileSync(path.join(outside, "app.folded"), OUTSIDE_SECRET);
        symlinkSync(outside, path.join(root, "profiles"));
        expect(readFileSync(path.join(root, "profiles", "app.folded"), "utf8")).toBe(OUTSIDE_SECRET);
        expect(readFileSync(source.file, "utf8")).toBe("main;app 5\n");
      } finally {
        await source.close();
      }
    } finally {
      ws.close();
    }
  });

  it("imports the upload route's staged file in-process, which no request path may name", async () => {
    const { root, ctx } = setup();
    const staging = path.join(root, ".emberscope", "tmp", "upload-test");
    mkdirSync(staging);
    const staged = path.join(staging, "uploaded.folded");
    writeFileSync(staged, "main;uploaded 4\n");
    const refused = await failure(callService(importArtifact, ctx("web"), { path: staged }));
    expect(refused.code).toBe("POLICY_DENIED");
    const result = await importUploadedFile(ctx("web"), staged, {});
    expect(result).toMatchObject({ format: "folded", rows: { samples: 1 } });
    expect((await callService(listRuns, ctx("web"), {})).items[0]).toMatchObject({ run_id: result.run_id, title: "uploaded.folded" });
    // Only the server's own staging qualifies: any other file fails the same way as a request would.
    expect((await failure(importUploadedFile(ctx("web"), path.join(root, ".emberscope", "emberscope.sqlite"), { format: "folded" }))).code).toBe("POLICY_DENIED");
    expect((await failure(importUploadedFile(ctx("web"), staged, { format: "nope" }))).code).toBe("INVALID_ARGUMENTS");
    expect(readdirSync(staging)).toEqual(["uploaded.folded"]);
  });
});
