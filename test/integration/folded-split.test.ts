import { execFileSync } from "node:child_process";
import { appendFileSync, closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EvidenceBuilder, MemorySink } from "../../analysis/evidence/builder";
import { FOLDED_SPLIT_FROM_BYTES, foldedImporter } from "../../analysis/formats/folded";
import { importToMemory, sourceFromBytes } from "../../analysis/formats/run";
import { DEFAULT_IMPORT_LIMITS, type ImportLimits, type RangeParse, type SplittableInput } from "../../analysis/formats/types";
import { parseRangeOnThread, rangeThreadStats, splittableFile } from "../../server/evidence/range-thread";
import { analyzeHotspots, callService, importArtifact, type ServiceContext } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { foldedFile } from "../bench/generators";
import { tempProject } from "../helpers/project";

const dir = mkdtempSync(path.join(tmpdir(), "emberscope-folded-split-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A folded file of `bytes` bytes or a little more, with a few invalid lines in both halves. */
async function bigFolded(name: string, bytes: number): Promise<string> {
  const file = path.join(dir, name);
  await foldedFile(file, bytes);
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  for (const at of [3, Math.floor(lines.length * 0.7)]) lines.splice(at, 0, "main;no_count", ";; 4", "main;négatif -3");
  writeFileSync(file, lines.join("\n"));
  return file;
}

/** Parses `file` with the importer as the server would (a SplittableInput over it) into memory. */
async function parseWithSplit(file: string, split: SplittableInput | undefined, limits: Partial<ImportLimits> = {}): Promise<unknown> {
  const sink = new MemorySink();
  const builder = new EvidenceBuilder(sink, 4096);
  try {
    await foldedImporter.parse({ source: sourceFromBytes(new Uint8Array(readFileSync(file)), null, 1 << 20), builder, limits: { ...DEFAULT_IMPORT_LIMITS, ...limits }, split });
    return { tables: sink.tables, summary: await builder.finish() };
  } catch (error) {
    return { error: String(error) };
  }
}

/** A 3 MiB folded file as a SplittableInput split 40% in, and what a parse on one thread makes of it. */
async function splitCase(name: string) {
  const file = await bigFolded(name, 3 * 1024 * 1024);
  const input = (await splittableFile(file))!;
  return { file, input, splitNear: Math.floor(input.byteLength * 0.4), sequential: await parseWithSplit(file, undefined) };
}

/** `job`, whose outcome ("parsed", or the error's text) goes onto `outcomes` when it settles. */
function recorded<T>(job: RangeParse<T>, outcomes: string[]): RangeParse<T> {
  job.result.then(
    () => outcomes.push("parsed"),
    (e: unknown) => outcomes.push(String(e)),
  );
  return job;
}

/** Resolves once no range thread is running beyond `live` (each ends itself after its result, or is terminated). */
async function rangeThreadsEnded(live: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (rangeThreadStats().live > live && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(rangeThreadStats().live).toBe(live);
}

describe("folded stacks, second part on a thread", () => {
  it("parses a file's second part on a range thread to the rows of a parse on one thread", async () => {
    const file = await bigFolded("split.folded", 6 * 1024 * 1024);
    const sequential = await parseWithSplit(file, undefined);
    const before = rangeThreadStats();
    const input = (await splittableFile(file))!;
    // Pieces every 256 KiB (in fact after every 1 MiB read): most of the part is merged while the thread parses on.
    let pieces = 0;
    const inPieces: SplittableInput = {
      ...input,
      splitNear: Math.floor(input.byteLength * 0.45),
      parseRange: (parser, start, end, options, onPiece) =>
        input.parseRange(parser, start, end, { ...options, pieceBytes: 256 * 1024 }, (piece) => {
          pieces++;
          onPiece(piece);
        }),
    };
    const split = await parseWithSplit(file, inPieces);
    expect(rangeThreadStats().started).toBe(before.started + 1);
    expect(pieces).toBeGreaterThan(2);
    expect(split).toEqual(sequential);
    expect((split as { summary: { limitations: { code: string; count: number }[] } }).summary.limitations).toEqual([expect.objectContaining({ code: "FOLDED_INVALID_LINES", count: 6 })]);
    await rangeThreadsEnded(before.live);
  }, 120_000);

  it("reads the second part itself when the thread fails, or dies, or its part holds a line it cannot judge", async () => {
    const { file, input, splitNear, sequential } = await splitCase("fail.folded");
    const before = rangeThreadStats();

    // The thread cannot read its range: the file it is given does not exist.
    const missing = await parseRangeOnThread(path.join(dir, "missing.folded"), "folded", 10, 20, { differential: null, maxDepth: 1024, maxLineLength: 1024, pieceBytes: 1 << 20 }).result.catch((e: unknown) => e);
    expect(String(missing)).toMatch(/ENOENT/);
    const unreadable: SplittableInput = {
      ...input,
      splitNear,
      parseRange: (parser, _start, end, options, onPiece) => parseRangeOnThread(path.join(dir, "missing.folded"), parser, splitNear, end, options, onPiece),
    };
    expect(await parseWithSplit(file, unreadable)).toEqual(sequential);

    // The thread is terminated while it parses: before its first piece, and after some were merged.
    for (const cancelAfterPieces of [0, 2]) {
      let pieces = 0;
      const dying: SplittableInput = {
        ...input,
        splitNear,
        parseRange(parser, start, end, options, onPiece) {
          const job = input.parseRange(parser, start, end, { ...options, pieceBytes: 128 * 1024 }, (piece) => {
            onPiece(piece);
            if (++pieces === cancelAfterPieces) job.cancel();
          });
          if (cancelAfterPieces === 0) setTimeout(job.cancel, 5);
          return job;
        },
      };
      expect(await parseWithSplit(file, dying)).toEqual(sequential);
      // Pieces already sent when the thread was ended may still be heard.
      if (cancelAfterPieces === 0) expect(pieces).toBe(0);
      else expect(pieces).toBeGreaterThanOrEqual(cancelAfterPieces);
    }
    const exited = await (() => {
      const job = parseRangeOnThread(file, "folded", 0, input.byteLength, { differential: null, maxDepth: 1024, maxLineLength: 1 << 20, pieceBytes: 1 << 20 });
      job.cancel();
      return job.result.catch((e: unknown) => e);
    })();
    expect(String(exited)).toMatch(/exited/);

    // A line longer than the bound in the second part: whether the parse refuses it depends on
    // where its reads end, so the thread refuses its part (after pieces of it were merged) and
    // this thread reads on as one parse.
    const long = path.join(dir, "long.folded");
    writeFileSync(long, readFileSync(file));
    appendFileSync(long, `\nmain;${"x".repeat(5000)} 3\nmain;y 4\n`);
    const longInput = (await splittableFile(long))!;
    const outcomes: string[] = [];
    const watched: SplittableInput = {
      ...longInput,
      splitNear,
      parseRange: (parser, start, end, options, onPiece) => recorded(longInput.parseRange(parser, start, end, { ...options, pieceBytes: 256 * 1024 }, onPiece), outcomes),
    };
    for (const maxLineLength of [4000, 2 ** 20]) {
      const expected = await parseWithSplit(long, undefined, { maxLineLength });
      expect(await parseWithSplit(long, watched, { maxLineLength })).toEqual(expected);
    }
    expect(outcomes).toEqual([expect.stringMatching(/may be longer than 4000 bytes/), "parsed"]);
    expect(rangeThreadStats().started).toBe(before.started + 7);
    await rangeThreadsEnded(before.live);
  }, 120_000);

  it("ends a range thread that goes silent, and the importer reads the part itself", async () => {
    const { file, input, splitNear, sequential } = await splitCase("silent.folded");
    // A named pipe that nobody writes to: the thread's open of it never returns, so it never reports progress.
    const fifo = path.join(dir, "silent.fifo");
    execFileSync("mkfifo", [fifo]);
    const before = rangeThreadStats();
    try {
      const outcomes: string[] = [];
      const silent: SplittableInput = {
        ...input,
        splitNear,
        parseRange: (parser, _start, end, options, onPiece) => recorded(parseRangeOnThread(fifo, parser, splitNear, end, options, onPiece, 500), outcomes),
      };
      expect(await parseWithSplit(file, silent)).toEqual(sequential);
      expect(outcomes).toEqual([expect.stringMatching(/silent for 0.5 s; it was ended/)]);
    } finally {
      // The thread, told to end, ends once its blocked open returns: opening the other end lets it
      // (read-write never blocks, whether or not the thread got as far as its open).
      closeSync(openSync(fifo, constants.O_RDWR));
    }
    await rangeThreadsEnded(before.live);
  }, 120_000);

  it("an import of a large plain folded file splits it on a thread started while the file is stored", async () => {
    const root = tempProject();
    initWorkspace(root).close();
    const ctx: ServiceContext = { locator: { cwd: root, projectRoot: root }, actor: "test" };
    const file = await bigFolded("big.folded", FOLDED_SPLIT_FROM_BYTES + 2 ** 20);
    const sequential = await importToMemory(foldedImporter, new Uint8Array(readFileSync(file)));
    const before = rangeThreadStats();
    const result = await callService(importArtifact, ctx, { path: file });
    expect(rangeThreadStats().started).toBe(before.started + 1);
    expect(result.rows).toEqual(sequential.summary.rows);
    expect(result.limitations.map((l) => l.code)).toEqual(sequential.summary.limitations.map((l) => l.code));
    const total = sequential.tables.samples.reduce((sum, s) => sum + (s.value as number), 0);
    expect((await callService(analyzeHotspots, ctx, { run_id: result.run_id })).grand_total).toBe(total);
    await rangeThreadsEnded(before.live);
  }, 180_000);
});
