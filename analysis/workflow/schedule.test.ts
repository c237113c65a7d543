import { describe, expect, it } from "vitest";
import { atPointer, resolveArguments, UnresolvedReference } from "./arguments";
import { scheduleByEvents, type ScheduleNode } from "./schedule";

/** A manual clock: calls finish when the test says, so order is observed, not timed. */
function harness(nodes: ScheduleNode[], options: { concurrency?: number; limits?: Record<string, number>; onFailure?: "continue" | "cancel"; fail?: number[] } = {}) {
  const started: number[] = [];
  const pending = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  const aborted: number[] = [];
  const done = scheduleByEvents(nodes, {
    concurrency: options.concurrency ?? 100,
    groupLimit: (g) => options.limits?.[g] ?? Infinity,
    onFailure: options.onFailure ?? "continue",
    run: (i, signal) =>
      new Promise<void>((resolve, reject) => {
        started.push(i);
        pending.set(i, { resolve, reject });
        signal.addEventListener("abort", () => (aborted.push(i), reject(signal.reason)));
      }),
  });
  const finish = async (i: number, ok = true) => {
    const p = pending.get(i)!;
    pending.delete(i);
    if (ok) p.resolve();
    else p.reject(new Error(`node ${i} failed`));
    await new Promise((r) => setTimeout(r, 0));
  };
  return { started, aborted, done, finish, running: () => [...pending.keys()].sort() };
}

const node = (deps: number[], group = "t", weight = 1): ScheduleNode => ({ deps, group, weight });

describe("event-driven scheduling", () => {
  it("starts a node the moment its own inputs are ready, not when its layer is", async () => {
    // 0 → 2 and 1 → 3: when 0 finishes, 2 starts although 1 (same layer as 0) still runs.
    const h = harness([node([]), node([]), node([0]), node([1])]);
    await new Promise((r) => setTimeout(r, 0));
    expect(h.running()).toEqual([0, 1]);
    await h.finish(0);
    expect(h.running()).toEqual([1, 2]);
    await h.finish(2);
    await h.finish(1);
    await h.finish(3);
    expect((await h.done).map((o) => o.state)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
  });

  it("keeps the global and per-group limits, longest remaining path first", async () => {
    // Five ready nodes of group a (limit 2) and one of b; global 3. Node 4 heads a long chain (4 → 6 → 7).
    const h = harness([node([], "a"), node([], "a"), node([], "a"), node([], "b"), node([], "a"), node([], "x"), node([4], "x"), node([6], "x")], { concurrency: 3, limits: { a: 2 } });
    await new Promise((r) => setTimeout(r, 0));
    expect(h.started).toEqual([4, 0, 3]);
    await h.finish(0);
    expect(h.running()).toEqual([1, 3, 4]);
    for (const i of [1, 3, 4, 2, 5, 6, 7]) if (h.running().includes(i)) await h.finish(i);
    while (h.running().length) await h.finish(h.running()[0]);
    expect((await h.done).every((o) => o.state === "succeeded")).toBe(true);
  });

  it("skips only a failed node's dependants, naming it, and finishes the rest", async () => {
    const h = harness([node([]), node([0]), node([1]), node([])]);
    await new Promise((r) => setTimeout(r, 0));
    await h.finish(0, false);
    expect(h.running()).toEqual([3]);
    await h.finish(3);
    const outcomes = await h.done;
    expect(outcomes.map((o) => [o.state, o.blockedBy ?? null])).toEqual([
      ["failed", null],
      ["skipped", 0],
      ["skipped", 0],
      ["succeeded", null],
    ]);
  });

  it("with onFailure cancel, aborts the running nodes and skips the rest", async () => {
    const h = harness([node([]), node([]), node([1]), node([])], { onFailure: "cancel", concurrency: 2 });
    await new Promise((r) => setTimeout(r, 0));
    await h.finish(0, false);
    const outcomes = await h.done;
    expect(h.aborted).toEqual([1]);
    expect(outcomes.map((o) => o.state)).toEqual(["failed", "cancelled", "skipped", "skipped"]);
  });
});

describe("argument templates", () => {
  it("fills references to results (pointer and line), inputs and literals", () => {
    const outputs = new Map<string, unknown>([["n1", { items: [{ id: "abcd" }] }], ["n2", "first\n  second line  \nthird"]]);
    const filled = resolveArguments(
      { a: { $ref: "n1", path: "/items/0/id" }, b: { $ref: "n2", line: 1 }, c: { $input: "repo", path: "/name" }, d: { $literal: { $ref: "n9" } } },
      { repo: { name: "acme/app" } },
      (id) => outputs.get(id) as never,
    );
    expect(filled).toEqual({ a: "abcd", b: "second line", c: "acme/app", d: { $ref: "n9" } });
  });

  it("reads own keys only: a pointer through __proto__ or constructor finds nothing", () => {
    expect(atPointer({ a: 1 }, "/__proto__")).toBeUndefined();
    expect(atPointer({ a: 1 }, "/constructor")).toBeUndefined();
    expect(atPointer([1, 2], "/length")).toBeUndefined();
    expect(() => resolveArguments({ $ref: "n1", path: "/constructor/name" }, {}, () => ({}))).toThrow(UnresolvedReference);
    expect(() => resolveArguments({ $input: "__proto__", path: "" }, {}, () => undefined)).toThrow(UnresolvedReference);
  });
});
