import { describe, expect, it } from "vitest";
import { agentTraceFixture, toolSpans } from "../../test/helpers/tool-spans";
import { claudeCodeImporter } from "../formats/claude-code";
import { importToMemory } from "../formats/run";
import { workflowCriticalPathReport } from "../critical-path/report";
import { compileWorkflow, workflowDigest, type CompileEvent, type CompileInput, type Json, type ToolContracts } from "./compile";
import { WorkflowCompileError } from "./errors";
import { compileEventsFromSpans, type EdgeRow, type SpanRow } from "./from-spans";

const MS = 1_000_000;

/** A successful read call at `start` ms taking `dur` ms; override anything. */
function call(key: string, tool: string, args: Json, result: Json | string | null, start: number, dur: number, more: Partial<CompileEvent> = {}): CompileEvent {
  return {
    key,
    callId: `call_${key}`,
    tool,
    isCall: true,
    argumentsText: args === null ? null : JSON.stringify(args),
    argumentsTruncated: false,
    resultText: result === null ? null : typeof result === "string" ? result : JSON.stringify(result),
    resultTruncated: false,
    status: "ok",
    error: null,
    sideEffect: "read",
    startNs: start * MS,
    durNs: dur * MS,
    agent: "main",
    parent: null,
    after: [],
    ...more,
  };
}

function compile(events: CompileEvent[], extra: Partial<CompileInput> = {}) {
  return compileWorkflow({ source: { run_id: "run_1", commit_id: null, trace_id: null }, inputs: {}, events, contracts: new Map(), ...extra });
}

const edgeList = (w: ReturnType<typeof compile>["workflow"]) => w.edges.map((e) => `${e.from} -${e.kind}-> ${e.to}`);

describe("workflow compiler", () => {
  it("turns an argument equal to an earlier result's nested value into a reference, and a runtime input into an input", () => {
    const { workflow, report } = compile(
      [
        call("a", "list_issues", { repo: "octo/calc" }, { items: [{ id: 48213, title: "sum is wrong" }, { id: 48214, title: "docs" }], total: 2 }, 0, 10),
        call("b", "get_issue", { repo: "octo/calc", number: 48213 }, { body: "see src/sum.ts", labels: ["bug", "math"] }, 20, 5),
        call("c", "tag", { issue: 48213, labels: ["bug", "math"], note: "ok" }, "done", 30, 1, { sideEffect: "write", after: ["b"] }),
      ],
      { inputs: { repo: "octo/calc" } },
    );
    expect(workflow.nodes.map((n) => n.arguments)).toEqual([
      { repo: { $input: "repo", path: "" } },
      { repo: { $input: "repo", path: "" }, number: { $ref: "n1", path: "/items/0/id" } },
      // "ok" is too short to identify anything; 48213 is in both earlier results: n2 finished last.
      { issue: { $ref: "n1", path: "/items/0/id" }, labels: { $ref: "n2", path: "/labels" }, note: "ok" },
    ]);
    expect(report.references).toEqual({ data_ref: 3, input: 2 });
    expect(edgeList(workflow)).toEqual(["n1 -data_ref-> n2", "n1 -data_ref-> n3", "n2 -data_ref-> n3"]);
    expect(report.ties).toEqual([]);
    expect(workflow.status).toBe("ready");
  });

  it("picks the producer that finished last and lists the tie", () => {
    const { workflow, report } = compile([
      call("a", "search", { q: "alpha" }, { hit: "doc-7781" }, 0, 30),
      call("b", "search", { q: "beta" }, { hit: "doc-7781" }, 5, 10),
      call("c", "open", { doc: "doc-7781" }, "text", 40, 1),
    ]);
    // a ends at 30 ms, b at 15 ms: a finished last.
    expect(workflow.nodes[2].arguments).toEqual({ doc: { $ref: "n1", path: "/hit" } });
    expect(report.ties).toEqual([{ node: "n3", argument: "/doc", chosen: { $ref: "n1", path: "/hit" }, others: [{ $ref: "n2", path: "/hit" }] }]);
  });

  it("refers to a line of a text result, and never to a result that came after the call was issued", () => {
    const { workflow } = compile([
      call("grep", "Grep", { pattern: "export function sum" }, "Found 2 files\n/src/sum.ts\n/src/mul.ts", 0, 10),
      call("late", "Glob", { pattern: "*.md" }, "/docs/readme.md", 0, 100),
      call("read", "Read", { file_path: "/src/mul.ts", also: "/docs/readme.md" }, "…", 50, 1),
    ]);
    expect(workflow.nodes[2].arguments).toEqual({ file_path: { $ref: "n1", line: 2 }, also: "/docs/readme.md" });
    expect(edgeList(workflow)).toEqual(["n1 -data_ref-> n3"]);
  });

  it("filters failed and unfinished calls into the report, and their followers follow what they followed", () => {
    const { workflow, report } = compile([
      call("w", "Write", { file: "/a.txt" }, "ok", 0, 1, { sideEffect: "write" }),
      call("f", "Bash", { command: "make" }, "boom", 2, 1, { sideEffect: "write", status: "error", error: "exit 2", after: ["w"] }),
      call("r", "Read", { file: "/b.txt" }, "bbbb", 4, 1, { after: ["f"] }),
      call("u", "Bash", { command: "sleep" }, null, 6, 0, { status: "unfinished", after: ["r"] }),
      call("x", "(unknown tool)", null, "orphan", 7, 0, { isCall: false }),
    ]);
    expect(report.filtered).toEqual([
      { call_id: "call_f", tool: "Bash", status: "error", error: "exit 2" },
      { call_id: "call_u", tool: "Bash", status: "unfinished", error: null },
      { call_id: "call_x", tool: "(unknown tool)", status: "result_without_call", error: null },
    ]);
    expect(workflow.nodes.map((n) => n.recorded.call_ids)).toEqual([["call_w"], ["call_r"]]);
    expect(edgeList(workflow)).toEqual(["n1 -follows_from-> n2"]);
  });

  it("merges a repeated read with the same arguments and result, but not one whose result changed", () => {
    const { workflow, report } = compile([
      call("r1", "Read", { file_path: "/src/sum.ts" }, "export const sum = (a, b) => a - b;", 0, 2),
      call("r2", "Read", { file_path: "/src/sum.ts" }, "export const sum = (a, b) => a - b;", 5, 2, { after: ["r1"] }),
      call("e", "Edit", { file_path: "/src/sum.ts", old: "a - b", new: "a + b" }, "edited", 10, 2, { sideEffect: "write", after: ["r2"] }),
      call("r3", "Read", { file_path: "/src/sum.ts" }, "export const sum = (a, b) => a + b;", 15, 2, { after: ["e"] }),
    ]);
    expect(workflow.nodes.map((n) => [n.id, n.tool, n.recorded.call_ids])).toEqual([
      ["n1", "Read", ["call_r1", "call_r2"]],
      ["n2", "Edit", ["call_e"]],
      ["n3", "Read", ["call_r3"]],
    ]);
    expect(report.deduplicated).toEqual([{ node: "n1", call_id: "call_r2" }]);
    expect(report.not_deduplicated).toEqual([{ node: "n3", call_id: "call_r3", same_as: "n1" }]);
    // The Edit followed the merged read: it now follows n1; the last read follows the Edit.
    expect(edgeList(workflow)).toEqual(["n1 -follows_from-> n2", "n2 -follows_from-> n3"]);
  });

  it("drops causal links between reads but keeps a read after its write, through a chain of reads", () => {
    const { workflow, report } = compile([
      call("w", "Write", { file: "/x" }, "written", 0, 1, { sideEffect: "write" }),
      call("r1", "Read", { file: "/x" }, "one1", 2, 1, { after: ["w"] }),
      call("r2", "Read", { file: "/y" }, "two2", 4, 1, { after: ["r1"] }),
      call("r3", "Read", { file: "/z" }, "three", 6, 1, { after: ["r2"] }),
      call("w2", "Write", { file: "/out" }, "written", 8, 1, { sideEffect: "write", after: ["r3"] }),
    ]);
    expect(report.read_links_dropped).toBe(2);
    // r2 and r3 still come after the write w (inherited through r1), and w2 after r3.
    expect(edgeList(workflow)).toEqual(["n1 -follows_from-> n2", "n1 -follows_from-> n3", "n1 -follows_from-> n4", "n4 -follows_from-> n5"]);
    const cp = workflowCriticalPathReport(workflow);
    expect(cp.sequential_ns).toBe(5 * MS);
    // w, then the three reads at once, then w2.
    expect(cp.critical_path_ns).toBe(3 * MS);
  });

  it("stops at a cycle of causal links with CYCLE_DETECTED naming its calls", () => {
    const events = [
      call("a", "A", { v: "aaaa" }, "one1", 0, 1, { after: ["c"], sideEffect: "write" }),
      call("b", "B", { v: "bbbb" }, "two2", 2, 1, { after: ["a"], sideEffect: "write" }),
      call("c", "C", { v: "cccc" }, "three", 4, 1, { after: ["b"], sideEffect: "write" }),
    ];
    const error = (() => {
      try {
        compile(events);
      } catch (e) {
        return e as WorkflowCompileError;
      }
      throw new Error("no error");
    })();
    expect(error).toBeInstanceOf(WorkflowCompileError);
    expect(error.code).toBe("CYCLE_DETECTED");
    expect(error.details.cycle).toEqual([
      { call_id: "call_a", tool: "A" },
      { call_id: "call_b", tool: "B" },
      { call_id: "call_c", tool: "C" },
    ]);
    expect(error.message).toBe("the calls' dependencies form a cycle: A (call_a) → B (call_b) → C (call_c) → A (call_a)");
  });

  it("blocks a workflow with a tool of unknown side effect until a reviewed contract says what it does", () => {
    const events = [
      call("a", "fetch_page", { url: "https://example.test/a" }, "page-one", 0, 3, { sideEffect: "unknown" }),
      call("b", "fetch_page", { url: "https://example.test/a" }, "page-one", 5, 3, { sideEffect: "unknown", after: ["a"] }),
    ];
    const blocked = compile(events).workflow;
    expect([blocked.status, blocked.blocked_tools, blocked.nodes.length]).toEqual(["blocked", ["fetch_page"], 2]);
    const contracts: ToolContracts = new Map([["fetch_page", "read"]]);
    const reviewed = compile(events, { contracts }).workflow;
    expect([reviewed.status, reviewed.blocked_tools, reviewed.nodes.length]).toEqual(["ready", [], 1]);
    expect(reviewed.nodes[0]).toMatchObject({ side_effect: "read", side_effect_reviewed: true });
    // A contract overrides the trace either way: marked write, the repeat is no longer merged.
    expect(compile(events, { contracts: new Map([["fetch_page", "write"]]) }).workflow.nodes.length).toBe(2);
  });

  it("wraps literal objects that look like references", () => {
    const { workflow } = compile([call("a", "echo", { payload: { $ref: "n9", path: "" } }, "x", 0, 1)]);
    expect(workflow.nodes[0].arguments).toEqual({ payload: { $literal: { $ref: "n9", path: "" } } });
  });

  it("places a subagent's calls inside the call that started it: children follow its dependencies, it waits for them", () => {
    const { workflow } = compile([
      call("w", "Write", { file: "/plan.md" }, "saved", 0, 2, { sideEffect: "write" }),
      call("t", "Task", { prompt: "look around" }, "summary", 10, 100, { sideEffect: "write", after: ["w"] }),
      call("s1", "Grep", { pattern: "todo" }, "/a.ts", 20, 30, { agent: "sub", parent: "t" }),
      call("s2", "Read", { file: "/a.ts" }, "aaaa", 60, 20, { agent: "sub", parent: "t", after: ["s1"] }),
    ]);
    expect(workflow.nodes.map((n) => [n.id, n.recorded.duration_ns / MS, n.recorded.own_ns / MS])).toEqual([
      ["n1", 2, 2],
      ["n2", 100, 50],
      ["n3", 30, 30],
      ["n4", 20, 20],
    ]);
    expect(edgeList(workflow)).toEqual(["n1 -follows_from-> n2", "n3 -child-> n2", "n4 -child-> n2", "n1 -follows_from-> n3", "n1 -follows_from-> n4", "n3 -data_ref-> n4"].sort(byTarget));
    const cp = workflowCriticalPathReport(workflow);
    expect(cp.path.map((p) => p.id)).toEqual(["n1", "n3", "n4", "n2"]);
    expect(cp.critical_path_ns).toBe((2 + 30 + 20 + 50) * MS);
  });

  it("gives the same workflow and digest whatever order events with distinct starts come in", async () => {
    const events = [
      call("a", "list", { dir: "/src" }, ["/src/a.ts", "/src/b.ts"], 0, 4),
      call("b", "read", { file: "/src/a.ts" }, "aaaa", 5, 1),
      call("c", "read", { file: "/src/b.ts" }, "bbbb", 6, 1),
    ];
    const one = compile(events).workflow;
    const two = compile([events[2], events[0], events[1]]).workflow;
    expect(two).toEqual(one);
    expect(await workflowDigest(two)).toBe(await workflowDigest(one));
    expect(await workflowDigest(one)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("refuses an empty trace and a link to an event that is not there", () => {
    expect(() => compile([])).toThrow(expect.objectContaining({ code: "NO_TOOL_CALLS" }));
    expect(() => compile([call("a", "A", null, null, 0, 1, { after: ["nope"] })])).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENTS" }));
  });
});

describe("workflow compiler on an imported Claude Code session", () => {
  it("compiles the spans the importer wrote: failed calls out, the Grep's line into the Read, the subagent inside its Task", async () => {
    const imported = await importToMemory(claudeCodeImporter, agentTraceFixture("claude-code-session.jsonl"));
    const rows = imported.tables.spans as unknown as SpanRow[];
    const edges = imported.tables.edges as unknown as EdgeRow[];
    const { workflow, report } = compileWorkflow({ source: { run_id: null, commit_id: null, trace_id: null }, inputs: {}, events: compileEventsFromSpans(rows, edges), contracts: new Map() });
    expect(toolSpans(imported).length).toBe(10);
    expect(report.filtered.map((f) => [f.call_id, f.status])).toEqual([
      ["toolu_03", "error"],
      ["toolu_zz", "result_without_call"],
      ["toolu_07", "unfinished"],
    ]);
    expect(workflow.nodes.map((n) => [n.id, n.tool, n.recorded.call_ids.join(",")])).toEqual([
      ["n1", "Read", "toolu_01"],
      ["n2", "Grep", "toolu_02"],
      ["n3", "Read", "toolu_04"],
      ["n4", "Task", "toolu_05"],
      ["n5", "Grep", "toolu_s1"],
      ["n6", "Read", "toolu_s2"],
      ["n7", "MultiEdit", "toolu_06"],
    ]);
    // Claude Code does not say which tools only read: every tool is unknown until reviewed.
    expect(workflow.status).toBe("blocked");
    expect(workflow.blocked_tools).toEqual(["Grep", "MultiEdit", "Read", "Task"]);
    // MultiEdit edits the file the Grep found (its result's line 1).
    expect(workflow.nodes[6].arguments).toEqual({ file_path: { $ref: "n2", line: 1 }, edits: [{ old_string: "return a - b;", new_string: "return a + b;" }, expect.anything()] });
    // Unknown tools keep every link: the failed Bash passes its causes (n1, n2) on to the Task; the
    // subagent's calls follow what the Task followed and the Task waits for them.
    expect(edgeList(workflow)).toEqual([
      "n1 -follows_from-> n3",
      "n2 -follows_from-> n3",
      "n1 -follows_from-> n4",
      "n2 -follows_from-> n4",
      "n3 -follows_from-> n4",
      "n5 -child-> n4",
      "n6 -child-> n4",
      "n1 -follows_from-> n5",
      "n2 -follows_from-> n5",
      "n3 -follows_from-> n5",
      "n1 -follows_from-> n6",
      "n2 -follows_from-> n6",
      "n3 -follows_from-> n6",
      "n5 -follows_from-> n6",
      "n2 -data_ref-> n7",
      "n4 -follows_from-> n7",
    ]);
  });

  it("once a person reviews Read and Grep as read-only, merges the repeated Read and lets the reads run at once", async () => {
    const imported = await importToMemory(claudeCodeImporter, agentTraceFixture("claude-code-session.jsonl"));
    const contracts: ToolContracts = new Map([
      ["Read", "read"],
      ["Grep", "read"],
    ]);
    const events = compileEventsFromSpans(imported.tables.spans as unknown as SpanRow[], imported.tables.edges as unknown as EdgeRow[]);
    const { workflow, report } = compileWorkflow({ source: { run_id: null, commit_id: null, trace_id: null }, inputs: {}, events, contracts });
    expect(workflow.nodes.map((n) => [n.id, n.tool, n.recorded.call_ids.join(",")])).toEqual([
      ["n1", "Read", "toolu_01,toolu_04"],
      ["n2", "Grep", "toolu_02"],
      ["n3", "Task", "toolu_05"],
      ["n4", "Grep", "toolu_s1"],
      ["n5", "Read", "toolu_s2"],
      ["n6", "MultiEdit", "toolu_06"],
    ]);
    expect(report.deduplicated).toEqual([{ node: "n1", call_id: "toolu_04" }]);
    expect(report.read_links_dropped).toBe(1);
    expect(workflow.blocked_tools).toEqual(["MultiEdit", "Task"]);
    expect(edgeList(workflow)).toEqual(["n1 -follows_from-> n3", "n2 -follows_from-> n3", "n4 -child-> n3", "n5 -child-> n3", "n2 -data_ref-> n6", "n3 -follows_from-> n6"]);
  });
});

function byTarget(a: string, b: string): number {
  const [fa, , ta] = a.split(" ");
  const [fb, , tb] = b.split(" ");
  return Number(ta.slice(1)) - Number(tb.slice(1)) || Number(fa.slice(1)) - Number(fb.slice(1));
}
