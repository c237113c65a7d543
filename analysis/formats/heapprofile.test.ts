import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseErrorOf, peerFixture, sampleRows } from "../../test/helpers/evidence-rows";
import { heapprofileImporter } from "./heapprofile";
import { importToMemory } from "./run";

const frame = (functionName: string, url = "", lineNumber = -1, columnNumber = -1, scriptId = "0") => ({ functionName, url, lineNumber, columnNumber, scriptId });

const HAND_WRITTEN = {
  head: {
    callFrame: frame("(root)"),
    selfSize: 0,
    id: 1,
    children: [
      {
        callFrame: frame("main", "file:///app.js", 0, 0, "3"),
        selfSize: 100,
        id: 2,
        children: [{ callFrame: frame("makeBuffers", "file:///app.js", 4, 2, "3"), selfSize: 4096, id: 3, children: [] }],
      },
      { callFrame: frame("(V8 API)"), selfSize: 0, id: 4, children: [] },
    ],
  },
  samples: [
    { size: 4096, nodeId: 3, ordinal: 1 },
    { size: 64, nodeId: 2, ordinal: 2 },
    { size: 2048, nodeId: 3, ordinal: 3 },
  ],
};

const parseError = (input: string) => parseErrorOf(heapprofileImporter, input);

describe("heapprofile importer", () => {
  it("turns a hand-written heap profile into alloc_bytes per node and alloc_count per sampled node", async () => {
    const result = await importToMemory(heapprofileImporter, JSON.stringify(HAND_WRITTEN), { chunkSize: 11 });
    expect(result.tables.frames.map(({ name, file, line, col, kind }) => ({ name, file, line, col, kind }))).toEqual([
      { name: "main", file: "file:///app.js", line: 1, col: 1, kind: "js" },
      { name: "makeBuffers", file: "file:///app.js", line: 5, col: 3, kind: "js" },
      { name: "(V8 API)", file: null, line: null, col: null, kind: "other" },
    ]);
    expect(sampleRows(result)).toEqual([
      { stack: "main", metric: "alloc_bytes", value: 100, time: null, track: null },
      { stack: "main;makeBuffers", metric: "alloc_bytes", value: 4096, time: null, track: null },
      { stack: "main;makeBuffers", metric: "alloc_count", value: 2, time: null, track: null },
      { stack: "main", metric: "alloc_count", value: 1, time: null, track: null },
    ]);
    expect(result.tables.metrics.map((m) => [m.name, m.unit, m.kind])).toEqual([
      ["alloc_bytes", "bytes", "sampled"],
      ["alloc_count", "count", "sampled"],
    ]);
    expect(result.summary.limitations).toEqual([]);
  });

  it("imports a real node --heap-prof profile: allocateLots dominates and totals match the raw file", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-heapprofile-"));
    const program = path.join(dir, "alloc.js");
    // Kept reachable from globalThis: the profile written at exit lists only live allocations.
    writeFileSync(
      program,
      `globalThis.keep = [];
       function allocateLots() { for (let i = 0; i < 200000; i++) globalThis.keep.push({ id: i, name: "item-" + i, tags: [i, i + 1] }); }
       allocateLots();`,
    );
    execFileSync(process.execPath, ["--heap-prof", "--heap-prof-dir", dir, "--heap-prof-interval", "32768", program]);
    const file = readdirSync(dir).find((f) => f.endsWith(".heapprofile")) as string;
    const bytes = readFileSync(path.join(dir, file));
    type RawNode = { id: number; selfSize: number; children: RawNode[] };
    const raw = JSON.parse(bytes.toString("utf8")) as { head: RawNode; samples: { nodeId: number }[] };
    const rawNodes: RawNode[] = [];
    const walk = (node: RawNode): void => {
      rawNodes.push(node);
      node.children.forEach(walk);
    };
    walk(raw.head);
    const ids = new Set(rawNodes.map((n) => n.id));
    const expectedBytes = rawNodes.reduce((sum, n) => sum + n.selfSize, 0);
    const expectedCount = raw.samples.filter((s) => ids.has(s.nodeId)).length;

    expect(heapprofileImporter.sniff(bytes.subarray(0, 65536), bytes.subarray(0, 65536).toString("utf8"), file)).toBe(1);
    const result = await importToMemory(heapprofileImporter, bytes, { fileName: file, chunkSize: 1000 });
    const rows = sampleRows(result);
    const total = (metric: string, filter: (stack: string) => boolean = () => true) =>
      rows.filter((r) => r.metric === metric && filter(r.stack)).reduce((sum, r) => sum + r.value, 0);
    expect(total("alloc_bytes")).toBe(expectedBytes);
    expect(total("alloc_count")).toBe(expectedCount);
    expect(total("alloc_bytes", (s) => s.split(";").includes("allocateLots")) / expectedBytes).toBeGreaterThan(0.5);
    // V8 sometimes lists samples whose node it left out of the tree; those are reported, not fatal.
    const unknown = result.summary.limitations.find((l) => l.code === "UNKNOWN_NODE");
    expect(unknown === undefined).toBe(expectedCount === raw.samples.length);
  });

  it("imports older heap profiles without node ids (Chrome 69, Node 10): alloc_bytes per stack as the file's tree gives it", async () => {
    for (const file of ["Chrome/69/Heap-20181005T144546.heapprofile", "node/10.11.0/Heap-20181003T105432.heapprofile"]) {
      const bytes = peerFixture(file);
      // The file's own account: each node's selfSize on its root-first path ("(root)" left out).
      type Node = { callFrame: { functionName: string }; selfSize: number; children: Node[]; id?: number };
      const head = (JSON.parse(new TextDecoder().decode(bytes)) as { head: Node }).head;
      expect(head.id).toBeUndefined();
      const expected = new Map<string, number>();
      const walk = (node: Node, path: string[]) => {
        const here = node === head ? path : [...path, node.callFrame.functionName || "(anonymous)"];
        if (node.selfSize > 0) expected.set(here.join(";"), (expected.get(here.join(";")) ?? 0) + node.selfSize);
        for (const child of node.children) walk(child, here);
      };
      walk(head, []);
      const result = await importToMemory(heapprofileImporter, bytes, { fileName: path.basename(file) });
      const got = new Map<string, number>();
      for (const r of sampleRows(result)) {
        expect(r.metric).toBe("alloc_bytes");
        got.set(r.stack, (got.get(r.stack) ?? 0) + r.value);
      }
      expect(got, file).toEqual(expected);
      expect([...got.values()].reduce((a, b) => a + b, 0), file).toBe(file.startsWith("Chrome") ? 10_030_888 : 525_704);
      expect(result.summary.limitations.map((l) => l.code), file).toEqual(["NO_SAMPLES"]);
    }
  });

  it("rejects a truncated, a corrupted and an empty file with EvidenceParseError and an offset", async () => {
    const text = JSON.stringify(HAND_WRITTEN);
    expect((await parseError(text.slice(0, 150))).at.offset).toBe(150);
    const corrupted = text.replace('"selfSize":100', '"selfSize":1OO');
    expect((await parseError(corrupted)).at.offset).toBe(text.indexOf('"selfSize":100') + '"selfSize":1'.length);
    expect((await parseError("")).at.offset).toBe(0);
    expect((await parseError('{"samples":[]}')).at.offset).toBe(0);
  });

  it("sniffs heap profiles and declines CPU profiles", () => {
    const head = JSON.stringify(HAND_WRITTEN).slice(0, 300);
    const bytes = new TextEncoder().encode(head);
    expect(heapprofileImporter.sniff(bytes, head, null)).toBeGreaterThan(0.8);
    expect(heapprofileImporter.sniff(bytes, '{"nodes":[{"id":1,"callFrame":{}}]}', "a.cpuprofile")).toBe(0);
    expect(heapprofileImporter.sniff(bytes, "garbage", null)).toBe(0);
  });
});
