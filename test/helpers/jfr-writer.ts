// Writes small JFR 2.x chunks from the format as the JDK's reader takes it (a 68-byte header; events
// of `size, type id, fields` in LEB128 integers; one metadata event; checkpoint events holding the
// constant pools), so tests can state a recording and break it on purpose.

export type Bytes = number[];

/** LEB128 as JFR writes it: 7 bits a byte, low first; the ninth byte of a 64-bit value is whole. */
export function varint(value: number | bigint): Bytes {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  for (let i = 0; i < 8; i++) {
    if (v < 0x80n) return [...out, Number(v)];
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  return [...out, Number(v & 0xffn)];
}

/** A string as UTF-8 (encoding 3), or null (0). */
export function jstring(text: string | null): Bytes {
  if (text === null) return [0];
  const bytes = [...new TextEncoder().encode(text)];
  return [3, ...varint(bytes.length), ...bytes];
}

function bigEndian(value: number | bigint, bytes: number): Bytes {
  let v = BigInt.asUintN(bytes * 8, BigInt(value));
  const out: Bytes = [];
  for (let i = 0; i < bytes; i++) {
    out.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  return out;
}

export interface FieldSpec {
  name: string;
  type: number;
  constantPool?: boolean;
  array?: boolean;
}
export interface ClassSpec {
  id: number;
  name: string;
  fields?: FieldSpec[];
}

/** The classes of a minimal recording of execution samples, with the JDK's names. */
export const SAMPLE_CLASSES: ClassSpec[] = [
  { id: 4, name: "long" },
  { id: 5, name: "int" },
  { id: 6, name: "boolean" },
  { id: 7, name: "float" },
  { id: 20, name: "java.lang.String" },
  { id: 21, name: "java.lang.Thread", fields: [{ name: "osName", type: 20 }, { name: "osThreadId", type: 4 }, { name: "javaName", type: 20 }, { name: "javaThreadId", type: 4 }] },
  { id: 22, name: "jdk.types.Symbol", fields: [{ name: "string", type: 20 }] },
  { id: 23, name: "jdk.types.Package", fields: [{ name: "name", type: 22, constantPool: true }] },
  { id: 24, name: "java.lang.Class", fields: [{ name: "name", type: 22, constantPool: true }, { name: "package", type: 23, constantPool: true }] },
  { id: 25, name: "jdk.types.Method", fields: [{ name: "type", type: 24, constantPool: true }, { name: "name", type: 22, constantPool: true }, { name: "descriptor", type: 22, constantPool: true }] },
  { id: 26, name: "jdk.types.FrameType", fields: [{ name: "description", type: 20 }] },
  { id: 27, name: "jdk.types.StackFrame", fields: [{ name: "method", type: 25, constantPool: true }, { name: "lineNumber", type: 5 }, { name: "type", type: 26, constantPool: true }] },
  { id: 28, name: "jdk.types.StackTrace", fields: [{ name: "truncated", type: 6 }, { name: "frames", type: 27, array: true }] },
  { id: 100, name: "jdk.ExecutionSample", fields: [{ name: "startTime", type: 4 }, { name: "sampledThread", type: 21, constantPool: true }, { name: "stackTrace", type: 28, constantPool: true }] },
  { id: 101, name: "jdk.CPULoad", fields: [{ name: "startTime", type: 4 }, { name: "jvmUser", type: 7 }] },
];

/** The metadata event's body after its type id: times, id, string table and element tree. */
export function metadataEvent(classes: ClassSpec[]): Bytes {
  const strings: string[] = [];
  const s = (text: string) => {
    let i = strings.indexOf(text);
    if (i < 0) i = strings.push(text) - 1;
    return varint(i);
  };
  const element = (name: string, attributes: [string, string][], children: Bytes[]): Bytes => [
    ...s(name),
    ...varint(attributes.length),
    ...attributes.flatMap(([k, v]) => [...s(k), ...s(v)]),
    ...varint(children.length),
    ...children.flat(),
  ];
  const classElements = classes.map((c) =>
    element(
      "class",
      [
        ["name", c.name],
        ["id", String(c.id)],
      ],
      (c.fields ?? []).map((f) => element("field", [["name", f.name], ["class", String(f.type)], ...(f.constantPool ? [["constantPool", "true"] as [string, string]] : []), ...(f.array ? [["dimension", "1"] as [string, string]] : [])], [])),
    ),
  );
  const tree = element("root", [], [element("metadata", [], classElements), element("region", [["gmtOffset", "0"]], [])]);
  return [...varint(0), ...varint(0), ...varint(1), ...varint(strings.length), ...strings.flatMap((t) => jstring(t)), ...tree];
}

/** A checkpoint event's body after its type id: pools of [type id, [key, value bytes][]]. */
export function checkpointEvent(pools: [number, [number, Bytes][]][], delta = 0): Bytes {
  return [...varint(0), ...varint(0), ...varint(delta), 0, ...varint(pools.length), ...pools.flatMap(([type, entries]) => [...varint(type), ...varint(entries.length), ...entries.flatMap(([key, value]) => [...varint(key), ...value])])];
}

/** One event: its size (counting itself, written on 4 bytes as the JDK pads it), type id and body. */
export function event(typeId: number, body: Bytes): Bytes {
  const rest = [...varint(typeId), ...body];
  const size = rest.length + 4;
  const padded = [(size & 0x7f) | 0x80, ((size >> 7) & 0x7f) | 0x80, ((size >> 14) & 0x7f) | 0x80, (size >> 21) & 0x7f];
  return [...padded, ...rest];
}

export interface ChunkSpec {
  classes?: ClassSpec[];
  /** Events before the checkpoint, already framed by event(). */
  events: Bytes[];
  pools: [number, [number, Bytes][]][];
  startNanos?: bigint;
  startTicks?: number;
  ticksPerSecond?: number;
  durationNanos?: number;
}

/** A whole chunk: header, the events, then the checkpoint (the header points at it) and the metadata. */
export function chunk(spec: ChunkSpec): Uint8Array {
  const body: Bytes = spec.events.flat();
  const checkpointAt = 68 + body.length;
  const checkpoint = event(1, checkpointEvent(spec.pools));
  const metadataAt = checkpointAt + checkpoint.length;
  const metadata = event(0, metadataEvent(spec.classes ?? SAMPLE_CLASSES));
  const size = metadataAt + metadata.length;
  const header = [
    0x46, 0x4c, 0x52, 0x00,
    ...bigEndian(2, 2), ...bigEndian(1, 2),
    ...bigEndian(size, 8),
    ...bigEndian(checkpointAt, 8),
    ...bigEndian(metadataAt, 8),
    ...bigEndian(spec.startNanos ?? 1_700_000_000_000_000_000n, 8),
    ...bigEndian(spec.durationNanos ?? 1_000_000_000, 8),
    ...bigEndian(spec.startTicks ?? 1000, 8),
    ...bigEndian(spec.ticksPerSecond ?? 1_000_000, 8),
    0, 0, 0, 3,
  ];
  return new Uint8Array([...header, ...body, ...checkpoint, ...metadata]);
}

/** Overwrites the big-endian 64-bit header field at `offset` (8: size, 16: constant pool, 24: metadata). */
export function withHeaderField(bytes: Uint8Array, offset: number, value: number): Uint8Array {
  const out = bytes.slice();
  out.set(bigEndian(value, 8), offset);
  return out;
}
