import { describe, expect, it } from "vitest";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { STDERR_TAIL_LINES, stderrTail } from "../../server/capture/stderr-tail";

describe("stderrTail", () => {
  it("keeps the last lines of a failed workload's stderr, redacted: a planted token and a path outside the project become typed tokens", () => {
    const root = tempProject();
    const ws = initWorkspace(root);
    try {
      const token = `ghp_${"a1B2c3D4".repeat(5)}`;
      const lines = Array.from({ length: 50 }, (_, i) => `line ${i}`);
      lines.push(`using GITHUB_TOKEN=${token}`, "reading /opt/elsewhere/secret-config.yml", `config at ${root}/app.toml`, "fatal: could not connect");
      const tail = stderrTail(ws, Buffer.from(`${lines.join("\n")}\n`))!;
      expect(tail.lines).toBe(STDERR_TAIL_LINES);
      expect(tail.omitted_lines).toBe(lines.length - STDERR_TAIL_LINES);
      expect(tail.text.split("\n").at(-1)).toBe("fatal: could not connect");
      expect(tail.text).not.toContain(token);
      expect(tail.text).not.toContain("/opt/elsewhere");
      expect(tail.text).toMatch(/SECRET_[0-9a-f]{6}/);
      expect(tail.text).toMatch(/PATH_[0-9a-f]{6}/);
      expect(tail.text).toContain("config at app.toml"); // inside the project: relative, not a token
      expect(tail.redactions).toBeGreaterThanOrEqual(2);
      expect(stderrTail(ws, Buffer.from("\n\n"))).toBeNull();
    } finally {
      ws.close();
    }
  });

  it("bounds a single huge line to the character budget", () => {
    const ws = initWorkspace(tempProject());
    try {
      const tail = stderrTail(ws, Buffer.from("x".repeat(100_000)))!;
      expect(tail.text.length).toBeLessThanOrEqual(4000);
    } finally {
      ws.close();
    }
  });
});
