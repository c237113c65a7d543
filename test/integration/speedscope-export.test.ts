import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import Ajv from "ajv";
import { describe, expect, it } from "vitest";
import { callService, exportSpeedscope, importArtifact, summarizeRun, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { REPO_ROOT, runCli } from "../helpers/cli";
import { failure } from "../helpers/failure";
import { tempProject } from "../helpers/project";

const SCHEMA = JSON.parse(readFileSync(path.join(REPO_ROOT, "test", "fixtures", "speedscope", "file-format-schema.json"), "utf8")) as object;
const validate = new Ajv({ strict: false, allErrors: true }).compile(SCHEMA);

interface File {
  shared: { frames: { name: string }[] };
  profiles: { type: string; name: string; unit: string; startValue: number; endValue: number; samples: number[][]; weights: number[] }[];
  activeProfileIndex?: number;
}

/** speedscope's rules beyond the schema (what its importer relies on). */
function formatRuleProblems(file: File): string[] {
  const problems: string[] = [];
  if (file.activeProfileIndex !== undefined && !(file.activeProfileIndex >= 0 && file.activeProfileIndex < file.profiles.length)) problems.push("activeProfileIndex out of range");
  file.profiles.forEach((p, i) => {
    if (p.samples.length !== p.weights.length) problems.push(`profile ${i}: ${p.samples.length} samples, ${p.weights.length} weights`);
    if (p.endValue < p.startValue) problems.push(`profile ${i}: endValue < startValue`);
    for (const stack of p.samples) for (const f of stack) if (!Number.isInteger(f) || f < 0 || f >= file.shared.frames.length) problems.push(`profile ${i}: frame index ${f}`);
  });
  return problems;
}

/** An independent reader of a speedscope sampled file: weight per root-first stack of names, over every profile. */
function stacksOf(file: File): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of file.profiles) {
    p.samples.forEach((stack, i) => {
      const key = stack.map((f) => file.shared.frames[f].name).join(";");
      out.set(key, (out.get(key) ?? 0) + p.weights[i]);
    });
  }
  return out;
}

/** An independent reader of folded stacks: weight per stack. */
function foldedStacks(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^(.*) (\d+)$/.exec(line.trim());
    if (m) out.set(m[1], (out.get(m[1]) ?? 0) + Number(m[2]));
  }
  return out;
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

function setup() {
  const root = tempProject();
  initWorkspace(root).close();
  const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
  return { root, ctx };
}

describe("speedscope export (evidence.export_speedscope)", () => {
  it("writes a file speedscope's schema accepts whose stacks and weights are the folded source's own, and which re-imports with the same total", async () => {
    const { root, ctx } = setup();
    // Recursion, a shared leaf under two callers, names that need escaping in JSON.
    const folded = ["main;parse;tokenize 30", "main;parse;hotLoop 120", 'main;render;"quoted" <tag> 25', "main;hotLoop 5", "main;a;a;a 7", "main;parse;tokenize 3"].join("\n") + "\n";
    const source = path.join(root, "app.folded");
    writeFileSync(source, folded);
    const imported = await callService(importArtifact, ctx, { path: source });
    const exported = await callService(exportSpeedscope, ctx, { run_id: imported.run_id });
    expect(exported.file_name).toBe("app.speedscope.json");
    expect(exported.commit_id).toBe(imported.commit_id);
    const file = exported.document as unknown as File;
    expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
    expect(formatRuleProblems(file)).toEqual([]);
    expect(file.profiles).toHaveLength(1);
    expect(file.profiles[0].unit).toBe("none");
    expect(stacksOf(file)).toEqual(foldedStacks(folded));
    expect(file.profiles[0].endValue - file.profiles[0].startValue).toBe(190);

    // Read back through the speedscope importer: the same total as the source file's own.
    const out = path.join(root, exported.file_name);
    writeFileSync(out, JSON.stringify(file));
    const again = await callService(importArtifact, ctx, { path: out });
    expect(again.format).toBe("speedscope");
    const summary = await callService(summarizeRun, ctx, { run_id: again.run_id });
    expect(summary.metrics.find((m) => m.name === "samples")?.total).toBe(sum(foldedStacks(folded).values()));
  });

  it("writes one profile per thread of a multi-thread trace, in nanoseconds, with totals equal to the source run's per metric", async () => {
    const { root, ctx } = setup();
    const imported = await callService(importArtifact, ctx, { path: path.join(REPO_ROOT, "test", "fixtures", "peer", "trace-event", "multi-thread-with-samples.json") });
    const source = await callService(summarizeRun, ctx, { run_id: imported.run_id });
    const metric = source.metrics.find((m) => m.samples > 0 && m.unit === "ns")!;
    expect(metric).toBeDefined();
    const exported = await callService(exportSpeedscope, ctx, { run_id: imported.run_id, metric: metric.name });
    const file = exported.document as unknown as File;
    expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
    expect(formatRuleProblems(file)).toEqual([]);
    expect(file.profiles.length).toBeGreaterThan(1);
    expect(new Set(file.profiles.map((p) => p.name)).size).toBe(file.profiles.length);
    for (const p of file.profiles) expect(p.unit).toBe("nanoseconds");
    expect(sum(stacksOf(file).values())).toBe(metric.total);

    const out = path.join(root, "threads.speedscope.json");
    writeFileSync(out, JSON.stringify(file));
    const again = await callService(importArtifact, ctx, { path: out });
    const back = await callService(summarizeRun, ctx, { run_id: again.run_id });
    expect(back.metrics.find((m) => m.name === "wall_ns")?.total).toBe(metric.total);
  });

  it("is written by `emberscope export speedscope` to a file that validates, and the validator refuses a file that breaks the format", async () => {
    const { root, ctx } = setup();
    writeFileSync(path.join(root, "cli.folded"), "main;a 3\nmain;b 4\n");
    const { run_id } = await callService(importArtifact, ctx, { path: path.join(root, "cli.folded") });
    const result = await runCli(["export", "speedscope", run_id, "--out", "out.json", "--json"], { cwd: root });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ run_id, metric: "samples", profiles: 1 });
    const file = JSON.parse(readFileSync(path.join(root, "out.json"), "utf8")) as File;
    expect(validate(file)).toBe(true);
    expect(stacksOf(file)).toEqual(new Map([["main;a", 3], ["main;b", 4]]));
    // The checks can fail: a unit speedscope does not know, and a sample without its weight.
    expect(validate({ ...file, profiles: [{ ...file.profiles[0], unit: "ticks" }] })).toBe(false);
    expect(formatRuleProblems({ ...file, profiles: [{ ...file.profiles[0], weights: [3] }] })).toEqual(["profile 0: 2 samples, 1 weights"]);
    expect((await runCli(["export", "speedscope", "run_missing", "--json"], { cwd: root })).json.code).toBe("RUN_NOT_FOUND");
  });

  it("refuses a metric the run does not have, and a run with no samples, with typed errors", async () => {
    const { root, ctx } = setup();
    const source = path.join(root, "x.folded");
    writeFileSync(source, "a;b 1\n");
    const { run_id } = await callService(importArtifact, ctx, { path: source });
    expect((await failure(callService(exportSpeedscope, ctx, { run_id, metric: "cpu_ns" }))).code).toBe("INVALID_ARGUMENTS");
    expect((await failure(callService(exportSpeedscope, ctx, { run_id: "run_nope" }))).code).toBe("RUN_NOT_FOUND");
  });
});
