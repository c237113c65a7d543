// A Claude Code session log written from the format Claude Code writes (~/.claude/projects/…/<session>.jsonl):
// a summary line, user and assistant lines chained by parentUuid, a message whose blocks come on
// separate lines, a failed Bash call, a Task call whose subagent runs on a sidechain, nested
// MultiEdit arguments, a result without its call and a call without its result.
import { describe, expect, it } from "vitest";
import { agentTraceFixture, edgesByCallId, limitationCounts, toolSpans } from "../../test/helpers/tool-spans";
import { parseErrorOf } from "../../test/helpers/evidence-rows";
import { headText } from "../io/text";
import { claudeCodeImporter } from "./claude-code";
import { detectFormat } from "./index";
import { importToMemory } from "./run";

const SESSION = agentTraceFixture("claude-code-session.jsonl");

describe("Claude Code session importer", () => {
  it("makes one span per tool call and result, on one track per agent, with exact edges", async () => {
    const result = await importToMemory(claudeCodeImporter, SESSION, { chunkSize: 512 });
    const spans = toolSpans(result);
    expect(spans.map((s) => [s.args.call_id, s.name, s.category, s.status, s.args.agent])).toEqual([
      ["toolu_01", "Read", "tool", "ok", "main"],
      ["toolu_02", "Grep", "tool", "ok", "main"],
      ["toolu_03", "Bash", "tool", "error", "main"],
      ["toolu_04", "Read", "tool", "ok", "main"],
      ["toolu_05", "Task", "tool", "ok", "main"],
      ["toolu_s1", "Grep", "tool", "ok", "subagent 1"],
      ["toolu_s2", "Read", "tool", "ok", "subagent 1"],
      ["toolu_06", "MultiEdit", "tool", "ok", "main"],
      ["toolu_zz", "(unknown tool)", "tool_result", "ok", "main"],
      ["toolu_07", "Bash", "tool", "unfinished", "main"],
    ]);
    expect(result.summary.rows).toMatchObject({ spans: 10, edges: 11, tracks: 2 });
    expect(result.tables.tracks.map((t) => [t.process_id, t.thread_name, t.kind])).toEqual([
      ["7d1c3b9e-2f4a-4e1b-9c55-0a8b2d6e4f10", "main", "agent"],
      ["7d1c3b9e-2f4a-4e1b-9c55-0a8b2d6e4f10", "subagent 1", "agent"],
    ]);
    expect(edgesByCallId(result)).toEqual({
      child: ["toolu_05 → toolu_s1", "toolu_05 → toolu_s2"],
      follows_from: [
        "toolu_01 → toolu_03",
        "toolu_01 → toolu_04",
        "toolu_02 → toolu_03",
        "toolu_02 → toolu_04",
        "toolu_03 → toolu_05",
        "toolu_04 → toolu_05",
        "toolu_05 → toolu_06",
        "toolu_06 → toolu_07",
        "toolu_s1 → toolu_s2",
      ],
    });
  });

  it("times calls from message timestamps: parallel calls of one message overlap; durations are marked approximate", async () => {
    const result = await importToMemory(claudeCodeImporter, SESSION);
    const byId = new Map(toolSpans(result).map((s) => [s.args.call_id, s]));
    // From the first call (09:30:02). Two blocks of one line, and two lines of one message
    // (msg_01B): both pairs overlap.
    expect([byId.get("toolu_01")!.startMs, byId.get("toolu_01")!.durMs]).toEqual([0, 500]);
    expect([byId.get("toolu_02")!.startMs, byId.get("toolu_02")!.durMs]).toEqual([0, 1000]);
    expect([byId.get("toolu_03")!.startMs, byId.get("toolu_03")!.durMs]).toEqual([3000, 4000]);
    expect([byId.get("toolu_04")!.startMs, byId.get("toolu_04")!.durMs]).toEqual([3050, 150]);
    expect(byId.get("toolu_01")!.args.timing).toBe("approximate");
    expect(result.summary.metadata.time_origin_unix_nano).toBe(String(BigInt(Date.parse("2025-07-14T09:30:02.000Z")) * 1_000_000n));
    expect(limitationCounts(result)).toEqual({
      TOOL_TIMES_APPROXIMATE: 10,
      TOOL_SIDE_EFFECT_UNKNOWN: 9,
      TOOL_RESULT_WITHOUT_CALL: 1,
      TOOL_CALL_WITHOUT_RESULT: 1,
      // The builder's flame graph of spans (no samples in a session log).
      SAMPLES_FROM_SPANS: 1,
    });
  });

  it("keeps arguments as JSON text (nested too), results as text, errors as status error; a repeated read is two calls", async () => {
    const result = await importToMemory(claudeCodeImporter, SESSION);
    const byId = new Map(toolSpans(result).map((s) => [s.args.call_id, s]));
    const edit = byId.get("toolu_06")!;
    expect(JSON.parse(edit.args.arguments as string)).toEqual({
      file_path: "/home/dev/calc/src/sum.ts",
      edits: [
        { old_string: "return a - b;", new_string: "return a + b;" },
        { old_string: "// TODO", new_string: "", replace_all: false },
      ],
    });
    expect(edit.args.side_effect).toBe("unknown");
    expect(byId.get("toolu_03")!.args.result).toMatch(/^Exit code 1/);
    expect(byId.get("toolu_05")!.args.result).toBe("Two callers: sum.test.ts and total.ts.");
    expect(byId.get("toolu_01")!.args.arguments).toBe(byId.get("toolu_04")!.args.arguments);
    expect(byId.get("toolu_01")!.args.result).toBe(byId.get("toolu_04")!.args.result);
    // The subagent's calls are the Task call's children, roots of their own track.
    const task = byId.get("toolu_05")!;
    expect([byId.get("toolu_s1")!.parent, byId.get("toolu_s1")!.depth, byId.get("toolu_s1")!.track]).toEqual([task.spanId, 0, 1]);
  });

  it("bounds long arguments and results, flagging the cut", async () => {
    const line = (o: object) => JSON.stringify(o) + "\n";
    const common = { sessionId: "s", isSidechain: false, parentUuid: null };
    const input =
      line({ ...common, type: "assistant", uuid: "a", timestamp: "2025-07-14T09:30:00.000Z", message: { id: "m", role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: "/x", content: "y".repeat(50_000) } }] } }) +
      line({ ...common, type: "user", uuid: "b", timestamp: "2025-07-14T09:30:01.000Z", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "z".repeat(50_000) }] } });
    const result = await importToMemory(claudeCodeImporter, input);
    const [span] = toolSpans(result);
    expect(span.args).toMatchObject({ arguments_truncated: true, result_truncated: true });
    expect((span.args.arguments as string).length).toBe(8192);
    expect(limitationCounts(result)).toMatchObject({ TOOL_ARGUMENTS_TRUNCATED: 1, TOOL_RESULT_TRUNCATED: 1 });
  });

  it("fails on a line that is no JSON with its line and byte offset", async () => {
    const good = '{"type":"user","sessionId":"s","parentUuid":null,"uuid":"a","timestamp":"2025-07-14T09:30:00.000Z","message":{"role":"user","content":"hi"}}\n';
    const error = await parseErrorOf(claudeCodeImporter, good + '{"type":"assistant", oops}\n');
    expect(error.at).toMatchObject({ line: 2 });
    expect(error.at.offset).toBeGreaterThanOrEqual(good.length);
    expect((await parseErrorOf(claudeCodeImporter, "[1, 2]\n")).at.line).toBe(1);
  });

  it("is detected from its first lines, and detection gives it no other JSONL", () => {
    expect(detectFormat(SESSION.subarray(0, 65536), headText(SESSION), "7d1c3b9e.jsonl")?.id).toBe("claude-code");
    const otlp = new TextEncoder().encode('{"resourceSpans":[{"scopeSpans":[]}]}\n');
    expect(claudeCodeImporter.sniff(otlp, headText(otlp), "x.jsonl")).toBe(0);
  });
});
