import { parentPort, type Worker } from "node:worker_threads";
import type { BatchSink, RowBatch, StagingTableName } from "../../analysis/evidence/builder";
import type { GenerationFile } from "../domain/models";
import { ObjectStore } from "../store/object-store";
import type { Workspace } from "../store/workspace";
import { BatchRing, batchFromRing, RING_BYTES, type RingBatch } from "./batch-ring";
import { loadDuckDb } from "./duckdb";
import type { EncodedChunks, NumberChunks } from "./parquet-final";
import { ParquetGenerationWriter, PLACE_COLUMNS_WITH_ENCODED, placedNumberChunks } from "./parquet-writer";
import { prepareThread, takeThread, threadStats } from "./threads";

/**
 * The Parquet writer on its own thread, so that DuckDB's appends (native calls that block the
 * thread making them) overlap with the parse that produces the batches instead of following it.
 * Batches reach the thread copied through shared memory (BatchRing), not moved.
 *
 * The thread runs the bundle's thread entry in the role WRITER_ROLE (see threads.ts).
 */
export const WRITER_ROLE = "parquet-writer";

/**
 * Batches sent but not yet written: the parse may run this far ahead. A batch is what a table
 * held at a checkpoint once it reached the builder's batch rows (64 k by default), so somewhat more.
 */
const MAX_IN_FLIGHT = 4;

interface OpenWriter {
  type: "open";
  tmp: string;
  objects: string;
  generationId: string;
  spillRows?: number;
  /** The ring batches come through (see BatchRing). */
  ring: SharedArrayBuffer;
}

type ToWriter =
  | OpenWriter
  | { type: "batch"; batch: RowBatch; encoded?: EncodedChunks[] }
  | { type: "ring batch"; batch: RingBatch; encoded?: EncodedChunks[] }
  | { type: "encoded"; encoded: EncodedChunks[] }
  | { type: "complete"; tables: StagingTableName[] }
  | { type: "finish" }
  | { type: "close" };
type FromWriter = { type: "ready" } | { type: "written" } | { type: "finished"; files: GenerationFile[] } | { type: "failed"; message: string; stack?: string };

/** A thread that has not opened its writer by then (its code failed to load, say) is given up. */
const READY_WITHIN_MS = 60_000;
/** After being told to close, a thread that has not ended by then is terminated. */
const CLOSE_WITHIN_MS = 10_000;

/** Writer threads started since the process began, and those still running (tests read these). */
export function writerThreadStats(): { started: number; live: number } {
  return threadStats(WRITER_ROLE);
}

/**
 * Starts a writer thread ahead of need: loading its code takes about a second, which the caller
 * overlaps with other work (an import stores its artifact meanwhile). An unused thread does not
 * keep the process alive and ends after 30 s; one that dies meanwhile is not handed out.
 */
export function prepareWriterThread(): void {
  prepareThread(WRITER_ROLE);
}

export class ThreadedGenerationWriter implements BatchSink {
  /** A batch is copied into the ring (or the message) before write returns: the builder may reuse its arrays. */
  readonly copies = true;
  private inFlight = 0;
  private readonly ring: BatchRing;
  /** Per batch in flight, oldest first: whether it came through the ring (whose space its "written" frees). */
  private readonly throughRing: boolean[] = [];
  private failure: Error | null = null;
  private readonly waiting: { resolve: (message: FromWriter) => void; reject: (error: Error) => void; accepts: FromWriter["type"][] }[] = [];
  private exited = false;

  private constructor(
    private readonly worker: Worker,
    ringBytes: number,
  ) {
    this.ring = new BatchRing(ringBytes);
    worker.on("message", (message: FromWriter) => this.receive(message));
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => {
      this.exited = true;
      this.fail(new Error(`the Parquet writer thread exited (code ${code})`));
    });
  }

  /**
   * A writer on a thread: the one prepareWriterThread started, if any, else a new one. It returns
   * at once, so the parse starts while the thread opens DuckDB (about 0.3 s): batches queue behind
   * the open on the thread, and a thread that cannot open fails the next write or the finish.
   */
  static open(ws: Workspace, generationId: string, options: { spillRows?: number; ringBytes?: number } = {}): ThreadedGenerationWriter {
    const writer = new ThreadedGenerationWriter(takeThread(WRITER_ROLE), options.ringBytes ?? RING_BYTES);
    writer.worker.postMessage({ type: "open", tmp: ws.layout.tmp, objects: ws.layout.objects, generationId, spillRows: options.spillRows, ring: writer.ring.memory } satisfies ToWriter);
    const timer = setTimeout(() => writer.fail(new Error(`the Parquet writer thread did not start within ${READY_WITHIN_MS / 1000} s`)), READY_WITHIN_MS);
    timer.unref();
    // A failure to open reaches the caller through write or finish, which see `failure`.
    writer.next("ready").then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    return writer;
  }

  /**
   * Most of the span places' numbers, encoded here into the spans file's row groups (see
   * placedNumberChunks and ENCODED_BY_CALLER): at the end of a trace import the thread has the
   * places' text to gather and encode, while this one, having placed them, would wait for it.
   * (220 MB trace, eight alternating imports, with three of the numbers: median 5.22 -> 4.96 s.)
   */
  private placed: { columns: string[]; chunks: NumberChunks } | null = null;

  async write(batch: RowBatch): Promise<void> {
    if (this.failure) throw this.failure;
    let encoded: EncodedChunks[] | undefined;
    if (batch.table === "span_places") {
      this.placed ??= placedNumberChunks();
      encoded = this.placed.chunks.append(
        this.placed.columns.map((name) => batch.columns[name] as Float64Array),
        batch.length,
      );
      batch = { table: batch.table, length: batch.length, columns: Object.fromEntries(PLACE_COLUMNS_WITH_ENCODED.map((name) => [name, batch.columns[name]])) };
    }
    const encodedBytes = (encoded ?? []).map((group) => group.bytes.buffer as ArrayBuffer);
    let sent = this.ring.place(batch);
    // A full ring frees as the thread writes what it holds.
    while (!sent && this.ring.placed > 0 && this.ring.fits(batch)) {
      await this.next("written");
      sent = this.ring.place(batch);
    }
    // One larger than the whole ring goes as a copy in the message itself.
    if (sent) this.worker.postMessage({ type: "ring batch", batch: sent, encoded } satisfies ToWriter, encodedBytes);
    else this.worker.postMessage({ type: "batch", batch, encoded } satisfies ToWriter, encodedBytes);
    this.throughRing.push(sent !== null);
    this.inFlight++;
    while (this.inFlight >= MAX_IN_FLIGHT) await this.next("written");
  }

  /** Sends the span places' last row group of numbers, encoded, if any rows are left: no places come after. */
  private lastPlaces(): void {
    const encoded = this.placed?.chunks.finish() ?? [];
    this.placed = null;
    if (encoded.length > 0)
      this.worker.postMessage(
        { type: "encoded", encoded } satisfies ToWriter,
        encoded.map((group) => group.bytes.buffer as ArrayBuffer),
      );
  }

  /** Does not wait: the thread writes these tables out while this thread goes on (a failure fails the finish). */
  complete(tables: StagingTableName[]): void {
    if (this.failure) throw this.failure;
    if (tables.includes("span_places")) this.lastPlaces();
    this.worker.postMessage({ type: "complete", tables } satisfies ToWriter);
  }

  async finish(): Promise<GenerationFile[]> {
    try {
      this.lastPlaces();
      this.worker.postMessage({ type: "finish" } satisfies ToWriter);
      return (await this.next("finished")).files;
    } finally {
      await this.close();
    }
  }

  /** Stops the thread; its writer removes its staging files. Safe to call more than once. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.postMessage({ type: "close" } satisfies ToWriter);
    const timer = setTimeout(() => void this.worker.terminate(), CLOSE_WITHIN_MS);
    await exited;
    clearTimeout(timer);
  }

  private receive(message: FromWriter): void {
    if (message.type === "written") {
      this.inFlight--;
      if (this.throughRing.shift()) this.ring.release();
    }
    if (message.type === "failed") {
      const error = new Error(message.message);
      if (message.stack) error.stack = message.stack;
      return this.fail(error);
    }
    const index = this.waiting.findIndex((w) => w.accepts.includes(message.type));
    if (index >= 0) this.waiting.splice(index, 1)[0].resolve(message);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiting.splice(0)) waiter.reject(this.failure);
  }

  private next<T extends FromWriter["type"]>(type: T): Promise<Extract<FromWriter, { type: T }>> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiting.push({ resolve: resolve as (message: FromWriter) => void, reject, accepts: [type] }));
  }
}

/** The thread's side: opens a writer when told, writes batches in order, acknowledging each, until told to finish or close. */
export async function runWriterThread(): Promise<void> {
  const port = parentPort!;
  // A prepared thread loads DuckDB while it waits to be told what to write (the open then finds it loaded).
  loadDuckDb().catch(() => undefined);
  const send = (message: FromWriter) => port.postMessage(message);
  let writer: ParquetGenerationWriter | null = null;
  let ring: SharedArrayBuffer | null = null;
  let queue = Promise.resolve();
  const handle = async (message: ToWriter): Promise<void> => {
    if (message.type === "open") {
      ring = message.ring;
      writer = await ParquetGenerationWriter.open({ layout: { tmp: message.tmp }, objects: new ObjectStore(message.objects, message.tmp) }, message.generationId, { spillRows: message.spillRows });
      send({ type: "ready" });
    } else if (message.type === "close") {
      const closing = writer;
      writer = null;
      try {
        await closing?.close();
      } finally {
        port.close();
      }
    } else if (!writer) {
      // The writer failed (and said so): what still arrives is dropped.
    } else if (message.type === "batch" || message.type === "ring batch") {
      // A batch in the ring is read where it lies: the writer copies what it keeps (its space is reused once this says it is written).
      await writer.write(message.type === "batch" ? message.batch : batchFromRing(ring!, message.batch), message.encoded);
      send({ type: "written" });
    } else if (message.type === "encoded") {
      writer.addEncodedPlaces(message.encoded);
    } else if (message.type === "complete") {
      await writer.complete(message.tables);
    } else {
      send({ type: "finished", files: await writer.finish() });
    }
  };
  port.on("message", (message: ToWriter) => {
    queue = queue.then(() => handle(message)).catch((error: Error) => {
      send({ type: "failed", message: error.message, stack: error.stack });
      // Nothing more can be written; the staging files go with the writer.
      const failed = writer;
      writer = null;
      return failed?.close();
    });
  });
}
