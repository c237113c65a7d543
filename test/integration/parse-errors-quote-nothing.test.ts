import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FORMAT_IDS, type FormatId } from "../../analysis/formats/types";
import { EmberscopeError } from "../../server/domain/errors";
import { callService, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { tempProject } from "../helpers/project";
import { delimited, int, message, packed } from "../helpers/protobuf-writer";

/**
 * Secret-looking inputs, each shaped to reach a different error of the importers and parsers: an
 * agent that names a file it may not read (or a link the checks missed) must learn nothing of
 * its bytes from the error. Every string in SECRETS is planted in the inputs; none may come back.
 */
const SECRETS = ["'Q'", "0x01", "zqsecretli", "root:x:0:0", "rootpw7Q", "AKIAQZ7SECRETKEY9", "hunter2zq", "zqsecretliteral", "zqEscapeQ", "73519", "88123", "zqUnitSecret", "55501234", "zqPositionsQ", "zqCostQ", "zqCallsQ", "97531"];

const text = (lines: string[]) => lines.join("\n") + "\n";
const PASSWD = text(["root:x:0:0:rootpw7Q:/root:/bin/bash", "svc:AKIAQZ7SECRETKEY9:hunter2zq"]);

/** pprof's string table: "", "samples", "count". */
const STRINGS = [...delimited(6, []), ...delimited(6, [...Buffer.from("samples")]), ...delimited(6, [...Buffer.from("count")])];

/** Inputs for one format beyond the text every format is given. */
const SHAPED: Partial<Record<FormatId, (string | Uint8Array)[]>> = {
  cpuprofile: [
    `{"nodes": zqsecretliteral}`,
    `{"nodes":[{"id":73519,"callFrame":{"functionName":"a"},"children":[88123]},{"id":88123,"callFrame":{"functionName":"b"},"children":[73519]}],"samples":[73519]}`,
    `{"nodes":[], "samples": ["\\zqEscapeQ"]}`,
  ],
  heapprofile: [`{"head": {"selfSize": zqsecretliteral}}`],
  "chrome-trace": [`{"traceEvents": [{"ph": "X", "ts": 1} zqsecretliteral]}`, `{"traceEvents": [{"ph": "X", "ts": 1} Q]}`, `[{"name": "\\zqEscapeQ"}]`, `{"traceEvents": [{"ph":"X","name":"a\u0001zqEscapeQ"}]}`],
  speedscope: [`{"shared": zqsecretliteral, "profiles": []}`, `{"shared": {"frames": []}, "profiles": [{"type": "sampled", "name": "hunter2zq" 73519}]}`],
  "otlp-json": [`{"resourceSpans": zqsecretliteral}`, `zqsecretliteral {"resourceSpans": []}`],
  callgrind: [
    text(["events: Ir", "fn=(97531)", "1 1"]),
    text(["events: Ir", "fn=main", "12 zqCostQ"]),
    text(["positions: zqPositionsQ", "events: Ir"]),
    text(["events: Ir", "fn=main", "+zqPositionsQ 1"]),
    text(["events: Ir", "fn=main", "cfn=other", "calls=zqCallsQ 1", "1 1"]),
    text(["events: Ir", "summary: 55501234", "fn=main", "1 1"]),
    text(["events: Ir", "fn=main", "1 1 73519"]),
  ],
  pprof: [
    // A sample naming location 73519 that does not exist, a string index 88123 past the table, a
    // sample with two values for one sample type.
    Uint8Array.from([...message(1, int(1, 1), int(2, 2)), ...message(2, packed(1, [73519]), packed(2, [5])), ...STRINGS]),
    Uint8Array.from([...message(1, int(1, 88123), int(2, 2)), ...message(2, packed(2, [5])), ...STRINGS]),
    Uint8Array.from([...message(1, int(1, 1), int(2, 2)), ...message(2, packed(2, [73519, 97531])), ...STRINGS]),
  ],
  folded: [text(["zqsecretliteral hunter2zq", "AKIAQZ7SECRETKEY9;main 73519x"])],
  "trace-v1": [
    `{"format": "emberscope.trace", "version": 1, "events": [{"id": "hunter2zq", "tool": "rootpw7Q", "status": "zqsecretliteral"}]}`,
    `{"format": "emberscope.trace", "version": 1, "inputs": {"zqsecretliteral": 1}, "events": [{"id": "a", "tool": "b", "status": "ok", "after": ["hunter2zq"]}]}`,
  ],
  "claude-code": [text([`{"type":"user","sessionId":"hunter2zq","message": zqsecretliteral}`]), text([`{"zqsecretliteral": "hunter2zq"}`])],
  "codex-rollout": [text([`{"timestamp":"2025-09-18T14:02:00.000Z","type":"response_item","payload": zqsecretliteral}`]), text([`{"hunter2zq": "zqsecretliteral"}`])],
  "hf-session": [text([`{"type":"session","harness":"hunter2zq","id":"rootpw7Q"}`, `{"type":"message","message": zqsecretliteral}`]), text([`{"type":"zqsecretliteral"}`])],
  "openai-chat": [`{"messages": [{"role": "tool", "content": "hunter2zq"} zqsecretliteral]}`, `{"messages": ["zqsecretliteral"]}`, `{"messages": "hunter2zq"}`],
  "jaeger-json": [`{"data": [{"traceID": "hunter2zq", "spans": [zqsecretliteral]}]}`, `{"data": [{"traceID": "t", "spans": ["hunter2zq"]}]}`],
};

/** Inputs that import, with limitations about values the file holds. */
const LIMITED: [FormatId, string][] = [
  ["speedscope", JSON.stringify({ shared: { frames: [{ name: "a" }] }, profiles: [{ type: "sampled", name: "p", unit: "zqUnitSecret", startValue: 0, endValue: 1, samples: [[0]], weights: [1] }] })],
  ["callgrind", text(["events: Ir", "fn=main", "1 7", "totals: 55501234"])],
];

function setup() {
  const root = tempProject();
  initWorkspace(root).close();
  const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "agent" };
  let n = 0;
  const file = (content: string | Uint8Array) => {
    const name = `input-${n++}.bin`;
    writeFileSync(path.join(root, name), content);
    return name;
  };
  return { ctx, file };
}

function leaked(document: unknown): string[] {
  const shown = JSON.stringify(document);
  return SECRETS.filter((secret) => shown.includes(secret));
}

describe("import errors quote nothing of the input", () => {
  it.each(FORMAT_IDS)("%s: a malformed secret-looking file's error document names format, place and problem, never its bytes", async (format) => {
    const { ctx, file } = setup();
    for (const content of [PASSWD, ...(SHAPED[format] ?? [])]) {
      let error: EmberscopeError | null = null;
      try {
        await callService(importArtifact, ctx, { path: file(content), format });
      } catch (thrown) {
        error = thrown as EmberscopeError;
      }
      expect(error, String(content)).toBeInstanceOf(EmberscopeError);
      const doc = error!.toDocument();
      expect(doc.code, `${String(content)}: ${doc.message}`).not.toBe("INTERNAL_ERROR");
      expect(leaked(doc), `${String(content)}: ${doc.message}`).toEqual([]);
    }
  });

  it.each(LIMITED)("%s: limitations about a value in the file do not quote it", async (format, content) => {
    const { ctx, file } = setup();
    const result = await callService(importArtifact, ctx, { path: file(content), format });
    expect(result.limitations.length).toBeGreaterThan(0);
    expect(leaked(result.limitations)).toEqual([]);
  });
});
