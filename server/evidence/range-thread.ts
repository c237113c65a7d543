import { createReadStream, promises as fsp } from "node:fs";
import { parentPort } from "node:worker_threads";
import { RANGE_PARSERS } from "../../analysis/formats/ranges";
import type { FormatImporter, RangeParse, RangeParserId, RangeParsers, SplittableInput } from "../../analysis/formats/types";
import { isGzip } from "../../analysis/io/bytes";
import { readRange } from "./input";
import { prepareThread, takeThread, threadStats } from "./threads";

/**
 * Parsing a byte range of a stored file on a thread of its own (an importer's second part, see
 * SplittableInput). The thread runs the bundle's thread entry in the role RANGE_ROLE (see threads.ts),
 * parses one range, saying as it goes that it is alive and handing out the parser's pieces, then
 * sends the result, its typed arrays moved rather than copied, and ends.
 */
export const RANGE_ROLE = "range-parser";

interface RangeRequest {
  parser: RangeParserId;
  file: string;
  start: number;
  end: number;
  options: unknown;
}

type FromRangeThread = { type: "progress" } | { type: "piece"; piece: unknown } | { type: "parsed"; result: unknown } | { type: "failed"; message: string; stack?: string };

/** The thread says it is alive each time it has read this many more bytes, and when it has read them all. */
const PROGRESS_EVERY_BYTES = 16 * 1024 * 1024;

/**
 * A thread silent this long is taken for hung: it is ended and its result rejects, so the importer
 * reads the range itself. Generous, because it also covers the thread's start (0.15-1 s, more on a
 * loaded machine) and the result's building after the last read; and when this thread itself is
 * too busy to hear the thread in time, the cost is only that it reads the range itself.
 */
export const RANGE_SILENCE_MS = 30_000;

/** Range parser threads started since the process began, and those still running (tests read these). */
export function rangeThreadStats(): { started: number; live: number } {
  return threadStats(RANGE_ROLE);
}

/** A stored file as a SplittableInput when its bytes are what importers read (not gzip), else null. */
export async function splittableFile(file: string): Promise<SplittableInput | null> {
  const { size } = await fsp.stat(file);
  if (isGzip(await readRange(file, 0, 2))) return null;
  return {
    byteLength: size,
    read: (start, end) => readRange(file, start, end),
    parseRange: (parser, start, end, options, onPiece) => parseRangeOnThread(file, parser, start, end, options, onPiece),
  };
}

/** Starts a range thread ahead of an import that will split `file` (large enough for `importer`, not gzip). */
export async function prepareRangeThreadFor(importer: FormatImporter, file: string): Promise<void> {
  if (importer.splitsFromBytes === undefined) return;
  const { size } = await fsp.stat(file);
  if (size >= importer.splitsFromBytes && !isGzip(await readRange(file, 0, 2))) prepareThread(RANGE_ROLE);
}

/**
 * Parses bytes [start, end) of `file` with the named parser on a thread (the prepared one, if
 * any), handing its pieces to `onPiece` as they come. The result rejects when the parser fails,
 * the thread dies, or it is silent for `silenceMs` (see RANGE_SILENCE_MS); cancel ends the thread.
 */
export function parseRangeOnThread<P extends RangeParserId>(
  file: string,
  parser: P,
  start: number,
  end: number,
  options: RangeParsers[P]["options"],
  onPiece: (piece: RangeParsers[P]["piece"]) => void = () => undefined,
  silenceMs = RANGE_SILENCE_MS,
): RangeParse<RangeParsers[P]["result"]> {
  const worker = takeThread(RANGE_ROLE);
  const result = new Promise<RangeParsers[P]["result"]>((resolve, reject) => {
    // Once the result is decided, what the thread still says is not heard.
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      watch.stop();
      outcome();
    };
    const watch = watchForSilence(silenceMs, () =>
      settle(() => {
        reject(new Error(`the range parser thread was silent for ${silenceMs / 1000} s; it was ended`));
        void worker.terminate();
      }),
    );
    worker.on("message", (message: FromRangeThread) => {
      if (settled) return;
      if (message.type === "progress") return watch.heard();
      if (message.type === "piece") {
        watch.heard();
        return onPiece(message.piece as RangeParsers[P]["piece"]);
      }
      if (message.type === "parsed") return settle(() => resolve(message.result as RangeParsers[P]["result"]));
      const error = new Error(message.message);
      if (message.stack) error.stack = message.stack;
      settle(() => reject(error));
    });
    worker.on("error", (error) => settle(() => reject(error)));
    // After a result this changes nothing; before one, the thread died or was cancelled.
    worker.once("exit", (code) => settle(() => reject(new Error(`the range parser thread exited (code ${code}) before its result`))));
  });
  worker.postMessage({ parser, file, start, end, options } satisfies RangeRequest);
  return { result, cancel: () => void worker.terminate() };
}

/** Calls `onSilent` once `ms` pass without `heard()`; after `stop()`, never. */
export function watchForSilence(ms: number, onSilent: () => void): { heard(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = () => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(onSilent, ms);
    // The thread keeps the process alive while it runs; the watch need not.
    timer.unref();
  };
  arm();
  return {
    heard: arm,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** `chunks`, calling `progress` after every PROGRESS_EVERY_BYTES of them and at their end. */
async function* withProgress(chunks: AsyncIterable<Uint8Array>, progress: () => void): AsyncGenerator<Uint8Array> {
  let sinceProgress = 0;
  for await (const chunk of chunks) {
    sinceProgress += chunk.length;
    if (sinceProgress >= PROGRESS_EVERY_BYTES) {
      progress();
      sinceProgress = 0;
    }
    yield chunk;
  }
  progress();
}

/** The buffers under every typed array in `value` (nested in plain objects and arrays), to move them. */
function buffersOf(value: unknown, found = new Set<ArrayBuffer>()): Set<ArrayBuffer> {
  if (ArrayBuffer.isView(value)) found.add(value.buffer as ArrayBuffer);
  else if (Array.isArray(value)) for (const item of value) buffersOf(item, found);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) buffersOf(item, found);
  return found;
}

/** The thread's side: parses the one range it is asked for, sends the result, and ends. */
export function runRangeThread(): Promise<void> {
  const port = parentPort!;
  const send = (message: FromRangeThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  return new Promise((resolve) => {
    port.once("message", (request: RangeRequest) => {
      const parse = RANGE_PARSERS[request.parser] as (chunks: AsyncIterable<Uint8Array>, start: number, options: unknown, onPiece: (piece: unknown) => void) => Promise<unknown>;
      const chunks = createReadStream(request.file, { start: request.start, end: request.end - 1, highWaterMark: 1 << 20 });
      // A piece's arrays are its own copies: they are moved, not copied again.
      const onPiece = (piece: unknown) => send({ type: "piece", piece }, [...buffersOf(piece)]);
      parse(withProgress(chunks, () => send({ type: "progress" })), request.start, request.options, onPiece)
        .then(
          (result) => send({ type: "parsed", result }, [...buffersOf(result)]),
          (error: Error) => send({ type: "failed", message: error.message, stack: error.stack }),
        )
        .finally(() => {
          chunks.destroy();
          port.close();
          resolve();
        });
    });
  });
}
