import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fixtureWriter, parseErrorOf, peerFixture, totalsByStack } from "../../test/helpers/evidence-rows";
import { detectFormat } from "./index";
import { foldedFrameHash, foldedImporter, sameBytes } from "./folded";
import { splittableBytes } from "./ranges";
import { importToMemory } from "./run";

const fixture = fixtureWriter("emberscope-folded-");
const expectParseError = (input: Uint8Array) => parseErrorOf(foldedImporter, input);

function utf16(text: string, order: "le" | "be"): Uint8Array {
  const le = Buffer.from(text, "utf16le");
  if (order === "be") le.swap16();
  return new Uint8Array(Buffer.concat([Buffer.from(order === "le" ? [0xff, 0xfe] : [0xfe, 0xff]), le]));
}

const hashOf = (name: string) => foldedFrameHash(new DataView(new TextEncoder().encode(name).buffer), 0, name.length);

/** Two different frame names of the same length whose hashes are equal (found by enumeration). */
function collidingFrameNames(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const name = `f${i.toString(36).padStart(6, "0")}`;
    const hash = hashOf(name);
    const other = seen.get(hash);
    if (other !== undefined) return [other, name];
    seen.set(hash, name);
  }
}

/** `count` lines of random stacks over `frames` names, with one or two counts per line. */
function randomFolded(seed: number, count: number, frames: number, counts: 1 | 2): string[] {
  let state = seed;
  const next = (n: number) => (state = (state * 48271) % 2147483647) % n;
  return Array.from({ length: count }, () => {
    const stack = Array.from({ length: 1 + next(15) }, (_, depth) => `mod${next(3)}::fn_${next(depth < 4 ? 3 : frames)}`).join(";");
    return counts === 1 ? `${stack} ${1 + next(50)}` : `${stack} ${next(50)} ${next(50)}`;
  });
}

const SIMPLE = ["main;parse;lex 3", "main;parse 2", "main;render_[k] 5", "libc.so.6`malloc;jitted_fn_[j] 1", "main;Foo::bar(int, char) const 7", ""].join("\n");

describe("folded stacks importer", () => {
  it("tells thousands of distinct frames apart, names that differ in one byte or share a prefix included", async () => {
    const lines: string[] = [];
    const expected: Record<string, number> = {};
    for (let i = 0; i < 3000; i++) {
      // fn_12 and fn_120 share a prefix; fn_1x and fn_1y differ in their last byte only.
      const stack = `main;fn_${i};fn_${i % 7}${i % 2 ? "x" : "y"}`;
      lines.push(`${stack} ${1 + (i % 5)}`);
      expected[stack] = 1 + (i % 5);
    }
    const result = await importToMemory(foldedImporter, fixture("many.folded", lines.join("\n")));
    expect(totalsByStack(result)).toEqual({ samples: expected });
    expect(result.tables.frames).toHaveLength(1 + 3000 + 14);
  });

  it("tells apart two frame names whose hashes collide, wherever they meet in a stack", async () => {
    const [a, b] = collidingFrameNames();
    expect(a).not.toBe(b);
    expect(hashOf(a)).toBe(hashOf(b));
    const expected = { [`main;${a}`]: 1, [`main;${b}`]: 2, [`${a};${b}`]: 3, [`${b};${a}`]: 4, [`main;${a};${b}`]: 5, [`main;${b};${a}`]: 6, [`${a};${a}`]: 7 };
    const text = Object.entries(expected).map(([stack, count]) => `${stack} ${count}`).join("\n");
    const result = await importToMemory(foldedImporter, fixture("collide.folded", text));
    expect(totalsByStack(result)).toEqual({ samples: expected });
    expect(result.tables.frames.map((f) => f.name).sort()).toEqual([a, b, "main"].sort());
  });

  it("confirms a frame's bytes exactly: one differing byte anywhere, at any alignment, makes them different", () => {
    const wrong: string[] = [];
    for (let length = 0; length <= 13; length++) {
      for (const [at, start] of [[0, 0], [1, 3], [3, 6], [5, 2]]) {
        const a = new Uint8Array(32).map((_, i) => 97 + ((i - at) % 26));
        const b = new Uint8Array(32).map((_, i) => 97 + ((i - start) % 26));
        const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        if (!sameBytes(view(a), at, view(b), start, length)) wrong.push(`equal ${length} at ${at}/${start}`);
        for (let differ = 0; differ < length; differ++) {
          const changed = b.slice();
          changed[start + differ] ^= 0x20;
          if (sameBytes(view(a), at, view(changed), start, length)) wrong.push(`byte ${differ} of ${length} at ${at}/${start}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("splits frames at every `;` whatever its place in a four-byte step, UTF-8 and empty segments included", async () => {
    const names = ["a", "bé", "c;", "dddd", "ééé", "f\u00ff5", "ggggggg", "h€€h", "iiiiiiiii"].map((n) => n.replace(";", ""));
    const expected: Record<string, number> = {};
    const lines: string[] = [];
    for (let i = 0; i < names.length; i++) {
      for (let j = 0; j < names.length; j++) {
        const frames = [names[i], names[j], names[(i + j) % names.length]];
        // An empty segment (`a;;b`) at a varying place is skipped.
        const written = (i + j) % 3 === 0 ? `${frames[0]};;${frames[1]};${frames[2]}` : frames.join(";");
        lines.push(`${written} ${i * 10 + j + 1}`);
        const stack = frames.join(";");
        expected[stack] = (expected[stack] ?? 0) + i * 10 + j + 1;
      }
    }
    const result = await importToMemory(foldedImporter, fixture("offsets.folded", lines.join("\n")));
    expect(totalsByStack(result)).toEqual({ samples: expected });
    expect(result.tables.frames.map((f) => f.name).sort()).toEqual([...names].sort());
  });

  it("builds the same stacks and totals from a file whether its lines are sorted or not", async () => {
    const lines = randomFolded(11, 4000, 60, 1);
    const unsorted = await importToMemory(foldedImporter, fixture("unsorted.folded", lines.join("\n")), { chunkSize: 1000 });
    const sorted = await importToMemory(foldedImporter, fixture("sorted.folded", [...lines].sort().join("\n")), { chunkSize: 1000 });
    expect(totalsByStack(unsorted)).toEqual(totalsByStack(sorted));
    const expected: Record<string, number> = {};
    for (const line of lines) {
      const stack = line.slice(0, line.lastIndexOf(" "));
      expected[stack] = (expected[stack] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    expect(totalsByStack(unsorted)).toEqual({ samples: expected });
    for (const result of [unsorted, sorted]) {
      // One node per distinct prefix: the tree has no duplicate (parent, frame) pair.
      const prefixes = new Set(lines.flatMap((line) => line.slice(0, line.lastIndexOf(" ")).split(";").map((_, i, frames) => frames.slice(0, i + 1).join(";"))));
      expect(result.tables.stacks).toHaveLength(prefixes.size);
      expect(result.tables.stack_totals).toHaveLength(prefixes.size);
    }
  });

  it("reads a differential file's two counts the same whether its lines are sorted or not", async () => {
    const lines = randomFolded(12, 2000, 40, 2);
    const unsorted = await importToMemory(foldedImporter, fixture("diff-unsorted.folded", lines.join("\n")), { chunkSize: 777 });
    const sorted = await importToMemory(foldedImporter, fixture("diff-sorted.folded", [...lines].sort().join("\n")));
    const expected: Record<string, Record<string, number>> = { samples: {}, samples_base: {} };
    for (const line of lines) {
      const [before, after] = line.split(" ").slice(-2).map(Number);
      const stack = line.split(" ").slice(0, -2).join(" ");
      expected.samples[stack] = (expected.samples[stack] ?? 0) + after;
      expected.samples_base[stack] = (expected.samples_base[stack] ?? 0) + before;
    }
    expect(totalsByStack(unsorted)).toEqual(expected);
    expect(totalsByStack(sorted)).toEqual(expected);
  });

  it("turns each line into one aggregate sample of its stack, frames named as written", async () => {
    const result = await importToMemory(foldedImporter, fixture("simple.folded", SIMPLE));
    expect(totalsByStack(result)).toEqual({
      samples: {
        "main;parse;lex": 3,
        "main;parse": 2,
        "main;render": 5,
        "malloc;jitted_fn": 1,
        "main;Foo::bar(int, char) const": 7,
      },
    });
    expect(result.tables.samples.every((s) => s.time_ns === null && s.track_id === null)).toBe(true);
    expect(result.tables.metrics).toEqual([{ metric_id: 0, name: "samples", unit: "count", kind: "sampled", total: 18, sample_count: 5, first_ns: null, last_ns: null }]);
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, { kind: f.kind, module: f.module }]));
    expect(frames).toEqual({
      main: { kind: "other", module: null },
      parse: { kind: "other", module: null },
      lex: { kind: "other", module: null },
      render: { kind: "kernel", module: null },
      malloc: { kind: "other", module: "libc.so.6" },
      jitted_fn: { kind: "js", module: null },
      "Foo::bar(int, char) const": { kind: "other", module: null },
    });
    // "main" is one frame and one root node shared by four stacks.
    expect(result.tables.stacks.filter((s) => s.parent_stack_id === null)).toHaveLength(2);
    expect(result.summary.limitations).toEqual([]);
  });

  it("counts a recursive frame once per line in its total, also under another spelling of it, in one part or two", async () => {
    // `f_[i]` and `f_[w]` describe frame `f` (kind other) again; `f_[k]` is another frame (kernel).
    const spellings = ["a", "b", "c", "a_[i]", "b_[w]", "c_[k]", "d"];
    const frameOf = (text: string) => (/_\[[iw]\]$/.test(text) ? text.slice(0, -4) : text.endsWith("_[k]") ? `${text.slice(0, -4)} (kernel)` : text);
    let state = 7;
    const next = (n: number) => (state = (state * 48271) % 2147483647) % n;
    const lines = ["main;a;b;a_[i];c 5", "main;a_[i];a 3", "main;c;c_[k] 2", "main;b;b_[w];b;b 4"];
    for (let i = 0; i < 3000; i++) lines.push(`main;${Array.from({ length: 1 + next(12) }, () => spellings[next(spellings.length)]).join(";")} ${1 + next(9)}`);
    const expected = new Map<string, number>();
    for (const line of lines) {
      const [stack, count] = line.split(" ");
      for (const frame of new Set(stack.split(";").map(frameOf))) expected.set(frame, (expected.get(frame) ?? 0) + Number(count));
    }
    const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
    const totalsOf = (result: Awaited<ReturnType<typeof importToMemory>>) => {
      const names = new Map(result.tables.frames.map((f) => [f.frame_id, f.kind === "kernel" ? `${String(f.name)} (kernel)` : String(f.name)]));
      return new Map(result.tables.frame_totals.map((t) => [names.get(t.frame_id)!, t.total]));
    };
    expect(totalsOf(await importToMemory(foldedImporter, bytes))).toEqual(expected);
    for (const splitNear of [bytes.length >> 3, bytes.length >> 1]) {
      expect(totalsOf(await importToMemory(foldedImporter, bytes, { split: splittableBytes(bytes, { splitNear }) }))).toEqual(expected);
    }
  });

  it("shows mangled C++ and Rust symbols demangled, as native frames keeping the mangled name", async () => {
    const text = "main;_ZN3geo5Point6originEv;_Z5deltav 3\nmain;_RNvCseg5vz0rOR1E_6sample5areas 2\nmain;_Zqq 1\n";
    const result = await importToMemory(foldedImporter, fixture("native.folded", text));
    expect(totalsByStack(result).samples).toEqual({ "main;geo::Point::origin();delta()": 3, "main;sample::areas": 2, "main;_Zqq": 1 });
    const frames = Object.fromEntries(result.tables.frames.map((f) => [f.name, [f.kind, f.mangled_name]]));
    expect(frames).toEqual({ main: ["other", null], "geo::Point::origin()": ["native", "_ZN3geo5Point6originEv"], "delta()": ["native", "_Z5deltav"], "sample::areas": ["native", "_RNvCseg5vz0rOR1E_6sample5areas"], _Zqq: ["other", null] });
  });

  it("reads py-spy frames as python frames with file and line", async () => {
    const result = await importToMemory(foldedImporter, fixture("pyspy.folded", "<module> (app.py:10);work (lib/util.py:42) 9\n"));
    expect(result.tables.frames.map((f) => [f.name, f.file, f.line, f.kind])).toEqual([
      ["<module>", "app.py", 10, "python"],
      ["work", "lib/util.py", 42, "python"],
    ]);
  });

  it("keeps every count: the sample total equals the sum of the file's last column, across tiny chunks", async () => {
    const lines: string[] = [];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 3000; i++) {
      const depth = 1 + (next() % 12);
      const frames = Array.from({ length: depth }, () => `fn_${next() % 40} é v${next() % 3}`);
      lines.push(`${frames.join(";")} ${next() % 1000}`);
    }
    const text = lines.join("\n") + "\n";
    const expectedTotal = text
      .split("\n")
      .filter(Boolean)
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    const expectedStacks = new Set(lines.map((l) => l.slice(0, l.lastIndexOf(" ")))).size;
    const result = await importToMemory(foldedImporter, fixture("many.folded", text), { chunkSize: 7 });
    const total = result.tables.samples.reduce((sum, s) => sum + (s.value as number), 0);
    expect(total).toBe(expectedTotal);
    expect(result.tables.samples).toHaveLength(3000);
    expect(Object.keys(totalsByStack(result).samples)).toHaveLength(expectedStacks);
  });

  it("reads CRLF, a UTF-8 BOM and UTF-16 LE/BE with BOM to the same stacks", async () => {
    const expected = totalsByStack(await importToMemory(foldedImporter, fixture("plain.folded", SIMPLE)));
    const crlf = SIMPLE.replace(/\n/g, "\r\n");
    const variants: [string, Uint8Array][] = [
      ["crlf.folded", fixture("crlf.folded", crlf)],
      ["bom.folded", fixture("bom.folded", new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(crlf)]))],
      ["utf16le.folded", fixture("utf16le.folded", utf16(crlf, "le"))],
      ["utf16be.folded", fixture("utf16be.folded", utf16(SIMPLE, "be"))],
    ];
    for (const [name, bytes] of variants) {
      const result = await importToMemory(foldedImporter, bytes, { chunkSize: 5 });
      expect(totalsByStack(result), name).toEqual(expected);
      expect(result.summary.limitations, name).toEqual([]);
    }
  });

  it("skips invalid lines and reports them as one limitation with their count and first line numbers", async () => {
    const text = ["a;b 1", "a;c", "a;d -4", "a;e 2.5", " 6", "", "a;f 2", ";; 3", "a;g 1 x"].join("\n");
    const result = await importToMemory(foldedImporter, fixture("invalid.folded", text));
    expect(totalsByStack(result)).toEqual({ samples: { "a;b": 1, "a;f": 2 } });
    expect(result.summary.limitations).toHaveLength(1);
    const [limitation] = result.summary.limitations;
    expect(limitation.code).toBe("FOLDED_INVALID_LINES");
    expect(limitation.count).toBe(6);
    expect(limitation.message).toContain("line 2 (no count)");
    expect(limitation.message).toContain("line 3 (a negative count)");
    expect(limitation.message).toContain("line 4 (a non-integer count)");
    expect(limitation.message).toContain("line 5 (an empty stack)");
    expect(limitation.message).toContain("line 8 (an empty stack)");
  });

  it("reads difffolded.pl output as samples (second count, what flamegraph.pl draws) and samples_base (first count)", async () => {
    const text = "main;old 10 0\nmain;same 5 5\nmain;new 0 7\n";
    const result = await importToMemory(foldedImporter, fixture("diff.folded", text));
    expect(totalsByStack(result)).toEqual({
      samples: { "main;old": 0, "main;same": 5, "main;new": 7 },
      samples_base: { "main;old": 10, "main;same": 5, "main;new": 0 },
    });
    expect(result.summary.metadata.differential).toBe("true");
  });

  it("cuts stacks deeper than the depth bound and says so", async () => {
    const result = await importToMemory(foldedImporter, fixture("deep.folded", "a;b;c;d;e 4\na;b;x 1\n"), { limits: { maxDepth: 3 } });
    expect(totalsByStack(result)).toEqual({ samples: { "a;b;c": 4, "a;b;x": 1 } });
    expect(result.summary.limitations.map((l) => [l.code, l.count])).toEqual([["STACK_TRUNCATED", 1]]);
  });

  it("reads the folded output of perf's own stackcollapse script, keeping perf's sample total", async (context) => {
    // `perf script report` reads ./perf.data whatever -i says, so perf runs in its own folder.
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-folded-perf-"));
    const data = path.join(dir, "perf.data");
    let folded: string;
    let reported: number;
    try {
      execFileSync("perf", ["record", "-q", "-o", data, "-F", "999", "-g", "-e", "cpu-clock", "--", "sh", "-c", "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"], { stdio: "ignore", timeout: 60_000 });
      folded = execFileSync("perf", ["script", "report", "stackcollapse"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 60_000 });
      // perf's own count, independent of the folded text.
      const report = execFileSync("perf", ["report", "-i", data, "--stdio"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
      reported = Number(/# Samples: (\d+)/.exec(report)?.[1]);
    } catch {
      context.skip("perf cannot record here (not installed or perf_event_paranoid forbids it)");
      return;
    }
    expect(folded.trim().length).toBeGreaterThan(0);
    const result = await importToMemory(foldedImporter, fixture("perf.folded", folded));
    const total = result.tables.samples.reduce((sum, s) => sum + (s.value as number), 0);
    expect(total).toBe(reported);
    expect(result.tables.samples).toHaveLength(folded.trim().split("\n").length);
    expect(Object.keys(totalsByStack(result).samples).every((stack) => stack.startsWith("sh"))).toBe(true);
  }, 120_000);

  it("throws EvidenceParseError on an empty file", async () => {
    const error = await expectParseError(fixture("empty.folded", ""));
    expect(error.reason).toBe("empty input");
  });

  it("throws EvidenceParseError on a file truncated inside its first line", async () => {
    const error = await expectParseError(fixture("truncated.folded", SIMPLE.slice(0, 9)));
    expect(error.at.line).toBe(1);
  });

  it("keeps the whole lines of a file truncated mid-way and reports the cut line", async () => {
    const result = await importToMemory(foldedImporter, fixture("cut.folded", SIMPLE.slice(0, SIMPLE.indexOf("render") + 3)));
    expect(totalsByStack(result)).toEqual({ samples: { "main;parse;lex": 3, "main;parse": 2 } });
    expect(result.summary.limitations[0].message).toContain("line 3 (no count)");
  });

  it("throws EvidenceParseError on a corrupted (binary) file", async () => {
    const bytes = new Uint8Array(4096);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) & 0xff;
    const error = await expectParseError(fixture("corrupt.folded", bytes));
    expect(error.at.line).toBeGreaterThan(0);
  });

  it("recognises a real folded file with comment lines and a bad line, skips the comments and counts the bad line, quoting none of it", async () => {
    const bytes = peerFixture("stackcollapse/simple-with-invalids.txt");
    const text = new TextDecoder().decode(bytes);
    // The file's own account: lines `stack COUNT`; comments start with # or //; the rest are bad.
    const lines = text.split("\n").map((line, i) => ({ line, no: i + 1 })).filter(({ line }) => line.trim() !== "");
    const kind = (line: string) => (/^\s*(#|\/\/)/.test(line) ? "comment" : /^\S.*\s\d+$/.test(line) ? "stack" : "bad");
    const [comments, stacks, bad] = (["comment", "stack", "bad"] as const).map((k) => lines.filter(({ line }) => kind(line) === k));
    expect([comments.length, stacks.length, bad.length]).toEqual([2, 5, 1]);
    const expected: Record<string, number> = {};
    for (const { line } of stacks) {
      const [, stack, count] = /^(.*)\s(\d+)$/.exec(line)!;
      expected[stack] = (expected[stack] ?? 0) + Number(count);
    }

    expect(detectFormat(bytes, text, "simple-with-invalids.txt")?.id).toBe("folded");
    expect(detectFormat(bytes, text, null)?.id).toBe("folded");
    const result = await importToMemory(foldedImporter, bytes, { fileName: "simple-with-invalids.txt" });
    expect(totalsByStack(result)).toEqual({ samples: expected });
    expect(result.summary.limitations).toEqual([{ code: "FOLDED_INVALID_LINES", count: bad.length, message: expect.stringContaining(`line ${bad[0].no} (no count)`) }]);
    // The bad line is told by its number, never by its text.
    expect(result.summary.limitations[0].message).not.toContain(bad[0].line);
  });

  it("sniffs folded text, but not JSON or garbage", () => {
    const sniff = (text: string, name: string | null = null) => foldedImporter.sniff(new TextEncoder().encode(text), text, name);
    expect(sniff(SIMPLE)).toBeGreaterThanOrEqual(0.7);
    expect(sniff(SIMPLE, "cpu.folded")).toBeGreaterThan(sniff(SIMPLE));
    expect(sniff('{"traceEvents": []}')).toBe(0);
    expect(sniff("\u0000\u0001garbage")).toBe(0);
    const le = utf16(SIMPLE, "le");
    expect(foldedImporter.sniff(le, new TextDecoder().decode(le), null)).toBeGreaterThanOrEqual(0.7);
  });
});
