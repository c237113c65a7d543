import { spawnSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli";
import { tempProject } from "../helpers/project";

/** A program whose CPU time goes mostly to `hotFunction` (or `otherHotFunction` when asked). */
const PROGRAM = `
function hotFunction(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
function otherHotFunction(n) { let s = ""; for (let i = 0; i < n / 50; i++) s = (s + i).slice(-100); return s.length; }
function coldFunction(n) { let x = 0; for (let i = 0; i < n / 20; i++) x += i; return x; }
function main() {
  const useOther = process.argv[2] === "other";
  const end = Date.now() + 700;
  let r = 0;
  while (Date.now() < end) { r += useOther ? otherHotFunction(2e5) : hotFunction(2e6); r += coldFunction(2e5); }
  console.log(r > 0);
}
main();
`;

function captureCpuProfile(dir: string, label: string, arg = ""): string {
  const out = path.join(dir, `prof-${label}`);
  const program = path.join(dir, "program.js");
  writeFileSync(program, PROGRAM);
  const result = spawnSync(process.execPath, ["--cpu-prof", "--cpu-prof-dir", out, program, arg], { encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  const [file] = readdirSync(out).filter((f) => f.endsWith(".cpuprofile"));
  return path.join(out, file);
}

describe("evidence through the CLI", () => {
  it("imports a real node --cpu-prof capture whose hotspots name the hot function first", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const profile = captureCpuProfile(cwd, "a");
    const imported = await runCli(["import", profile, "--json"], { cwd });
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    expect(imported.json).toMatchObject({ format: "cpuprofile", limitations: expect.any(Array) });
    const runId = imported.json.run_id;

    const hotspots = await runCli(["analyze", "hotspots", runId, "--limit", "5", "--json"], { cwd });
    expect(hotspots.json.rows[0].name).toBe("hotFunction");
    expect(hotspots.json.metric).toBe("wall_ns");
    expect(hotspots.json.rows[0].self_pct).toBeGreaterThan(40);
    expect(hotspots.json.commit_id).toBe(imported.json.commit_id);

    const page2 = await runCli(["analyze", "hotspots", runId, "--limit", "5", "--cursor", hotspots.json.next_cursor, "--json"], { cwd });
    expect(page2.code).toBe(0);
    expect(page2.json.rows.map((r: { frame_key: string }) => r.frame_key)).not.toContain(hotspots.json.rows[0].frame_key);
    const stale = await runCli(["analyze", "hotspots", runId, "--metric", "samples", "--cursor", hotspots.json.next_cursor, "--json"], { cwd });
    expect(stale.json).toMatchObject({ code: "STALE_CURSOR", recovery: { operation: "evidence.hotspots" } });

    const callers = await runCli(["stacks", "callers", runId, hotspots.json.rows[0].frame_key, "--json"], { cwd });
    expect(callers.json.rows[0].name).toBe("main");
    const mainKey = callers.json.rows[0].frame_key;
    const callees = await runCli(["stacks", "callees", runId, mainKey, "--json"], { cwd });
    expect(callees.json.rows[0].name).toBe("hotFunction");
    const examples = await runCli(["stacks", "examples", runId, hotspots.json.rows[0].frame_key, "--json"], { cwd });
    expect(examples.json.rows[0].frames.slice(-2)).toEqual(["main", "hotFunction"]);

    const summary = await runCli(["analyze", "summary", runId, "--json"], { cwd });
    expect(summary.json.metrics.map((m: { name: string }) => m.name).sort()).toEqual(["samples", "wall_ns"]);
    expect(summary.json.top_frames[0].name).toBe("hotFunction");
    const human = await runCli(["analyze", "hotspots", runId, "--limit", "3"], { cwd });
    expect(human.stdout).toMatch(/hotFunction/);
    expect(human.stdout).toMatch(/ms/);
  }, 60_000);

  it("stacks and hotspots take the run page's transforms (--transforms, its tf= form): merge run, by a hand fold", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    // main;run;malloc 20 · main;parse;malloc 10 · main;run 7 · main 3: merging run charges its 7 to main and makes main malloc's caller.
    writeFileSync(path.join(cwd, "small.folded"), "main 3\nmain;run 7\nmain;run;malloc 20\nmain;parse;malloc 10\n");
    const runId = (await runCli(["import", "small.folded", "--json"], { cwd })).json.run_id;
    const keys = Object.fromEntries((await runCli(["analyze", "hotspots", runId, "--json"], { cwd })).json.rows.map((r: { name: string; frame_key: string }) => [r.name, r.frame_key]));
    const tf = `mf-${keys.run}`;
    const rows = (r: { json: { rows: { name: string; value: number }[] } }) => r.json.rows.map((x) => `${x.name} ${x.value}`);
    expect(rows(await runCli(["stacks", "callers", runId, keys.malloc, "--json"], { cwd }))).toEqual(["run 20", "parse 10"]);
    expect(rows(await runCli(["stacks", "callers", runId, keys.malloc, "--transforms", tf, "--json"], { cwd }))).toEqual(["main 20", "parse 10"]);
    expect(rows(await runCli(["stacks", "callees", runId, keys.main, "--transforms", tf, "--json"], { cwd }))).toEqual(["malloc 20", "parse 10"]);
    const examples = await runCli(["stacks", "examples", runId, keys.malloc, "--transforms", tf, "--json"], { cwd });
    expect(examples.json.rows).toEqual([{ value: 20, frames: ["main", "malloc"] }, { value: 10, frames: ["main", "parse", "malloc"] }]);
    const hot = await runCli(["analyze", "hotspots", runId, "--transforms", tf, "--json"], { cwd });
    expect(hot.json.rows.map((r: { name: string; self: number }) => `${r.name} ${r.self}`)).toEqual(["malloc 30", "main 10", "parse 0"]);
    const human = await runCli(["stacks", "callers", runId, keys.malloc, "--transforms", tf], { cwd });
    expect(human.stdout).toMatch(/main/);
    // A part that does not parse is refused, not left out.
    const bad = await runCli(["stacks", "callers", runId, keys.malloc, "--transforms", `${tf}~mf-nope`, "--json"], { cwd });
    expect(bad.code).not.toBe(0);
    expect(bad.json).toMatchObject({ code: "INVALID_ARGUMENTS" });
  }, 60_000);

  it("compares two captures: the newly hot function grew and the old one shrank", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const base = (await runCli(["import", captureCpuProfile(cwd, "base"), "--json"], { cwd })).json.run_id;
    const candidate = (await runCli(["import", captureCpuProfile(cwd, "cand", "other"), "--json"], { cwd })).json.run_id;
    const compare = await runCli(["compare", base, candidate, "--metric", "samples", "--collection", "all", "--json"], { cwd });
    expect(compare.code, compare.stderr).toBe(0);
    const byName = Object.fromEntries(compare.json.rows.map((r: { name: string }) => [r.name, r]));
    expect(byName.otherHotFunction).toMatchObject({ status: "added" });
    expect(byName.otherHotFunction.delta).toBeGreaterThan(0);
    expect(byName.hotFunction).toMatchObject({ status: "removed" });
    expect(byName.hotFunction.delta).toBeLessThan(0);
  }, 60_000);

  it("answers a trace window over an imported Chrome trace", async () => {
    const cwd = tempProject();
    await runCli(["init"], { cwd });
    const trace = path.join(cwd, "trace.json");
    writeFileSync(
      trace,
      JSON.stringify({
        traceEvents: [
          { name: "thread_name", ph: "M", pid: 1, tid: 7, args: { name: "worker" } },
          { name: "request", ph: "X", ts: 1000, dur: 500, pid: 1, tid: 7 },
          { name: "query", ph: "X", ts: 1100, dur: 100, pid: 1, tid: 7 },
          { name: "render", ph: "X", ts: 3000, dur: 50, pid: 1, tid: 7 },
        ],
      }),
    );
    const imported = await runCli(["import", trace, "--json"], { cwd });
    expect(imported.json).toMatchObject({ format: "chrome-trace", rows: { spans: 3 } });
    const window = await runCli(["trace", "window", imported.json.run_id, "--start", "0", "--end", "1000000", "--json"], { cwd });
    expect(window.json.spans.map((s: { name: string }) => s.name)).toEqual(["request", "query"]);
    expect(window.json.tracks[0]).toMatchObject({ thread_name: "worker", spans: 3 });
    const bad = await runCli(["trace", "window", imported.json.run_id, "--start", "5", "--end", "1", "--json"], { cwd });
    expect(bad.json).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "--end" } });
    const missing = await runCli(["analyze", "summary", "run_nope", "--json"], { cwd });
    expect(missing.json).toMatchObject({ code: "RUN_NOT_FOUND" });
  }, 60_000);
});
