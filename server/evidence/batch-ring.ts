import type { RowBatch, StagingTableName } from "../../analysis/evidence/builder";
import { isCodedText, type CodedText } from "../../analysis/evidence/text-coding";

/**
 * Shared memory through which a batch's arrays reach the writer thread as copies, instead of the
 * arrays themselves being moved there. A moved array costs both threads more than its copy: V8
 * counts every array a heap receives, and every new one, as freshly allocated memory outside the
 * heap, and a heap of about 10 MB (the writer's, the import's) starts a full mark-compact every
 * 15 MB or so of it. Over the 220 MB trace the batches' arrays, several hundred MB, meant about 40
 * mark-compacts on the two heaps, each marking on V8's helper threads for 20-70 ms.
 *
 * The thread is given the ring once, when it opens; a batch then names where its arrays lie in
 * it. The thread writes batches in the order they are sent, so their space is freed in that
 * order, each when the thread says it has written the batch (see release).
 */

/**
 * Bytes of the ring: room for the four batches in flight (a trace's batch of span drafts takes
 * about 6 MB). Its pages are touched as it cycles: 64 MB measured no faster, with 40 MB more RSS.
 */
export const RING_BYTES = 32 << 20;

/** Where an array lies in the ring: its byte offset and its length in elements. */
export interface RingSlot {
  at: number;
  length: number;
}

/** A text column in the ring: its arrays' slots, and the dictionary entries it added (see CodedText). */
export interface RingText {
  ids: RingSlot;
  ends: RingSlot;
  text: RingSlot;
  added: string[];
}

/** A batch as sent through the ring: numeric columns and text by slot, other columns (rare, small) as they are. */
export interface RingBatch {
  table: StagingTableName;
  length: number;
  columns: Record<string, RingSlot | RingText | unknown[]>;
}

/** Arrays start on 8-byte boundaries, as a Float64Array's must. */
function aligned(bytes: number): number {
  return (bytes + 7) & ~7;
}

/**
 * The ring's free space, as the sending side keeps it: regions taken in order and given back in
 * the same order, each contiguous (one that does not fit before the ring's end starts at 0).
 */
export class RingSpace {
  /** Where the newest region ends: the next one starts here, or at 0. */
  private head = 0;
  /** Where each region taken and not yet given back starts, oldest first. */
  private readonly starts: number[] = [];
  /** Whether the newer regions started again at 0, before the oldest one. */
  private wrapped = false;

  constructor(readonly size: number) {}

  /** Regions taken and not yet given back. */
  get taken(): number {
    return this.starts.length;
  }

  /** Takes `bytes` and returns where they start, or -1 when they do not fit now. */
  take(bytes: number): number {
    let start: number;
    if (this.starts.length === 0) start = bytes <= this.size ? 0 : -1;
    else if (this.wrapped) start = this.starts[0] - this.head >= bytes ? this.head : -1;
    else if (this.size - this.head >= bytes) start = this.head;
    else if (this.starts[0] >= bytes) {
      start = 0;
      this.wrapped = true;
    } else start = -1;
    if (start < 0) return -1;
    this.head = start + bytes;
    this.starts.push(start);
    return start;
  }

  /** Gives back the oldest region taken. */
  release(): void {
    const released = this.starts.shift();
    if (released === undefined) throw new Error("no region of the ring is taken");
    if (this.starts.length === 0) {
      this.head = 0;
      this.wrapped = false;
    } else if (this.starts[0] < released) this.wrapped = false;
  }
}

/** The ring bytes of a batch's arrays, each starting on an 8-byte boundary. */
function bytesOf(batch: RowBatch): number {
  let bytes = 0;
  for (const column of Object.values(batch.columns)) {
    if (column instanceof Float64Array) bytes += column.byteLength;
    else if (isCodedText(column)) bytes += column.ids.byteLength + column.ends.byteLength + aligned(column.text.byteLength);
  }
  return bytes;
}

/** The sending side: copies batches into the ring while it has room. */
export class BatchRing {
  readonly memory: SharedArrayBuffer;
  private readonly space: RingSpace;

  constructor(size = RING_BYTES) {
    this.memory = new SharedArrayBuffer(size);
    this.space = new RingSpace(size);
  }

  /** Batches placed and not yet released. */
  get placed(): number {
    return this.space.taken;
  }

  /**
   * The batch as sent through the ring, its arrays copied there; null when they do not fit now
   * (release the oldest batches and try again) or ever (when larger than the ring).
   */
  place(batch: RowBatch): RingBatch | null {
    let at = this.space.take(bytesOf(batch));
    if (at < 0) return null;
    const copy = (array: Float64Array | Uint8Array): RingSlot => {
      const slot = { at, length: array.length };
      if (array instanceof Float64Array) new Float64Array(this.memory, at, array.length).set(array);
      else new Uint8Array(this.memory, at, array.length).set(array);
      at += aligned(array.byteLength);
      return slot;
    };
    const columns: RingBatch["columns"] = {};
    for (const [name, column] of Object.entries(batch.columns)) {
      if (column instanceof Float64Array) columns[name] = copy(column);
      else if (isCodedText(column)) columns[name] = { ids: copy(column.ids), ends: copy(column.ends), text: copy(column.text), added: column.added };
      else if (Array.isArray(column)) columns[name] = column;
      else throw new Error(`column ${batch.table}.${name} is neither numbers (Float64Array), coded text nor a plain array`);
    }
    return { table: batch.table, length: batch.length, columns };
  }

  /** The oldest batch placed has been written: its space is free. */
  release(): void {
    this.space.release();
  }

  /** Whether a batch this large could ever be placed. */
  fits(batch: RowBatch): boolean {
    return bytesOf(batch) <= this.space.size;
  }
}

/** The receiving side: a batch sent through `memory`, its arrays viewed where they lie (valid until the batch is released). */
export function batchFromRing(memory: SharedArrayBuffer, batch: RingBatch): RowBatch {
  const numbers = (slot: RingSlot) => new Float64Array(memory, slot.at, slot.length);
  const columns: RowBatch["columns"] = {};
  for (const [name, column] of Object.entries(batch.columns)) {
    if (Array.isArray(column)) columns[name] = column;
    else if ("ids" in column) columns[name] = { ids: numbers(column.ids), ends: numbers(column.ends), text: new Uint8Array(memory, column.text.at, column.text.length), added: column.added } satisfies CodedText;
    else columns[name] = numbers(column);
  }
  return { table: batch.table, length: batch.length, columns };
}
