import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorOf, totalsByStack } from "../../test/helpers/evidence-rows";
import { textHash } from "../io/text-table";
import { apportion, callgrindImporter } from "./callgrind";
import { importToMemory, type MemoryImport } from "./run";

// main calls func1 once and func2 three times; func1 calls func2 twice; func2 (another object) calls helper.
// Name compression, cob=/cfl=, relative (+N, -N, *) and hex positions, and a hex cost (0x0a = 10).
const DEMO = `# callgrind format
version: 1
creator: hand-written
pid: 42
cmd: ./demo --fast
positions: line
events: Ir Dr
summary: 870 72

ob=(1) /bin/demo
fl=(1) demo.c
fn=(1) main
16 20 2
cfn=(2) func1
calls=1 50
+1 400 34
cob=(2) /lib/libfast.so
cfl=(2) fast.c
cfn=(3) func2
calls=3 20
* 450 36

fn=(2)
51 100 10
cob=(2)
cfl=(2)
cfn=(3)
calls=2 20
+2 300 24

ob=(2)
fl=(2)
fn=(3)
20 700 40
+3 0x0a 10
-2 0
cob=(1)
cfl=(1)
cfn=(4) helper
calls=1 60
* 40 10

ob=(1)
fl=(1)
fn=(4)
0x3c 40 10
totals: 870 72
`;

/** metric → leaf function name → self cost. */
function selfByFunction(result: MemoryImport): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const [metric, stacks] of Object.entries(totalsByStack(result))) {
    const m = new Map<string, number>();
    for (const [stack, value] of Object.entries(stacks)) {
      const leaf = stack.split(";").pop()!;
      m.set(leaf, (m.get(leaf) ?? 0) + value);
    }
    out.set(metric, m);
  }
  return out;
}

const parseError = (input: string | Uint8Array) => parseErrorOf(callgrindImporter, input);

/** callgrind_annotate's own self cost table: function name → cost per event (its file:function rows summed by function). */
function annotateSelf(file: string, events: number): { totals: number[]; functions: Map<string, number[]> } {
  const text = execFileSync("callgrind_annotate", ["--inclusive=no", "--threshold=100", "--show-percs=no", "--auto=no", file], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 * 1024 * 1024 });
  const columns = (line: string): { values: number[]; rest: string } | null => {
    let rest = line;
    const values: number[] = [];
    for (let i = 0; i < events; i++) {
      const m = /^\s*([\d,]+|\.)(?=\s)/.exec(rest);
      if (!m) return null;
      values.push(m[1] === "." ? 0 : Number(m[1].replace(/,/g, "")));
      rest = rest.slice(m[0].length);
    }
    return { values, rest: rest.trim() };
  };
  let totals: number[] = [];
  const functions = new Map<string, number[]>();
  for (const line of text.split("\n")) {
    const row = columns(line);
    if (!row || row.rest === "") continue;
    if (row.rest === "PROGRAM TOTALS") {
      totals = row.values;
      continue;
    }
    const fileAndFunction = row.rest.replace(/\s\[[^\]]*\]$/, "");
    const name = fileAndFunction.slice(fileAndFunction.indexOf(":") + 1);
    const sum = functions.get(name) ?? new Array(events).fill(0);
    row.values.forEach((v, i) => (sum[i] += v));
    functions.set(name, sum);
  }
  return { totals, functions };
}

describe("callgrind importer", () => {
  it("keeps each function's self cost per event exactly, on stacks rebuilt from the call graph", async () => {
    const result = await importToMemory(callgrindImporter, DEMO, { chunkSize: 50 });
    expect(result.tables.metrics.map((m) => [m.name, m.unit, m.kind])).toEqual([
      ["Ir", "instructions", "counted"],
      ["Dr", "events", "counted"],
    ]);
    const self = selfByFunction(result);
    expect(Object.fromEntries(self.get("Ir")!)).toEqual({ main: 20, func1: 100, func2: 710, helper: 40 });
    expect(Object.fromEntries(self.get("Dr")!)).toEqual({ main: 2, func1: 10, func2: 50, helper: 10 });

    // func2 is entered with 450 of its 750 inclusive Ir from main and 300 via func1: a 60/40 split of its own and its callees' cost.
    const stacks = totalsByStack(result);
    expect(stacks.Ir).toEqual({
      main: 20,
      "main;func1": 100,
      "main;func2": 426,
      "main;func1;func2": 284,
      "main;func2;helper": 24,
      "main;func1;func2;helper": 16,
    });
    expect(stacks.Dr).toEqual({
      main: 2,
      "main;func1": 10,
      "main;func2": 30,
      "main;func1;func2": 20,
      "main;func2;helper": 6,
      "main;func1;func2;helper": 4,
    });
    expect(result.tables.samples.every((s) => s.time_ns === null)).toBe(true);
  });

  it("names frames by function, with the function's file and its object as module, and the process as track", async () => {
    const result = await importToMemory(callgrindImporter, DEMO);
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, [f.file, f.module, f.kind]]));
    expect(frames).toEqual({
      main: ["demo.c", "/bin/demo", "native"],
      func1: ["demo.c", "/bin/demo", "native"],
      func2: ["fast.c", "/lib/libfast.so", "native"],
      helper: ["demo.c", "/bin/demo", "native"],
    });
    expect(result.tables.tracks).toEqual([expect.objectContaining({ process_id: "42", process_name: "./demo --fast", kind: "process" })]);
    expect(result.summary.limitations.map((l) => l.code)).toEqual(["CALLGRIND_STACKS_FROM_CALL_GRAPH"]);
    expect(result.summary.metadata).toMatchObject({ "callgrind.totals": "870 72", "callgrind.creator": "hand-written" });
  });

  it("reads instr+line positions, inline file switches (fi=/fe=) and jump lines without counting them as cost", async () => {
    const text = `events: Ir
positions: instr line
fl=(1) a.c
fn=(1) outer
0x10 5 3
fi=(2) inline.h
+4 7 2
fe=(1)
+2 -3 1
jump=1 +4 *
* *
jcnd=1/2 -8 *
* *
+1 * 4
cfn=(2) inner
calls=2 0x40 9
* * 6
fn=(2)
0x40 9 6
`;
    const result = await importToMemory(callgrindImporter, text);
    expect(totalsByStack(result).Ir).toEqual({ outer: 10, "outer;inner": 6 });
  });

  it("folds recursion into the outermost call and still conserves every function's self cost", async () => {
    const text = `events: Ir
fl=f.c
fn=main
1 1
cfn=a
calls=1 1
1 111
fn=a
1 10
cfn=b
calls=3 1
1 101
fn=b
1 100
cfn=a
calls=2 1
1 1
cfn=b
calls=1 1
1 5
`;
    const result = await importToMemory(callgrindImporter, text);
    expect(totalsByStack(result).Ir).toEqual({ main: 1, "main;a": 10, "main;a;b": 100 });
  });

  it("keeps a call chain deeper than the depth bound within it: functions below are drawn at the bound, self costs exact, totals as counted by hand", async () => {
    // fn_0 → fn_1 → … → fn_2999, each with self cost 1 Ir; calls= lines carry the inclusive cost below.
    const n = 3000;
    const maxDepth = 100;
    const lines = ["events: Ir", "fl=(1) deep.c", "fn=(1) fn_0"];
    for (let i = 0; i < n; i++) {
      if (i > 0) lines.push(`fn=(${i + 1})`);
      lines.push(`${10 + i} 1`);
      if (i + 1 < n) lines.push(`cfn=(${i + 2}) fn_${i + 1}`, `calls=1 ${11 + i}`, `${10 + i} ${n - i - 1}`);
    }
    const result = await importToMemory(callgrindImporter, lines.join("\n") + "\n", { limits: { maxDepth } });
    const depths = result.tables.stacks.map((s) => s.depth as number);
    expect(Math.max(...depths)).toBe(maxDepth - 1);
    const frameId = new Map(result.tables.frames.map((f) => [String(f.name), f.frame_id]));
    const byFrame = new Map(result.tables.frame_totals.map((row) => [row.frame_id, row]));
    const totals = (i: number) => byFrame.get(frameId.get(`fn_${i}`)) as { self: number; total: number };
    // Down to fn_98 the chain is whole: each total is everything at or below it, n − i. From fn_99
    // (at the bound) on, each function is a leaf under fn_98 with only its own cost.
    for (let i = 0; i < n; i++) {
      expect(totals(i), `fn_${i}`).toEqual(expect.objectContaining({ self: 1, total: i <= maxDepth - 2 ? n - i : 1 }));
    }
    const limitation = result.summary.limitations.find((l) => l.code === "STACK_TRUNCATED");
    expect(limitation?.message).toContain(`(${n - maxDepth} function cost(s))`);
    expect(result.summary.limitations.map((l) => l.code)).not.toContain("CALLGRIND_RARE_PATHS");
  });

  it("keeps functions of one name in other files or objects apart, and merges calls repeated in later blocks of their caller", async () => {
    // work() in a.c and in b.c (two functions, one name); main's calls into a.c's work() come in two blocks of main.
    const text = `events: Ir
fl=a.c
fn=main
1 1
cfn=work
calls=1 1
1 50
fn=work
2 10
cfl=b.c
cfn=work
calls=3 1
2 90
fl=b.c
fn=work
3 90
ob=other.so
fn=work
4 7
ob=
fl=a.c
fn=main
5 2
cfn=work
calls=1 1
5 50
`;
    const result = await importToMemory(callgrindImporter, text, { chunkSize: 16 });
    const frames = new Map(result.tables.frames.map((f) => [f.frame_id, `${f.name}@${f.file ?? ""}@${f.module ?? ""}`]));
    const self: Record<string, number> = {};
    for (const row of result.tables.samples) {
      const stack = result.tables.stacks.find((s) => s.stack_id === row.stack_id)!;
      const path: string[] = [];
      for (let at: Record<string, unknown> | undefined = stack; at; at = result.tables.stacks.find((s) => s.stack_id === at!.parent_stack_id)) path.unshift(frames.get(at.frame_id as number)!);
      self[path.join(";")] = (self[path.join(";")] ?? 0) + (row.value as number);
    }
    // The calls from both blocks of main make one edge: a.c's work() sits under main only, b.c's under it; other.so's work() is a root.
    expect(self).toEqual({ "main@a.c@": 3, "main@a.c@;work@a.c@": 10, "main@a.c@;work@a.c@;work@b.c@": 90, "work@b.c@other.so": 7 });
    expect(result.tables.frames.filter((f) => f.name === "work")).toHaveLength(3);
  });

  it("reads compressed names as callgrind writes them: any text kept exactly, an id redefined, ids spelled apart, ids past the indexed range, an empty or ??? object as none", async () => {
    // (1) is redefined mid-file (as in concatenated parts): cfn=(1) after it is beta. (01) is
    // another id than (1); (20000000) is past the range of ids kept in a column.
    const text = `events: Ir
ob=(1) /srv/app
fl=(1) m\u00f6dule.c
fn=(1) alpha
1 1
cfn=(2) f\u00fc\u00dfe::\u6f22\u5b57()
calls=1 1
1 20
fn=(2)
2 20
fn=(01) zero-one
3 300
cfn=(20000000) far \ud83d\udd25
calls=1 1
3 4000
fn=(20000000)
4 4000
fn=(1) beta
5 50000
cfn=(1)
calls=1 1
5 600000
fn=(1)
6 600000
ob=???
fn=(3) gamma
7 7000000
ob=
fn=(3)
8 80000000
`;
    const result = await importToMemory(callgrindImporter, text, { chunkSize: 16 });
    expect(totalsByStack(result).Ir).toEqual({
      alpha: 1,
      "alpha;f\u00fc\u00dfe::\u6f22\u5b57()": 20,
      "zero-one": 300,
      "zero-one;far \ud83d\udd25": 4000,
      beta: 650000,
      gamma: 87000000,
    });
    // beta's call to (1) calls itself: folded into the outermost call, its cost beta's own.
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, [f.file, f.module]]));
    expect(frames).toEqual({
      alpha: ["m\u00f6dule.c", "/srv/app"],
      "f\u00fc\u00dfe::\u6f22\u5b57()": ["m\u00f6dule.c", "/srv/app"],
      "zero-one": ["m\u00f6dule.c", "/srv/app"],
      "far \ud83d\udd25": ["m\u00f6dule.c", "/srv/app"],
      beta: ["m\u00f6dule.c", "/srv/app"],
      gamma: ["m\u00f6dule.c", null],
    });
    expect((await parseError(text.replace("fn=(01) zero-one", "fn=(01)"))).reason).toBe("a compressed fn= name is used before it is defined");
  });

  it("keeps many distinct function names apart, names whose hashes collide among them, each self cost exact", async () => {
    const names: string[] = [];
    const byHash = new Map<number, string>();
    let collisions = 0;
    for (let i = 0; collisions < 4; i++) {
      const name = `fn_${i}`;
      const other = byHash.get(textHash(name));
      if (other !== undefined) {
        names.push(other, name);
        collisions++;
      } else byHash.set(textHash(name), name);
    }
    for (let i = 0; i < 20_000; i++) names.push(`ns${i % 13}::work_${i}(int)`);
    const lines = ["events: Ir", "fl=(1) a.c", "fn=(1) main", "1 1"];
    names.forEach((name, i) => lines.push(`cfn=(${i + 2}) ${name}`, "calls=1 1", `1 ${i + 1}`));
    names.forEach((_, i) => lines.push(`fn=(${i + 2})`, `2 ${i + 1}`));
    const result = await importToMemory(callgrindImporter, `${lines.join("\n")}\n`);
    const self = selfByFunction(result).get("Ir")!;
    expect(self.size).toBe(names.length + 1);
    expect(self.get("main")).toBe(1);
    names.forEach((name, i) => expect(self.get(name), name).toBe(i + 1));
    expect(result.tables.frames).toHaveLength(names.length + 1);
  });

  it("splits a total into integers proportional to weights that sum exactly", () => {
    expect(apportion(10, [1, 1, 1])).toEqual([3, 4, 3]);
    expect(apportion(7, [0.6, 0.4])).toEqual([4, 3]);
    expect(apportion(5, [0, 0])).toEqual([0, 0]);
    expect(apportion(1e12 + 1, [1 / 3, 1 / 3, 1 / 3]).reduce((a, b) => a + b)).toBe(1e12 + 1);
  });

  it("sniffs callgrind files by their first lines and name", () => {
    expect(callgrindImporter.sniff(new Uint8Array(), DEMO, null)).toBeGreaterThanOrEqual(0.9);
    expect(callgrindImporter.sniff(new Uint8Array(), "events: Ir\nfn=main\n0 1\n", "callgrind.out.1234")).toBeGreaterThanOrEqual(0.9);
    expect(callgrindImporter.sniff(new Uint8Array(), "main;work 3\n", null)).toBe(0);
  });

  it("shows mangled function names demangled, keeping the mangled name", async () => {
    const text = "events: Ir\nsummary: 30\nob=/srv/app\nfn=_Z4mainv\n1 10\ncfn=_Z5deltav\ncalls=1 2\n1 20\nfn=_Z5deltav\n2 20\n";
    const result = await importToMemory(callgrindImporter, text);
    expect(totalsByStack(result).Ir).toEqual({ "main()": 10, "main();delta()": 20 });
    expect(result.tables.frames.map((f) => [f.name, f.mangled_name, f.module])).toEqual([
      ["main()", "_Z4mainv", "/srv/app"],
      ["delta()", "_Z5deltav", "/srv/app"],
    ]);
  });

  it("demangles what valgrind --demangle=no leaves mangled of a real C++ program as c++filt does", async (ctx) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "emberscope-callgrind-cxx-"));
    const program = path.join(dir, "sample");
    const out = path.join(dir, "callgrind.out.cxx");
    try {
      execFileSync("g++", ["-O0", "-g", "-std=c++17", "-o", program, new URL("../../test/fixtures/symbols/cxx-sample.cpp", import.meta.url).pathname], { stdio: "ignore", timeout: 120_000 });
      execFileSync("valgrind", ["--tool=callgrind", "--demangle=no", `--callgrind-out-file=${out}`, program], { stdio: "ignore", timeout: 120_000 });
    } catch {
      return ctx.skip(true, "g++ or valgrind --tool=callgrind is not usable on this machine");
    }
    const result = await importToMemory(callgrindImporter, readFileSync(out, "utf8"));
    const mangled = result.tables.frames.filter((f) => f.mangled_name !== null);
    expect(mangled.length).toBeGreaterThan(20);
    const cxxfilt = execFileSync("c++filt", { input: mangled.map((f) => f.mangled_name).join("\n"), encoding: "utf8" }).trim().split("\n");
    expect(mangled.map((f) => f.name)).toEqual(cxxfilt);
    expect(result.tables.frames.find((f) => f.mangled_name === "_Z5deltav")?.name).toBe("delta()");
  });

  describe("a real valgrind run", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "emberscope-callgrind-"));
    const program = path.join(dir, "calls");

    function run(out: string, ...flags: string[]): boolean {
      try {
        if (!readFileSafe(program)) {
          writeFileSync(`${program}.c`, "static volatile long sink;\nstatic void leaf(int n){for(int i=0;i<n;i++)sink+=i;}\nstatic void mid(int n){leaf(n);leaf(n/2);}\nint main(void){for(int i=0;i<50;i++)mid(i*10);return 0;}\n");
          execFileSync("cc", ["-O0", "-g", "-o", program, `${program}.c`], { stdio: "ignore" });
        }
        execFileSync("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, ...flags, program], { stdio: "ignore", timeout: 120_000 });
        return true;
      } catch {
        return false;
      }
    }
    const readFileSafe = (file: string) => {
      try {
        return readFileSync(file);
      } catch {
        return null;
      }
    };

    it("matches callgrind_annotate's per-function self cost and PROGRAM TOTALS", async (ctx) => {
      const out = path.join(dir, "callgrind.out.plain");
      if (!run(out)) return ctx.skip(true, "valgrind --tool=callgrind or cc is not usable on this machine");
      const text = readFileSync(out, "utf8");
      const expected = annotateSelf(out, 1);
      expect(expected.functions.size).toBeGreaterThan(5);
      const fileTotals = /^totals:\s*(\d+)/m.exec(text)![1];

      const result = await importToMemory(callgrindImporter, text, { fileName: "callgrind.out.plain" });
      const self = selfByFunction(result).get("Ir")!;
      const total = [...self.values()].reduce((a, b) => a + b, 0);
      expect(total).toBe(expected.totals[0]);
      expect(total).toBe(Number(fileTotals));
      for (const [name, [ir]] of expected.functions) expect(self.get(name) ?? 0, name).toBe(ir);
      expect([...expected.functions.values()].reduce((n, [ir]) => n + ir, 0)).toBe(total);

      // The flame graph: leaf's cost sits under main → mid → leaf.
      const stacks = totalsByStack(result).Ir;
      const leafStacks = Object.keys(stacks).filter((s) => s.endsWith(";leaf"));
      expect(leafStacks.length).toBeGreaterThan(0);
      expect(leafStacks.every((s) => /(^|;)main;mid;leaf$/.test(s))).toBe(true);
      expect(result.tables.frames.find((f) => f.name === "leaf")).toMatchObject({ module: program });
    });

    it("matches callgrind_annotate per event with cache simulation, instruction positions and jumps", async (ctx) => {
      const out = path.join(dir, "callgrind.out.cache");
      if (!run(out, "--cache-sim=yes", "--dump-instr=yes", "--collect-jumps=yes")) return ctx.skip(true, "valgrind --tool=callgrind or cc is not usable on this machine");
      const text = readFileSync(out, "utf8");
      const events = /^events:\s*(.*)$/m.exec(text)![1].trim().split(/\s+/);
      const fileTotals = /^totals:\s*(.*)$/m.exec(text)![1].trim().split(/\s+/).map(Number);
      const expected = annotateSelf(out, events.length);
      expect(events.length).toBeGreaterThan(1);
      expect(expected.functions.size).toBeGreaterThan(5);

      const result = await importToMemory(callgrindImporter, text);
      const self = selfByFunction(result);
      events.forEach((event, e) => {
        const mine = self.get(event) ?? new Map<string, number>();
        expect([...mine.values()].reduce((a, b) => a + b, 0), event).toBe(fileTotals[e]);
        for (const [name, values] of expected.functions) expect(mine.get(name) ?? 0, `${event} ${name}`).toBe(values[e]);
      });
    });
  });

  describe("malformed input", () => {
    it("rejects a file cut before its end (costs short of summary:, no totals:)", async () => {
      const cut = DEMO.slice(0, DEMO.indexOf("\nfn=(4)") + 1);
      const error = await parseError(cut);
      expect(error.reason).toMatch(/truncated/);
      expect(error.at.line).toBeDefined();
    });

    it("rejects a file cut right after calls=", async () => {
      const cut = DEMO.slice(0, DEMO.indexOf("calls=1 60") + "calls=1 60\n".length);
      const error = await parseError(cut);
      expect(error.at.line).toBe(cut.split("\n").length - 1);
    });

    it("rejects corrupted lines with their line number", async () => {
      const corrupted = DEMO.replace("51 100 10", "51 1#0 1\u0001");
      const error = await parseError(corrupted);
      expect(error.at.line).toBe(DEMO.slice(0, DEMO.indexOf("51 100 10")).split("\n").length);
      const undefinedName = await parseError(DEMO.replace("fn=(2)\n", "fn=(9)\n"));
      expect(undefinedName.reason).toBe("a compressed fn= name is used before it is defined");
      expect(undefinedName.at.line).toBe(DEMO.slice(0, DEMO.indexOf("fn=(2)\n")).split("\n").length);
    });

    it("rejects an empty file", async () => {
      const error = await parseError("");
      expect(error.at.line).toBe(1);
      expect((await parseError("# callgrind format\n\n")).at.line).toBe(1);
    });
  });
});
