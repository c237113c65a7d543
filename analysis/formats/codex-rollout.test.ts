// A Codex CLI rollout written from the format codex-rs writes (session_meta, turn_context,
// response_item and event_msg lines): two parallel shell calls, a failing test run (its exit code in
// the output and in exec_command_end), apply_patch as a custom tool call, a repeated read, an
// output whose call is missing and a call without output.
import { describe, expect, it } from "vitest";
import { EvidenceBuilder, MemorySink } from "../evidence/builder";
import { agentTraceFixture, edgesByCallId, limitationCounts, toolSpans } from "../../test/helpers/tool-spans";
import { parseErrorOf } from "../../test/helpers/evidence-rows";
import { headText } from "../io/text";
import { claudeCodeImporter } from "./claude-code";
import { CODEX_END_WINDOW_LINES, codexRolloutImporter } from "./codex-rollout";
import { detectFormat } from "./index";
import { importToMemory, parseEvidence, sourceFromBytes } from "./run";
import { DEFAULT_IMPORT_LIMITS } from "./types";

const ROLLOUT = agentTraceFixture("codex-rollout.jsonl");

describe("Codex rollout importer", () => {
  it("pairs calls and outputs by call_id: exact spans, statuses, times and edges", async () => {
    const result = await importToMemory(codexRolloutImporter, ROLLOUT, { chunkSize: 700 });
    expect(toolSpans(result).map((s) => [s.args.call_id, s.name, s.category, s.status, s.startMs, s.durMs])).toEqual([
      ["call_A", "shell", "tool", "ok", 0, 300],
      ["call_B", "shell", "tool", "ok", 10, 490],
      ["call_C", "shell", "tool", "error", 1900, 4000],
      ["call_D", "apply_patch", "tool", "ok", 6900, 200],
      ["call_E", "shell", "tool", "ok", 7900, 300],
      ["call_Z", "(unknown tool)", "tool_result", "ok", 8300, 0],
      ["call_F", "shell", "tool", "unfinished", 9000, 0],
    ]);
    expect(result.summary.rows).toMatchObject({ spans: 7, edges: 5, tracks: 1 });
    expect(edgesByCallId(result)).toEqual({
      follows_from: ["call_A → call_C", "call_B → call_C", "call_C → call_D", "call_D → call_E", "call_E → call_F"],
    });
    expect(limitationCounts(result)).toMatchObject({ TOOL_TIMES_APPROXIMATE: 7, TOOL_RESULT_WITHOUT_CALL: 1, TOOL_CALL_WITHOUT_RESULT: 1, TOOL_SIDE_EFFECT_UNKNOWN: 6 });
    expect(result.tables.tracks.map((t) => [t.process_id, t.thread_name])).toEqual([["0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b", "main"]]);
  });

  it("keeps nested arguments as compact JSON text, a custom tool's input as a JSON string, and exit codes", async () => {
    const result = await importToMemory(codexRolloutImporter, ROLLOUT);
    const byId = new Map(toolSpans(result).map((s) => [s.args.call_id, s]));
    expect(JSON.parse(byId.get("call_A")!.args.arguments as string)).toEqual({ command: ["bash", "-lc", "sed -n '1,40p' src/sum.ts"], workdir: "/home/dev/calc", timeout_ms: 120000 });
    // The repeated read: same tool, same arguments text.
    expect(byId.get("call_E")!.args.arguments).toBe(byId.get("call_A")!.args.arguments);
    expect(JSON.parse(byId.get("call_D")!.args.arguments as string)).toMatch(/^\*\*\* Begin Patch/);
    expect(byId.get("call_C")!.args).toMatchObject({ exit_code: 1, side_effect: "unknown" });
    expect(byId.get("call_D")!.args).toMatchObject({ exit_code: 0, item: "custom_tool_call" });
  });

  it("marks a call failed by exec_command_end even when its output says nothing", async () => {
    const line = (timestamp: string, type: string, payload: object) => JSON.stringify({ timestamp, type, payload }) + "\n";
    const input =
      line("2025-09-18T14:02:00.000Z", "response_item", { type: "function_call", name: "shell", arguments: '{"command":["false"]}', call_id: "c1" }) +
      line("2025-09-18T14:02:00.500Z", "response_item", { type: "function_call_output", call_id: "c1", output: "" }) +
      line("2025-09-18T14:02:00.600Z", "event_msg", { type: "exec_command_end", call_id: "c1", exit_code: 2 });
    expect(toolSpans(await importToMemory(codexRolloutImporter, input)).map((s) => s.status)).toEqual(["error"]);
  });

  it("fails on a broken line with its line number, and is told apart from Claude Code", async () => {
    const first = new TextDecoder().decode(ROLLOUT).split("\n")[0];
    expect((await parseErrorOf(codexRolloutImporter, `${first}\n{"type": "response_item", "payload": {]}\n`)).at.line).toBe(2);
    expect(detectFormat(ROLLOUT, headText(ROLLOUT), "rollout-2025-09-18T14-02-00-0199a1b2.jsonl")?.id).toBe("codex-rollout");
    expect(claudeCodeImporter.sniff(ROLLOUT, headText(ROLLOUT), "x.jsonl")).toBe(0);
    const claude = agentTraceFixture("claude-code-session.jsonl");
    expect(codexRolloutImporter.sniff(claude, headText(claude), "x.jsonl")).toBe(0);
  });

  describe("a long rollout", () => {
    const line = (ms: number, type: string, payload: object) => JSON.stringify({ timestamp: new Date(Date.UTC(2025, 8, 18, 14) + ms).toISOString(), type, payload }) + "\n";
    /** `calls` calls each answered on the next line, `filler` lines of reasoning after each. */
    const rollout = (calls: number, filler: number, late: Record<number, number> = {}) => {
      let text = line(0, "session_meta", { id: "s1" });
      let ms = 0;
      for (let c = 0; c < calls; c++) {
        text += line((ms += 10), "response_item", { type: "function_call", name: "shell", arguments: `{"command":["echo","${c}"]}`, call_id: `c${c}` });
        text += line((ms += 10), "response_item", { type: "function_call_output", call_id: `c${c}`, output: `Exit code: 0\nOutput:\n${c}\n` });
        for (let f = 0; f < filler; f++) text += line((ms += 1), "response_item", { type: "reasoning", summary: [], content: null });
        for (const [failed, after] of Object.entries(late)) if (c === after) text += line((ms += 1), "event_msg", { type: "exec_command_end", call_id: `c${failed}`, exit_code: 3 });
      }
      return text;
    };

    it("sends each answered call's text to the builder while the file is still read, not all at the end", async () => {
      const input = new TextEncoder().encode(rollout(400, 8));
      const chunkSize = 4096;
      const chunks = Math.ceil(input.length / chunkSize);
      let read = 0;
      const source = sourceFromBytes(input, null, chunkSize);
      const counted = { ...source, async *chunks(options?: { reuse?: boolean }) { for await (const chunk of source.chunks(options)) { read++; yield chunk; } } };
      const builder = new EvidenceBuilder(new MemorySink(), 1024, "codex-rollout");
      const draftedAt: number[] = [];
      const spanDraft = builder.spanDraft.bind(builder);
      builder.spanDraft = (id, draft) => {
        draftedAt.push(read);
        spanDraft(id, draft);
      };
      await parseEvidence(codexRolloutImporter, { source: counted, builder, limits: DEFAULT_IMPORT_LIMITS });
      const summary = await builder.finish();
      expect(summary.rows.spans).toBe(400);
      // The first calls went out a window of lines after their output, long before the last chunk.
      expect(draftedAt.length).toBe(400);
      expect(draftedAt[0]).toBeLessThan(chunks / 2);
    });

    it("applies a failure reported just after the output, and says so when one comes too late to apply", async () => {
      // Call 5's failure comes a few lines after its output; call 0's after a window of lines.
      const late = Math.ceil((CODEX_END_WINDOW_LINES + 512) / 10) + 1;
      const result = await importToMemory(codexRolloutImporter, rollout(late + 1, 8, { 5: 6, 0: late }));
      const status = new Map(toolSpans(result).map((s) => [s.args.call_id, s.status]));
      expect(status.get("c5")).toBe("error");
      expect(status.get("c0")).toBe("ok");
      expect(limitationCounts(result)).toHaveProperty("CODEX_EXIT_CODE_LATE");
      expect([...status.values()].filter((s) => s === "error")).toHaveLength(1);
    });
  });
});
