import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseHeldWorkspaces } from "../../server/mcp/held-workspace";
import { addCell, callService, createInvestigation, importArtifact, type ServiceContext } from "../../server/services";
import { readBundle } from "../../server/services/export-bundle";
import { verifyExport } from "../../server/services/exports";
import { initWorkspace, openWorkspace } from "../../server/store/workspace";
import { memoryClient, type AgentClient } from "./clients";

/**
 * Agents ask for an export only redacted, never wider (issue 24), through the real MCP SDK
 * client: the file is written inside the project root as an export operation and answers its
 * path, size, manifest sha256 and redaction counts; every wider choice and every path that
 * leaves the root is refused, typed, before any operation exists; every call is audited.
 */
describe("export_investigation over MCP (real SDK client)", () => {
  let root: string;
  let outside: string;
  let person: ServiceContext;
  let runId: string;
  let investigationId: string;
  let agent: AgentClient;

  const rows = <T>(sql: string): T[] => {
    const ws = openWorkspace({ cwd: root, projectRoot: root });
    try {
      return ws.db.prepare(sql).all() as T[];
    } finally {
      ws.close();
    }
  };
  const exportOperations = () => rows<{ state: string }>("SELECT state FROM operations WHERE kind = 'export' ORDER BY created_at");

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-mcp-export-"));
    outside = mkdtempSync(path.join(tmpdir(), "emberscope-mcp-export-outside-"));
    initWorkspace(root).close();
    person = { locator: { cwd: root, projectRoot: root }, actor: "cli" };
    writeFileSync(path.join(root, "leaky.folded"), "main;load /home/dana/app/src/db.c;connect dana.kowalski@example.org 40\nmain;run 60\n");
    runId = (await callService(importArtifact, person, { path: "leaky.folded" })).run_id;
    investigationId = (await callService(createInvestigation, person, { title: "Slow connect" })).investigation_id;
    await callService(addCell, person, { investigation_id: investigationId, kind: "note", content: { markdown: "Seen on build-7.corp.acme.net by dana.kowalski@example.org" } });
    await callService(addCell, person, { investigation_id: investigationId, kind: "flame", content: { run_id: runId } });
    agent = await memoryClient(root);
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    releaseHeldWorkspaces();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("writes a redacted export inside the project root as an operation and answers path, size, manifest sha256 and counts by kind", async () => {
    const answer = await agent.call("export_investigation", { subject: { kind: "investigation", investigation_id: investigationId } });
    expect(answer.ok).toBe(true);
    if (!answer.ok) return;
    const r = answer.value;
    expect(r.path).toBe(path.join("emberscope-exports", "slow-connect.emberscope.html"));
    const file = path.join(root, r.path);
    const html = readFileSync(file, "utf8");
    expect(r.size_bytes).toBe(Buffer.byteLength(html));
    const { manifest } = readBundle(html);
    expect(r.manifest_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(html).toContain(`data-sha256="${r.manifest_sha256}"`);
    expect(manifest.redaction).toMatchObject({ mode: "redacted", chosen_by: "agent" });
    expect(r.redaction_mode).toBe("redacted");
    expect(r.redactions.PATH).toBeGreaterThan(0);
    expect(r.redactions.EMAIL).toBeGreaterThan(0);
    expect(r.redactions.HOST).toBeGreaterThan(0);
    expect(Object.keys(r.redactions).sort()).toEqual(Object.keys(manifest.redaction.choices).sort());
    for (const needle of ["/home/dana", "dana.kowalski@example.org", "build-7.corp.acme.net"]) expect(html).not.toContain(needle);
    expect((await callService(verifyExport, person, { file })).redaction.mode).toBe("redacted");
    expect(exportOperations().at(-1)).toEqual({ state: "succeeded" });
    expect(answer.links).toContain(`emberscope://operations/${r.operation_id}`);

    // A second export of the same title gets a new name; nothing is replaced.
    const again = await agent.call("export_investigation", { subject: { kind: "investigation", investigation_id: investigationId } });
    expect(again.ok && again.value.path).toBe(path.join("emberscope-exports", "slow-connect-2.emberscope.html"));
    expect(readFileSync(file, "utf8")).toBe(html);
  }, 120_000);

  it("exports one run's view to a new file the agent names inside the root", async () => {
    mkdirSync(path.join(root, "shared"));
    const answer = await agent.call("export_investigation", { subject: { kind: "run", run_id: runId, view: "flame" }, out: "shared/run.html" });
    expect(answer.ok && answer.value.path).toBe(path.join("shared", "run.html"));
    expect(readBundle(readFileSync(path.join(root, "shared", "run.html"), "utf8")).manifest.subject).toEqual({ kind: "run", run_id: runId, view: "flame" });
  }, 120_000);

  it("reports the operation's progress to a client that sent a progressToken, and the client's cancellation cancels it: no file", async () => {
    const subject = { kind: "investigation", investigation_id: investigationId };
    const messages: string[] = [];
    await agent.client.callTool({ name: "export_investigation", arguments: { subject, out: "progress.html" } }, undefined, { timeout: 120_000, onprogress: (p) => messages.push(p.message ?? "") });
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.every((m) => m.startsWith("running"))).toBe(true);

    const before = exportOperations().length;
    const abort = new AbortController();
    const call = agent.client.callTool({ name: "export_investigation", arguments: { subject, out: "cancelled.html" } }, undefined, { timeout: 120_000, signal: abort.signal });
    await expect.poll(() => exportOperations().length, { timeout: 30_000, interval: 20 }).toBe(before + 1);
    abort.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => exportOperations().at(-1)?.state, { timeout: 30_000 }).toBe("cancelled");
    expect(existsSync(path.join(root, "cancelled.html"))).toBe(false);
  }, 120_000);

  it("refuses, typed and before any operation starts, every wider choice and every place outside the project root", async () => {
    const before = exportOperations().length;
    const subject = { kind: "investigation", investigation_id: investigationId };
    symlinkSync(outside, path.join(root, "out-link"));
    writeFileSync(path.join(root, "keep.html"), "mine");
    const refusals: [Record<string, unknown>, string][] = [
      [{ subject, choices: { allow: ["PATH"] } }, "PERSON_SESSION_REQUIRED"],
      [{ subject, choices: { allow: ["SECRET", "EMAIL"], redact: ["EMAIL"] } }, "PERSON_SESSION_REQUIRED"],
      [{ subject, redaction: "full" }, "INVALID_ARGUMENTS"],
      [{ subject, detail: "full" }, "INVALID_ARGUMENTS"],
      [{ subject, out: path.join(outside, "x.html") }, "POLICY_DENIED"],
      [{ subject, out: "../x.html" }, "POLICY_DENIED"],
      [{ subject, out: "out-link/x.html" }, "POLICY_DENIED"],
      [{ subject, out: ".emberscope/x.html" }, "POLICY_DENIED"],
      [{ subject, out: "keep.html" }, "INVALID_ARGUMENTS"],
      [{ subject, out: "notes.txt" }, "INVALID_ARGUMENTS"],
      [{ subject, out: "missing/x.html" }, "INVALID_ARGUMENTS"],
      [{ subject: { kind: "investigation", investigation_id: "inv_nope" } }, "INVESTIGATION_NOT_FOUND"],
    ];
    for (const [args, code] of refusals) {
      const answer = await agent.call("export_investigation", args);
      expect(answer.ok ? "ok" : answer.error.code, JSON.stringify(args)).toBe(code);
    }
    expect(exportOperations().length).toBe(before);
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(path.join(root, "keep.html"), "utf8")).toBe("mine");
    expect(existsSync(path.join(root, ".emberscope", "x.html"))).toBe(false);

    // Every call, answered or refused, has its audit row naming the investigation.
    const audited = rows<{ action: string; result_code: string; target: string | null }>("SELECT action, result_code, target FROM audit_events WHERE action = 'mcp.export_investigation' ORDER BY seq");
    expect(audited.slice(-refusals.length).map((a) => a.result_code)).toEqual(refusals.map(([, code]) => code));
    expect(audited.filter((a) => a.result_code === "OK").length).toBe(4);
    expect(audited[0].target).toBe(investigationId);
  }, 120_000);
});
