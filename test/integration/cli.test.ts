import { LATEST_SCHEMA_VERSION } from "../../server/store/migrations";
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../server/cli/commands";
import { openWorkspace } from "../../server/store/workspace";
import { REPO_ROOT, runCli } from "../helpers/cli";
import { seedImport } from "../helpers/seed";
import { tempProject } from "../helpers/project";

describe("emberscope CLI", () => {
  it("answers --help with every command from the registry", async () => {
    const result = await runCli(["--help"], { cwd: tempProject() });
    expect(result.code).toBe(0);
    for (const command of COMMANDS.filter((c) => !c.hidden)) expect(result.stdout).toContain(command.path.join(" "));
    const sub = await runCli(["runs", "list", "--help"], { cwd: tempProject() });
    expect(sub.stdout).toContain("Usage: emberscope runs list");
    expect(sub.stdout).toContain("--cursor CURSOR");
  });

  it("stops quietly when its reader closes the pipe early (`emberscope … | head`)", () => {
    // `head -c 10` exits after 10 bytes of the catalog (about 130 kB, more than a pipe holds): the rest fails with EPIPE.
    const result = spawnSync("sh", ["-c", `"${process.execPath}" "${path.join(REPO_ROOT, "bin", "emberscope.js")}" mcp inspect --json | head -c 10`], { cwd: tempProject(), encoding: "utf8" });
    expect(result.stdout.startsWith("{")).toBe(true);
    expect(result.stderr).toBe("");
  });

  it("works as `npx emberscope` inside the repository, also from examples/demo", () => {
    for (const cwd of [REPO_ROOT, path.join(REPO_ROOT, "examples", "demo")]) {
      const result = spawnSync("npx", ["--no-install", "emberscope", "--version"], { cwd, encoding: "utf8" });
      expect(result.status, `${cwd}: ${result.stderr}`).toBe(0);
      expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });

  it("init then status --json prints the workspace document", async () => {
    const cwd = tempProject();
    mkdirSync(path.join(cwd, "X"));
    const init = await runCli(["init", "--project-root", "X", "--json"], { cwd });
    expect(init.code).toBe(0);
    expect(init.json).toMatchObject({ schema_version: LATEST_SCHEMA_VERSION, project_root: "X" });
    const status = await runCli(["status", "--json", "--project-root", "X"], { cwd });
    expect(status.code).toBe(0);
    expect(status.json).toMatchObject({
      workspace_id: init.json.workspace_id,
      schema_version: LATEST_SCHEMA_VERSION,
      project_root: "X",
      head_commit_id: init.json.head_commit_id,
      counts: { runs: 0, artifacts: 0, commits: 1 },
    });
    expect(status.stdout).not.toContain(cwd);
    const fromInside = await runCli(["status", "--json"], { cwd: path.join(cwd, "X") });
    expect(fromInside.json.workspace_id).toBe(init.json.workspace_id);
    expect(fromInside.json.project_root).toBe(".");
  });

  it.each([["status"], ["runs", "list"], ["runs", "show", "run_x"], ["artifacts", "list"], ["commits", "list"], ["commits", "show", "HEAD"], ["validate"], ["gc"]])(
    "`%s` on a directory without a workspace exits non-zero with WORKSPACE_NOT_FOUND and recovery init",
    async (...argv) => {
      const result = await runCli([...argv, "--json"], { cwd: tempProject() });
      expect(result.code).toBe(3);
      expect(result.json).toMatchObject({ code: "WORKSPACE_NOT_FOUND", recovery: { operation: "workspace.init", command: "emberscope init" } });
    },
  );

  it("names the offending argument for unknown flags and malformed values", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const unknown = await runCli(["runs", "list", "--colour", "--json"], { cwd });
    expect(unknown.code).toBe(2);
    expect(unknown.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--colour" } });
    const malformed = await runCli(["runs", "list", "--limit", "lots", "--json"], { cwd });
    expect(malformed.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--limit" } });
    const outOfRange = await runCli(["runs", "list", "--limit", "9999", "--json"], { cwd });
    expect(outOfRange.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--limit" } });
    const badKind = await runCli(["runs", "list", "--kind", "nap", "--json"], { cwd });
    expect(badKind.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--kind" } });
    const missing = await runCli(["runs", "show", "--json"], { cwd });
    expect(missing.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "RUN_ID" } });
    const command = await runCli(["frobnicate", "--json"], { cwd });
    expect(command.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "frobnicate" } });
    const human = await runCli(["runs", "list", "--colour"], { cwd });
    expect(human.stderr).toContain("error INVALID_ARGUMENTS: Unknown option --colour.");
    expect(human.stdout).toBe("");
  });

  it("reports a corrupt or foreign control store as WORKSPACE_INVALID, never a stack trace", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    writeFileSync(path.join(cwd, ".emberscope", "emberscope.sqlite"), "garbage".repeat(1000));
    const result = await runCli(["status", "--json"], { cwd });
    expect(result.code).toBe(3);
    expect(result.json).toMatchObject({ code: "WORKSPACE_INVALID" });
    expect(result.stderr).not.toMatch(/at .*\.(ts|js):\d+/);
    const human = await runCli(["runs", "list"], { cwd });
    expect(human.stderr.trim()).toBe("error WORKSPACE_INVALID: The control store is not a readable SQLite database.");
  });

  it("prints exactly one JSON document on stdout with --json, and keeps init idempotent-safe", async () => {
    const cwd = tempProject();
    const first = await runCli(["init", "--json"], { cwd });
    expect(() => JSON.parse(first.stdout)).not.toThrow();
    const second = await runCli(["init", "--json"], { cwd });
    expect(second.code).toBe(3);
    expect(second.json).toMatchObject({ code: "WORKSPACE_EXISTS", recovery: { command: "emberscope status" } });
  });

  it("validate exits non-zero when it finds problems and gc is a dry run by default", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const ok = await runCli(["validate", "--full", "--json"], { cwd });
    expect(ok.code).toBe(0);
    expect(ok.json).toMatchObject({ ok: true, full: true });
    const ws = openWorkspace({ cwd });
    const seeded = await seedImport(ws, { title: "t", native: "a;b 1" });
    ws.close();
    rmSync(path.join(cwd, ".emberscope", "objects", "sha256", seeded.artifactId.slice(7, 9), seeded.artifactId.slice(7)));
    const broken = await runCli(["validate", "--json"], { cwd });
    expect(broken.code).toBe(3);
    expect(broken.json).toMatchObject({ ok: false, problems: [{ code: "OBJECT_MISSING", subject: seeded.artifactId }] });
    const gc = await runCli(["gc", "--json"], { cwd });
    expect(gc.json).toMatchObject({ applied: false, manifest_id: null, collectable_count: 0 });
    const both = await runCli(["gc", "--apply", "--purge", "gcm_00000000000000000000000000", "--json"], { cwd });
    expect(both.json).toMatchObject({ code: "INVALID_ARGUMENTS" });
  });

  it("gc's argument errors name the flag that was given: --purge, not --restore", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const malformed = await runCli(["gc", "--purge", "../x", "--json"], { cwd });
    expect(malformed.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--purge" } });
    expect(malformed.json.message).toContain("--purge");
    expect(malformed.json.message).not.toContain("--restore");
    const unknown = await runCli(["gc", "--purge", "gcm_00000000000000000000000000", "--json"], { cwd });
    expect(unknown.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--purge" } });
    const restore = await runCli(["gc", "--restore", "../x"], { cwd });
    expect(restore.stderr).toContain("argument: --restore");
    const both = await runCli(["gc", "--restore", "a", "--purge", "b", "--json"], { cwd });
    expect(both.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--purge", conflicting: ["--restore", "--purge"] } });
    expect(both.json.message).not.toContain("--apply)");
  });

  it("serve refuses a non-loopback host without --allow-remote", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const result = await runCli(["serve", "--host", "0.0.0.0", "--json"], { cwd });
    expect(result.code).toBe(8);
    expect(result.json).toMatchObject({ code: "POLICY_DENIED", details: { argument: "--host" } });
  });
});
