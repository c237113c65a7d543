/**
 * Java Flight Recorder recordings (`.jfr`, format 2.x: what JDK 11+ and OpenJDK 8u262+ write, and
 * what async-profiler writes). A file is a run of self-contained chunks: a 68-byte header, then
 * events, each `size, type id, fields`, in LEB128-compressed integers. A chunk's metadata event
 * describes every type's fields; its checkpoint events hold the constant pools (threads, stack
 * traces, methods, classes, symbols…) that events refer to by key. Chunks are read one at a time
 * (the file is never held whole): the metadata, then every checkpoint, then the samples.
 *
 * Imported: `jdk.ExecutionSample` (metric `samples`: Java threads running Java code, sampled),
 * `jdk.NativeMethodSample` (`native_samples`: threads in native methods), `jdk.ObjectAllocationSample`
 * (`alloc_bytes`: its weight) and the TLAB allocation events async-profiler and older JDKs write
 * (`tlab_alloc_bytes`: the new TLAB's size, or the object's outside one). Each is a timed sample on a
 * track per thread. Frames are per method, `package.Class.method(ParamTypes)` as `jfr print` writes
 * them, module = the class's module (else its package); a sample's line numbers and frame types
 * (interpreted, compiled, inlined) are not kept. Every other event type is counted in a limitation.
 */
import type { EvidenceBuilder } from "../evidence/builder";
import type { FrameKind } from "../evidence/schema";
import { demangledFrame } from "../symbols/demangle";
import { EvidenceParseError } from "./errors";
import type { FormatImporter, ImportContext } from "./types";

const FORMAT = "jfr";
const HEADER_BYTES = 68;
const MAGIC = [0x46, 0x4c, 0x52, 0x00]; // "FLR\0"
const METADATA_TYPE = 0;
const CHECKPOINT_TYPE = 1;
const SAMPLES_PER_CHECKPOINT = 8192;
/** Other event types named in the limitation; the rest are counted together. */
const SKIPPED_TYPES_NAMED = 8;

/** The sample events imported, by type name: their metric, and the field that weighs a sample (none: 1 each). */
const SAMPLE_EVENTS: Record<string, { metric: string; unit: string; thread: string; weight: string | null }> = {
  "jdk.ExecutionSample": { metric: "samples", unit: "count", thread: "sampledThread", weight: null },
  "jdk.NativeMethodSample": { metric: "native_samples", unit: "count", thread: "sampledThread", weight: null },
  "jdk.ObjectAllocationSample": { metric: "alloc_bytes", unit: "bytes", thread: "eventThread", weight: "weight" },
  "jdk.ObjectAllocationInNewTLAB": { metric: "tlab_alloc_bytes", unit: "bytes", thread: "eventThread", weight: "tlabSize" },
  "jdk.ObjectAllocationOutsideTLAB": { metric: "tlab_alloc_bytes", unit: "bytes", thread: "eventThread", weight: "allocationSize" },
};

type Primitive = "boolean" | "byte" | "char" | "short" | "int" | "long" | "float" | "double" | "java.lang.String";
const PRIMITIVES = new Set<string>(["boolean", "byte", "char", "short", "int", "long", "float", "double", "java.lang.String"]);

interface JfrField {
  name: string;
  typeId: number;
  constantPool: boolean;
  array: boolean;
}
interface JfrType {
  id: number;
  name: string;
  primitive: Primitive | null;
  fields: JfrField[];
}

/** A value held in a constant pool, named by its type and key. */
class PoolRef {
  constructor(
    readonly typeId: number,
    readonly key: number | string,
  ) {}
}
type JfrValue = number | boolean | string | null | PoolRef | JfrValue[] | { [field: string]: JfrValue };
type JfrObject = { [field: string]: JfrValue };

/**
 * Reads one chunk's bytes: raw big-endian numbers (the header) and the chunk's integers, LEB128
 * (7 bits a byte, low first; a 64-bit value's ninth byte holds its last 8 bits whole) when the
 * header says so, else big-endian. `base` is the chunk's offset in the file, for errors.
 */
class ChunkReader {
  pos = 0;
  compressed = true;
  constructor(
    readonly bytes: Uint8Array,
    readonly base: number,
    public end = bytes.length,
  ) {}

  fail(reason: string, at = this.pos): never {
    throw new EvidenceParseError(FORMAT, reason, { offset: this.base + at });
  }

  private need(count: number): void {
    if (this.pos + count > this.end) this.fail(this.end < this.bytes.length ? "a value runs past the end of its event" : "the chunk ends in the middle of a value: truncated");
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.pos++];
  }

  rawU16(): number {
    this.need(2);
    const value = (this.bytes[this.pos] << 8) | this.bytes[this.pos + 1];
    this.pos += 2;
    return value;
  }

  rawU32(): number {
    this.need(4);
    const b = this.bytes;
    const value = ((b[this.pos] << 24) | (b[this.pos + 1] << 16) | (b[this.pos + 2] << 8) | b[this.pos + 3]) >>> 0;
    this.pos += 4;
    return value;
  }

  /** A big-endian signed 64-bit value (exact to 2^53). */
  rawI64(): number {
    const high = this.rawU32();
    const low = this.rawU32();
    return high >= 0x80000000 ? -((0xffffffff - high) * 4294967296 + (0xffffffff - low) + 1) : high * 4294967296 + low;
  }

  rawBigI64(): bigint {
    const high = this.rawU32();
    const low = this.rawU32();
    return BigInt.asIntN(64, (BigInt(high) << 32n) | BigInt(low));
  }

  /** An integer field's value as an unsigned 64-bit number (exact below 2^53); `exact` keeps larger ones as decimal text. */
  long(exact = false): number | string {
    if (!this.compressed) {
      const high = this.rawU32();
      const low = this.rawU32();
      const value = high * 4294967296 + low;
      return exact && high >= 0x200000 ? ((BigInt(high) << 32n) | BigInt(low)).toString() : value;
    }
    const b = this.bytes;
    let value = 0;
    let scale = 1;
    const start = this.pos;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) this.need(1);
      const byte = b[this.pos++];
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return exact && value > Number.MAX_SAFE_INTEGER ? this.exactLong(start) : value;
      scale *= 128;
    }
    this.need(1);
    value += b[this.pos++] * scale;
    return exact && value > Number.MAX_SAFE_INTEGER ? this.exactLong(start) : value;
  }

  /** The LEB128 value at `start` (already read) as exact decimal text. */
  private exactLong(start: number): string {
    let value = 0n;
    let shift = 0n;
    for (let at = start; at < this.pos; at++) {
      const last = at === start + 8;
      value |= BigInt(last ? this.bytes[at] : this.bytes[at] & 0x7f) << shift;
      shift += 7n;
    }
    return value.toString();
  }

  /** A 64-bit field read as signed (two's complement). */
  signedLong(): number {
    const start = this.pos;
    const value = this.long() as number;
    if (value < 2 ** 63) return value;
    this.pos = start;
    return Number(BigInt.asIntN(64, BigInt(this.long(true))));
  }

  /** An int/short/char field: the low 32 bits of its value, signed. */
  int(): number {
    if (!this.compressed) return this.rawU32() | 0;
    const value = this.long() as number;
    return value % 4294967296 | 0;
  }

  /** A count or size: a non-negative int. */
  count(what: string): number {
    const at = this.pos;
    const value = this.int();
    if (value < 0) this.fail(`${what} ${value} is negative`, at);
    return value;
  }

  short(): number {
    if (!this.compressed) {
      const value = this.rawU16();
      return value >= 0x8000 ? value - 0x10000 : value;
    }
    const value = this.int() & 0xffff;
    return value >= 0x8000 ? value - 0x10000 : value;
  }

  char(): number {
    return this.compressed ? this.int() & 0xffff : this.rawU16();
  }

  float(): number {
    this.need(4);
    const value = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.pos, 4).getFloat32(0);
    this.pos += 4;
    return value;
  }

  double(): number {
    this.need(8);
    const value = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.pos, 8).getFloat64(0);
    this.pos += 8;
    return value;
  }

  /** A string: encoding byte 0 null, 1 empty, 2 a key of the java.lang.String pool, 3 UTF-8, 4 UTF-16 code units, 5 Latin-1. */
  string(stringType: number): string | null | PoolRef {
    const at = this.pos;
    const encoding = this.u8();
    switch (encoding) {
      case 0:
        return null;
      case 1:
        return "";
      case 2:
        return new PoolRef(stringType, this.long(true));
      case 3:
      case 5: {
        const length = this.count("a string length");
        this.need(length);
        const start = this.pos;
        this.pos += length;
        // Most strings are short ASCII (symbols, names): a decoder call costs more than they do.
        if (length <= 64) {
          let text = "";
          for (let i = start; i < start + length; i++) {
            const byte = this.bytes[i];
            if (byte >= 0x80 && encoding === 3) return utf8.decode(this.bytes.subarray(start, start + length));
            text += String.fromCharCode(byte);
          }
          return text;
        }
        const bytes = this.bytes.subarray(start, start + length);
        return encoding === 3 ? utf8.decode(bytes) : latin1(bytes);
      }
      case 4: {
        const length = this.count("a string length");
        if (length > this.end - this.pos) this.fail("a string runs past the end of its event", at);
        const units: number[] = [];
        for (let i = 0; i < length; i++) units.push(this.char());
        return codeUnits(units);
      }
      default:
        return this.fail(`unknown string encoding ${encoding}`, at);
    }
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: false });

function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return out;
}

function codeUnits(units: number[]): string {
  let out = "";
  for (let i = 0; i < units.length; i += 4096) out += String.fromCharCode(...units.slice(i, i + 4096));
  return out;
}

interface ChunkHeader {
  major: number;
  minor: number;
  size: number;
  constantPoolOffset: number;
  metadataOffset: number;
  /** Exact: epoch nanoseconds pass 2^53. */
  startNanos: bigint;
  durationNanos: number;
  startTicks: number;
  ticksPerSecond: number;
  compressed: boolean;
}

function readHeader(reader: ChunkReader): ChunkHeader {
  for (let i = 0; i < 4; i++) if (reader.u8() !== MAGIC[i]) reader.fail("not a JFR chunk: the magic FLR\\0 is missing", 0);
  const major = reader.rawU16();
  const minor = reader.rawU16();
  if (major !== 2) reader.fail(major === 1 ? "JFR format 1.x (Oracle JDK 7 to 10) is not supported; record with JDK 11 or later" : `unknown JFR format version ${major}.${minor}`, 4);
  const size = reader.rawI64();
  const constantPoolOffset = reader.rawI64();
  const metadataOffset = reader.rawI64();
  const startNanos = reader.rawBigI64();
  const durationNanos = reader.rawI64();
  const startTicks = reader.rawI64();
  const ticksPerSecond = reader.rawI64();
  // Bytes 64-67: the file state (0 once written), two bytes unused, then flags (bit 0: compressed integers).
  const state = reader.u8();
  reader.u8();
  reader.u8();
  const flags = reader.u8();
  if (size === 0 || state !== 0) reader.fail("the chunk was never finished (its header is still being written): the recording was not stopped or dumped", 8);
  if (size < HEADER_BYTES) reader.fail(`the chunk size ${size} is smaller than its header`, 8);
  if (metadataOffset < HEADER_BYTES || metadataOffset >= size) reader.fail(`the metadata offset ${metadataOffset} is outside the chunk`, 24);
  if (constantPoolOffset < HEADER_BYTES || constantPoolOffset >= size) reader.fail(`the constant pool offset ${constantPoolOffset} is outside the chunk`, 16);
  if (ticksPerSecond <= 0) reader.fail(`the chunk's clock runs at ${ticksPerSecond} ticks per second`, 56);
  return { major, minor, size, constantPoolOffset, metadataOffset, startNanos, durationNanos, startTicks, ticksPerSecond, compressed: (flags & 1) === 1 };
}

interface Element {
  name: string;
  attributes: Map<string, string>;
  children: Element[];
}

/** The metadata event: a string table, then a tree of elements (root → metadata → class → field). */
/** The types of the chunk before, and the metadata they were read from (its string table and tree). */
interface MetadataCache {
  body: Uint8Array;
  types: Map<number, JfrType>;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The metadata event: a string table, then a tree of elements (root → metadata → class → field).
 * A recording's chunks mostly repeat the same metadata: when its body is the previous chunk's
 * byte for byte, the types read then are used again.
 */
function readMetadata(reader: ChunkReader, at: number, maxDepth: number, cache: { last: MetadataCache | null }): Map<number, JfrType> {
  reader.pos = at;
  const size = reader.count("the metadata event's size");
  if (at + size > reader.bytes.length) reader.fail("the metadata event runs past the end of the chunk", at);
  reader.end = at + size;
  if (reader.long() !== METADATA_TYPE) reader.fail("the chunk header's metadata offset does not point at the metadata event", at);
  reader.long(); // start time
  reader.long(); // duration
  reader.long(); // metadata id
  const body = reader.bytes.subarray(reader.pos, reader.end);
  if (cache.last && sameBytes(cache.last.body, body)) {
    reader.end = reader.bytes.length;
    return cache.last.types;
  }
  const types = readMetadataBody(reader, at, maxDepth);
  cache.last = { body: body.slice(), types };
  return types;
}

function readMetadataBody(reader: ChunkReader, at: number, maxDepth: number): Map<number, JfrType> {
  const stringCount = reader.count("the metadata's string count");
  if (stringCount > reader.end - reader.pos) reader.fail("the metadata's string count exceeds its size");
  const strings: string[] = [];
  for (let i = 0; i < stringCount; i++) {
    const value = reader.string(-1);
    strings.push(typeof value === "string" ? value : "");
  }
  const text = (): string => {
    const index = reader.int();
    if (index < 0 || index >= strings.length) reader.fail(`metadata string index ${index} is outside its ${strings.length} strings`);
    return strings[index];
  };
  const element = (depth: number): Element => {
    if (depth > maxDepth) reader.fail(`the metadata nests deeper than ${maxDepth} elements`);
    const name = text();
    const attributes = new Map<string, string>();
    const attributeCount = reader.count("an attribute count");
    for (let i = 0; i < attributeCount; i++) attributes.set(text(), text());
    const childCount = reader.count("a child count");
    if (childCount > reader.end - reader.pos) reader.fail("an element's child count exceeds the metadata's size");
    const children: Element[] = [];
    for (let i = 0; i < childCount; i++) children.push(element(depth + 1));
    return { name, attributes, children };
  };
  const root = element(0);
  reader.end = reader.bytes.length;
  const types = new Map<number, JfrType>();
  const classes = root.children.filter((c) => c.name === "metadata").flatMap((m) => m.children.filter((c) => c.name === "class"));
  for (const cls of classes) {
    const id = Number(cls.attributes.get("id"));
    const name = cls.attributes.get("name") ?? "";
    if (!Number.isSafeInteger(id) || id < 0) reader.fail(`the metadata's class ${name || "(unnamed)"} has no valid id`, at);
    const fields = cls.children
      .filter((c) => c.name === "field")
      .map((f) => ({ name: f.attributes.get("name") ?? "", typeId: Number(f.attributes.get("class")), constantPool: f.attributes.get("constantPool") === "true", array: (f.attributes.get("dimension") ?? "0") !== "0" }));
    types.set(id, { id, name, primitive: PRIMITIVES.has(name) ? (name as Primitive) : null, fields });
  }
  for (const type of types.values()) {
    for (const field of type.fields) {
      if (!types.has(field.typeId)) reader.fail(`field ${field.name} of ${type.name} has type ${field.typeId}, which the metadata does not define`, at);
    }
  }
  return types;
}

/** Values of a chunk's types, read by their metadata; constant pool fields stay references. */
class ValueReader {
  private readonly stringType: number;
  constructor(
    private readonly reader: ChunkReader,
    private readonly types: Map<number, JfrType>,
    private readonly maxDepth: number,
  ) {
    this.stringType = [...types.values()].find((t) => t.name === "java.lang.String")?.id ?? -1;
  }

  type(id: number, at: number): JfrType {
    const type = this.types.get(id);
    if (!type) this.reader.fail(`type ${id} is not in the chunk's metadata`, at);
    return type;
  }

  value(type: JfrType, depth: number): JfrValue {
    const r = this.reader;
    switch (type.primitive) {
      case "boolean":
        return r.u8() !== 0;
      case "byte": {
        const byte = r.u8();
        return byte >= 0x80 ? byte - 0x100 : byte;
      }
      case "char":
        return r.char();
      case "short":
        return r.short();
      case "int":
        return r.int();
      case "long":
        return r.signedLong();
      case "float":
        return r.float();
      case "double":
        return r.double();
      case "java.lang.String":
        return r.string(this.stringType);
      default:
        return this.object(type, depth);
    }
  }

  object(type: JfrType, depth: number): JfrObject {
    if (depth > this.maxDepth) this.reader.fail(`values nest deeper than ${this.maxDepth} levels`);
    const out: JfrObject = {};
    for (const field of type.fields) out[field.name] = this.field(field, depth + 1);
    return out;
  }

  private field(field: JfrField, depth: number): JfrValue {
    const r = this.reader;
    if (field.array) {
      const at = r.pos;
      const count = r.count("an array length");
      if (count > r.end - r.pos) r.fail(`an array of ${count} values is longer than the rest of its event`, at);
      const out: JfrValue[] = [];
      for (let i = 0; i < count; i++) out.push(this.single(field, depth));
      return out;
    }
    return this.single(field, depth);
  }

  private single(field: JfrField, depth: number): JfrValue {
    if (field.constantPool) return new PoolRef(field.typeId, this.reader.long(true));
    return this.value(this.types.get(field.typeId)!, depth);
  }
}

/** One chunk's constant pools: type id → key → value. */
class ConstantPools {
  private readonly pools = new Map<number, Map<number | string, JfrValue>>();
  missing = 0;

  add(typeId: number, key: number | string, value: JfrValue): void {
    let pool = this.pools.get(typeId);
    if (!pool) this.pools.set(typeId, (pool = new Map()));
    pool.set(key, value);
  }

  /** A reference's value (followed through references); undefined, and counted, when the chunk lacks it. */
  resolve(value: JfrValue | undefined): JfrValue | undefined {
    for (let hops = 0; value instanceof PoolRef && hops < 16; hops++) {
      const found: JfrValue | undefined = this.pools.get(value.typeId)?.get(value.key);
      if (found === undefined) {
        // Key 0 is how writers say null (a class of the unnamed module, the bootstrap loader).
        if (value.key === 0) return null;
        this.missing++;
        return undefined;
      }
      value = found;
    }
    return value instanceof PoolRef ? undefined : value;
  }

  object(value: JfrValue | undefined): JfrObject | undefined {
    const resolved = this.resolve(value);
    return resolved !== null && typeof resolved === "object" && !Array.isArray(resolved) && !(resolved instanceof PoolRef) ? resolved : undefined;
  }

  text(value: JfrValue | undefined): string | null {
    const resolved = this.resolve(value);
    if (typeof resolved === "string") return resolved;
    // A Symbol is a one-field struct around its string.
    if (resolved && typeof resolved === "object" && !Array.isArray(resolved) && "string" in resolved) return this.text((resolved as JfrObject).string);
    return null;
  }
}

/** Reads the checkpoint event at `reader.pos` (its size and type already read) into the pools. */
function readCheckpoint(reader: ChunkReader, values: ValueReader, pools: ConstantPools, major: number): void {
  reader.long(); // start time
  reader.long(); // duration
  reader.signedLong(); // delta to the previous checkpoint
  if (major >= 2) reader.u8(); // checkpoint kind (flush, chunk header, statics, thread)
  const poolCount = reader.count("a checkpoint's pool count");
  for (let p = 0; p < poolCount; p++) {
    const at = reader.pos;
    const typeId = reader.long() as number;
    const type = values.type(typeId, at);
    const count = reader.count("a constant pool's size");
    if (count > reader.end - reader.pos) reader.fail(`a constant pool of ${count} values is longer than its checkpoint`, at);
    for (let i = 0; i < count; i++) {
      const key = reader.long(true);
      pools.add(typeId, key, values.value(type, 0));
    }
  }
}

/** `(ILjava/lang/String;[J)V` → `int, String, long[]`, as `jfr print` lists parameters. */
export function jfrParameters(descriptor: string): string | null {
  if (!descriptor.startsWith("(")) return null;
  const out: string[] = [];
  let i = 1;
  while (i < descriptor.length && descriptor[i] !== ")") {
    let dims = 0;
    while (descriptor[i] === "[") {
      dims++;
      i++;
    }
    let name: string;
    const c = descriptor[i];
    if (c === "L") {
      const end = descriptor.indexOf(";", i);
      if (end < 0) return null;
      const internal = descriptor.slice(i + 1, end);
      name = internal.slice(internal.lastIndexOf("/") + 1);
      i = end + 1;
    } else {
      const primitive = ({ B: "byte", C: "char", D: "double", F: "float", I: "int", J: "long", S: "short", Z: "boolean" } as Record<string, string>)[c];
      if (!primitive) return null;
      name = primitive;
      i++;
    }
    out.push(name + "[]".repeat(dims));
  }
  return i < descriptor.length ? out.join(", ") : null;
}

const FRAME_TYPE_KINDS: Record<string, FrameKind> = { Native: "native", "C++": "native", Kernel: "kernel" };

/** Turns one chunk's pool values into builder frames, stacks and tracks, each once per key. */
class ChunkSymbols {
  private readonly stacks = new Map<number | string, { leaf: number | null; truncated: boolean }>();
  private readonly methods = new Map<number | string, number>();
  private readonly threads = new Map<number | string, number | null>();
  constructor(
    private readonly builder: EvidenceBuilder,
    private readonly pools: ConstantPools,
    private readonly maxDepth: number,
    private readonly stats: ImportStats,
  ) {}

  /** The leaf stack node of a stack trace reference; null for a sample without one. */
  stack(ref: JfrValue | undefined): number | null {
    if (!(ref instanceof PoolRef)) return null;
    const known = this.stacks.get(ref.key);
    if (known) {
      if (known.truncated) this.stats.truncatedStacks++;
      return known.leaf;
    }
    const trace = this.pools.object(ref);
    let leaf: number | null = null;
    let truncated = false;
    if (!trace) leaf = this.builder.stack(null, this.unknownFrame());
    else {
      const frames = Array.isArray(trace.frames) ? trace.frames : [];
      truncated = trace.truncated === true;
      // Leaf first in the file; deep stacks keep their root-most frames.
      const depth = Math.min(frames.length, this.maxDepth);
      if (frames.length > this.maxDepth) this.stats.deepStacks++;
      for (let i = frames.length - 1; i >= frames.length - depth; i--) leaf = this.builder.stack(leaf, this.frame(frames[i]));
    }
    if (truncated) this.stats.truncatedStacks++;
    this.stacks.set(ref.key, { leaf, truncated });
    return leaf;
  }

  private unknownFrame(): number {
    return this.builder.frame({ name: "(unknown)", kind: "other" });
  }

  private frame(value: JfrValue): number {
    const frame = this.pools.object(value);
    if (!frame) return this.unknownFrame();
    const methodRef = frame.method;
    // Per method and frame type (a type's key says it: a handful of them).
    const cacheKey = methodRef instanceof PoolRef ? (frame.type instanceof PoolRef ? methodRef.key + "/" + frame.type.key : methodRef.key) : null;
    const known = cacheKey === null ? undefined : this.methods.get(cacheKey);
    if (known !== undefined) return known;
    const type = this.pools.text(this.pools.object(frame.type)?.description ?? frame.type) ?? "";
    const method = this.pools.object(methodRef);
    let id: number;
    if (!method) id = this.unknownFrame();
    else {
      const cls = this.pools.object(method.type);
      const className = (this.pools.text(cls?.name) ?? "").replace(/\//g, ".");
      const methodName = this.pools.text(method.name) ?? "(unknown)";
      const parameters = jfrParameters(this.pools.text(method.descriptor) ?? "");
      const pkg = this.pools.object(cls?.package);
      const module = this.pools.text(this.pools.object(pkg?.module)?.name) || (this.pools.text(pkg?.name) ?? "").replace(/\//g, ".") || null;
      const kind = FRAME_TYPE_KINDS[type] ?? "java";
      // async-profiler records native frames by their symbol alone, C++ ones mangled.
      if (className === "" && kind !== "java") id = this.builder.frame(demangledFrame({ name: methodName, module, kind }));
      else id = this.builder.frame({ name: `${className ? `${className}.` : ""}${methodName}${parameters === null ? "" : `(${parameters})`}`, module, kind });
    }
    if (cacheKey !== null) this.methods.set(cacheKey, id);
    return id;
  }

  track(ref: JfrValue | undefined): number | null {
    if (ref === undefined || ref === null) return null;
    const key = ref instanceof PoolRef ? ref.key : "inline";
    const known = this.threads.get(key);
    if (known !== undefined) return known;
    const thread = this.pools.object(ref);
    let id: number | null = null;
    if (thread) {
      const javaName = this.pools.text(thread.javaName);
      const osName = this.pools.text(thread.osName);
      const osId = typeof thread.osThreadId === "number" && thread.osThreadId !== 0 ? thread.osThreadId : null;
      const javaId = typeof thread.javaThreadId === "number" && thread.javaThreadId !== 0 ? thread.javaThreadId : null;
      id = this.builder.track({ threadId: osId ?? (javaId !== null ? `java:${javaId}` : null), threadName: javaName || osName || null, kind: "thread" });
    }
    this.threads.set(key, id);
    return id;
  }
}

interface ImportStats {
  samples: Map<string, number>;
  skipped: Map<string, number>;
  truncatedStacks: number;
  deepStacks: number;
  chunks: number;
  /** The first chunk's start (epoch ns): sample times are relative to it. */
  origin: bigint | null;
  start: bigint | null;
  end: bigint | null;
  versions: Set<string>;
  metadata: { last: MetadataCache | null };
}

/** Parses one whole chunk: metadata, constant pools, then its sample events in file order. */
async function readChunk(bytes: Uint8Array, base: number, builder: EvidenceBuilder, maxDepth: number, metrics: Map<string, number>, stats: ImportStats): Promise<void> {
  const reader = new ChunkReader(bytes, base);
  const header = readHeader(reader);
  reader.compressed = header.compressed;
  stats.versions.add(`${header.major}.${header.minor}`);
  const types = readMetadata(reader, header.metadataOffset, maxDepth, stats.metadata);
  const values = new ValueReader(reader, types, maxDepth);
  const pools = new ConstantPools();

  // Pass 1: frame every event, read the checkpoints, note the samples.
  const sampleAt: number[] = [];
  let sawConstantPool = false;
  for (let at = HEADER_BYTES; at < bytes.length; ) {
    reader.pos = at;
    reader.end = bytes.length;
    const size = reader.count("an event size");
    if (size === 0 || at + size > bytes.length) reader.fail(size === 0 ? "an event has size 0" : `an event of ${size} bytes runs past the end of the chunk`, at);
    reader.end = at + size;
    const typeId = reader.long() as number;
    if (typeId === CHECKPOINT_TYPE) {
      if (at === header.constantPoolOffset) sawConstantPool = true;
      readCheckpoint(reader, values, pools, header.major);
    } else if (typeId !== METADATA_TYPE) {
      const type = types.get(typeId);
      const name = type?.name ?? `(type ${typeId})`;
      if (type && SAMPLE_EVENTS[name]) sampleAt.push(at);
      else stats.skipped.set(name, (stats.skipped.get(name) ?? 0) + 1);
    }
    at += size;
  }
  if (!sawConstantPool) reader.fail(`the chunk header's constant pool offset ${header.constantPoolOffset} is not a checkpoint event`, 16);

  // Pass 2: the samples, now that every constant is known.
  const symbols = new ChunkSymbols(builder, pools, maxDepth, stats);
  stats.origin ??= header.startNanos;
  const chunkStart = Number(header.startNanos - stats.origin);
  const timeOf = (ticks: number) => chunkStart + ((ticks - header.startTicks) * 1e9) / header.ticksPerSecond;
  const chunkEnd = header.startNanos + BigInt(header.durationNanos);
  if (stats.start === null || header.startNanos < stats.start) stats.start = header.startNanos;
  if (stats.end === null || chunkEnd > stats.end) stats.end = chunkEnd;
  for (let i = 0; i < sampleAt.length; i++) {
    const at = sampleAt[i];
    reader.pos = at;
    reader.end = bytes.length;
    reader.end = at + reader.count("an event size");
    const type = types.get(reader.long() as number)!;
    const event = values.object(type, 0);
    const spec = SAMPLE_EVENTS[type.name];
    let metric = metrics.get(spec.metric);
    if (metric === undefined) metrics.set(spec.metric, (metric = builder.metric({ name: spec.metric, unit: spec.unit, kind: "sampled" })));
    const weight = spec.weight === null ? 1 : event[spec.weight];
    if (typeof weight !== "number" || weight <= 0) continue;
    const leaf = symbols.stack(event.stackTrace) ?? noStack(builder);
    const startTime = typeof event.startTime === "number" ? timeOf(event.startTime) : null;
    builder.sample(leaf, symbols.track(event[spec.thread] ?? event.eventThread), startTime, metric, weight);
    stats.samples.set(type.name, (stats.samples.get(type.name) ?? 0) + 1);
    if ((i + 1) % SAMPLES_PER_CHECKPOINT === 0) await builder.checkpoint();
  }
  if (pools.missing > 0) builder.limit("JFR_MISSING_CONSTANT", "Some samples referred to stack traces, methods or threads their chunk does not hold; those are drawn as (unknown).", pools.missing);
  stats.chunks++;
}

function noStack(builder: EvidenceBuilder): number {
  builder.limit("JFR_SAMPLE_WITHOUT_STACK", "Some samples had no stack trace; they are drawn under a frame named (no stack).");
  return builder.stack(null, builder.frame({ name: "(no stack)", kind: "other" }));
}

/** A chunk's bytes in one buffer once the input has them all; chunks arrive in the source's pieces. */
class ChunkAssembler {
  private pieces: Uint8Array[] = [];
  private length = 0;
  /** File offset of the first byte held. */
  offset = 0;

  add(piece: Uint8Array): void {
    this.pieces.push(piece);
    this.length += piece.length;
  }

  get held(): number {
    return this.length;
  }

  /** The first `count` bytes held, in one buffer (count ≤ held). */
  peek(count: number): Uint8Array {
    if (this.pieces[0].length < count) {
      const joined = new Uint8Array(this.length);
      let at = 0;
      for (const piece of this.pieces) {
        joined.set(piece, at);
        at += piece.length;
      }
      this.pieces = [joined];
    }
    return this.pieces[0].subarray(0, count);
  }

  drop(count: number): void {
    const first = this.pieces[0];
    this.pieces[0] = first.subarray(count);
    if (this.pieces[0].length === 0) this.pieces.shift();
    this.length -= count;
    this.offset += count;
  }
}

export const jfrImporter: FormatImporter = {
  id: "jfr",
  title: "Java Flight Recorder recording (.jfr)",
  extensions: ["jfr"],
  version: "1",

  sniff(head, _headText, fileName) {
    if (head.length < 8 || MAGIC.some((b, i) => head[i] !== b)) return 0;
    const major = (head[4] << 8) | head[5];
    if (major !== 2 && major !== 1) return 0;
    return /\.jfr$/i.test(fileName ?? "") ? 0.99 : 0.95;
  },

  async parse({ source, builder, limits }: ImportContext) {
    const metrics = new Map<string, number>();
    const stats: ImportStats = { samples: new Map(), skipped: new Map(), truncatedStacks: 0, deepStacks: 0, chunks: 0, origin: null, start: null, end: null, versions: new Set(), metadata: { last: null } };
    const input = new ChunkAssembler();
    let ended = false;
    const iterator = source.chunks()[Symbol.asyncIterator]();
    /** Reads until `count` bytes are held or the input ends; true when they are. */
    const fill = async (count: number) => {
      while (input.held < count && !ended) {
        const next = await iterator.next();
        if (next.done) ended = true;
        else if (next.value.length > 0) input.add(next.value.slice());
      }
      return input.held >= count;
    };
    while (await fill(1)) {
      if (!(await fill(HEADER_BYTES))) throw new EvidenceParseError(FORMAT, `the input ends inside a chunk header (${input.held} of ${HEADER_BYTES} bytes): truncated`, { offset: input.offset });
      const header = readHeader(new ChunkReader(input.peek(HEADER_BYTES), input.offset));
      if (!(await fill(header.size))) throw new EvidenceParseError(FORMAT, `the chunk's header says ${header.size} bytes but the input ends after ${input.held}: truncated`, { offset: input.offset + input.held });
      await readChunk(input.peek(header.size), input.offset, builder, limits.maxDepth, metrics, stats);
      input.drop(header.size);
      await builder.checkpoint();
    }
    if (stats.chunks === 0) throw new EvidenceParseError(FORMAT, "empty input: no chunk", { offset: 0 });
    if (stats.samples.size === 0) throw new EvidenceParseError(FORMAT, "the recording holds no execution, native-method or allocation samples (was it recorded with settings=profile or an event that samples?)", { offset: 0 });

    const skippedEvents = [...stats.skipped.values()].reduce((a, b) => a + b, 0);
    if (skippedEvents > 0) {
      const named = [...stats.skipped].sort((a, b) => b[1] - a[1]);
      const list = named.slice(0, SKIPPED_TYPES_NAMED).map(([name, count]) => `${name} ${count}`).join(", ");
      builder.limit("JFR_EVENTS_NOT_IMPORTED", `${skippedEvents} events of ${named.length} other types were not imported (${list}${named.length > SKIPPED_TYPES_NAMED ? ", …" : ""}): only execution, native-method and allocation samples are.`, skippedEvents);
    }
    if (stats.truncatedStacks > 0) builder.limit("JFR_STACK_TRUNCATED", "Some samples' stack traces were cut by the recorder at its stack depth (64 frames unless -XX:FlightRecorderOptions:stackdepth was set); their root-most frames are missing.", stats.truncatedStacks);
    if (stats.deepStacks > 0) builder.limit("STACK_TRUNCATED", `${stats.deepStacks} stack trace(s) were deeper than ${limits.maxDepth} frames; their leaf-most frames were dropped.`, stats.deepStacks);
    builder.limit("JFR_LINES_NOT_KEPT", "Frames are per method: the line numbers and frame types (interpreted, compiled, inlined) of the samples were not kept.");

    const meta = builder.metadata;
    meta.source_format = FORMAT;
    meta["jfr.version"] = [...stats.versions].join(",");
    meta["jfr.chunks"] = String(stats.chunks);
    meta["jfr.samples"] = [...stats.samples].map(([name, count]) => `${name}=${count}`).join(",");
    if (stats.origin !== null) {
      meta.time_origin_ns = String(stats.origin);
      meta.time_origin_clock = "unix";
    }
    if (stats.start !== null && stats.end !== null) meta.duration_ns = String(stats.end - stats.start);
  },
};
