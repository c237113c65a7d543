import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initWorkspace } from "../../server/store/workspace";
import { runCli } from "../helpers/cli";
import { startServer, type RunningServer } from "../helpers/server";
import { trpcTransport } from "../helpers/transports";
import { httpClient } from "./clients";

/** Links planted in the project, as an attacker with write access to it (or a checked-out repository) could. */
function plantLinks(root: string, outside: string): void {
  writeFileSync(path.join(outside, "secret.folded"), "outsideSecret;leak 1\n");
  symlinkSync(path.join(outside, "secret.folded"), path.join(root, "escape.folded"));
  symlinkSync(outside, path.join(root, "escape-dir"));
  symlinkSync(path.join(root, ".emberscope", "emberscope.sqlite"), path.join(root, "store.folded"));
  writeFileSync(path.join(root, "..dotdot.folded"), "main;inside 2\n");
}

const REFUSED = ["escape.folded", "escape-dir/secret.folded", "store.folded", ".emberscope/emberscope.sqlite"];

// The built app via `emberscope serve`: MCP over HTTP (agent) and tRPC (the web UI's transport).
describe("import paths over HTTP: links are followed before the project-root check", () => {
  let root: string;
  let outside: string;
  let server: RunningServer;
  let token: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-http-paths-"));
    outside = mkdtempSync(path.join(tmpdir(), "emberscope-outside-"));
    initWorkspace(root).close();
    plantLinks(root, outside);
    const printed = await runCli(["mcp", "token", "--project-root", root], { cwd: root });
    token = printed.stdout.trim().split("\n").pop()!;
    server = await startServer(root, ["--workers", "0"]);
    expect((await runCli(["agent-access", "on", "--json", "--project-root", root], { cwd: root })).json).toMatchObject({ enabled: true });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("MCP import_artifact refuses links out of the root and into .emberscope, and imports ..dotdot.folded", async () => {
    const agent = await httpClient(server.url, token);
    try {
      for (const link of REFUSED) {
        const refused = await agent.call("import_artifact", { path: link, format: "folded" });
        expect(!refused.ok && refused.error.code, link).toBe("POLICY_DENIED");
      }
      const inside = await agent.call("import_artifact", { path: "..dotdot.folded" });
      expect(inside.ok && inside.value.format).toBe("folded");
    } finally {
      await agent.close();
    }
  });

  it("tRPC imports.import refuses the same paths for the web UI", async () => {
    const trpc = trpcTransport(server.url);
    for (const link of REFUSED) {
      const refused = await trpc.call("imports.import", { path: link, format: "folded" });
      expect(!refused.ok && refused.error.code, link).toBe("POLICY_DENIED");
    }
    const absolute = await trpc.call("imports.import", { path: path.join(outside, "secret.folded") });
    expect(!absolute.ok && absolute.error.code).toBe("POLICY_DENIED");
  });
});
