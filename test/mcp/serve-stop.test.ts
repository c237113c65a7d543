import { describe, expect, it } from "vitest";
import { callService, agentToken } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { startServer } from "../helpers/server";
import { httpClient } from "./clients";

describe("`emberscope serve` stopping while MCP clients stay connected", () => {
  it("exits on SIGTERM within its grace period although SDK clients still hold their connections (and event stream) open", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const { token } = await callService(agentToken, { locator: { cwd: root, projectRoot: root }, actor: "cli" }, {});
    const server = await startServer(root, ["--workers", "0"]);
    const agents = await Promise.all([httpClient(server.url, token), httpClient(server.url, token)]);
    try {
      for (const agent of agents) expect((await agent.call("workspace_status")).ok).toBe(false); // access is off: still a full round trip
      const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) => server.process.once("exit", (code, signal) => resolve({ code, signal })));
      const started = Date.now();
      server.process.kill("SIGTERM");
      // startServer's own stop() would SIGKILL after 5 s; the server must leave on its own before.
      expect(await exit).toEqual({ code: 0, signal: null });
      expect(Date.now() - started).toBeLessThan(4500);
    } finally {
      await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
      await server.stop();
    }
  }, 30_000);
});
