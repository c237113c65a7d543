/**
 * OpenTelemetry traces in OTLP/JSON: one ExportTraceServiceRequest, or one per line (NDJSON, as the
 * Collector's file exporter writes). Each service (resource attribute service.name) is one track;
 * each span one span (category = span kind, status unset/ok/error, attributes as args), times in ns
 * from the earliest start (kept as metadata time_origin_unix_nano). parentSpanId → a `child` edge,
 * links → `follows_from` edges (linked → this), when the other span is in the file.
 * OpenTelemetry GenAI tool spans (gen_ai.operation.name = execute_tool) are tool calls, stored as
 * every importer stores them (tool-calls.ts): name = gen_ai.tool.name, category "tool", status
 * error when error.type is set, args also holding call_id (gen_ai.tool.call.id), side_effect
 * unknown, timing recorded, arguments (gen_ai.tool.call.arguments as JSON text), result, and the
 * span kind as otel.span_kind.
 */
import type { EvidenceBuilder } from "../evidence/builder";
import { int64 } from "../evidence/int64";
import { FIELD_LIMITS } from "../evidence/schema";
import { concatBytes } from "../io/bytes";
import { utf8Chunks } from "../io/text";
import { EvidenceParseError, InputBoundError } from "./errors";
import { boundedSpanArgs, DraftedSpans, withRoom } from "./span-tree";
import { MAX_JSON_DOCUMENT_BYTES, parseJsonDocument } from "../io/json-documents";
import type { FormatImporter, ImportContext } from "./types";
import { jsonText, resultText, SIDE_EFFECT_UNKNOWN_MESSAGE } from "./tool-calls";

const FORMAT = "otlp-json";
const MAX_VALUE_DEPTH = 16;

/** One top-level JSON value of the input: its bytes and where it starts. */
interface JsonDocument {
  bytes: Uint8Array;
  offset: number;
  line: number;
}

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * Splits the input into its top-level JSON objects (one document, NDJSON or concatenated) by
 * tracking brackets outside strings, so each request is parsed alone and memory stays per request.
 */
export async function* jsonDocuments(format: string, chunks: AsyncIterable<Uint8Array>, maxDocumentBytes = MAX_JSON_DOCUMENT_BYTES): AsyncGenerator<JsonDocument> {
  let end = 0;
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: Uint8Array[] = [];
  let partBytes = 0;
  let documentOffset = 0;
  let documentLine = 1;
  for await (const { bytes: chunk, offset } of utf8Chunks(chunks)) {
    end = offset + chunk.length;
    let start = depth > 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (depth === 0) {
        if (isWhitespace(byte)) {
          if (byte === 0x0a) line++;
          continue;
        }
        if (byte !== 0x7b && byte !== 0x5b) throw new EvidenceParseError(format, "expected a JSON object", { offset: offset + i, line });
        depth = 1;
        start = i;
        documentOffset = offset + i;
        documentLine = line;
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === 0x5c) escaped = true;
        else if (byte === 0x22) inString = false;
        else if (byte === 0x0a) line++;
        continue;
      }
      if (byte === 0x22) inString = true;
      else if (byte === 0x7b || byte === 0x5b) depth++;
      else if (byte === 0x7d || byte === 0x5d) {
        depth--;
        if (depth === 0) {
          parts.push(chunk.subarray(start, i + 1));
          const bytes = parts.length === 1 ? parts[0] : concatBytes(parts);
          parts = [];
          partBytes = 0;
          start = -1;
          yield { bytes, offset: documentOffset, line: documentLine };
        }
      } else if (byte === 0x0a) line++;
    }
    if (depth > 0) {
      // Copied: a document spanning chunks must not alias a buffer its producer may reuse.
      const part = chunk.slice(start);
      partBytes += part.length;
      if (partBytes > maxDocumentBytes) throw new InputBoundError("size", maxDocumentBytes, `One JSON document is larger than ${maxDocumentBytes} bytes.`);
      parts.push(part);
    }
  }
  if (depth > 0) throw new EvidenceParseError(format, "truncated: the input ends inside a JSON value", { offset: end, line });
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** An OTLP AnyValue as plain JSON: {stringValue: "a"} → "a", int64 strings → numbers when exact. */
function unwrapValue(value: unknown, depth = 0): unknown {
  if (!isRecord(value)) return null;
  if (depth > MAX_VALUE_DEPTH) return "[nested too deep]";
  if ("stringValue" in value) return value.stringValue;
  if ("boolValue" in value) return value.boolValue;
  if ("intValue" in value) {
    const n = Number(value.intValue);
    return Number.isSafeInteger(n) ? n : String(value.intValue);
  }
  if ("doubleValue" in value) return typeof value.doubleValue === "number" ? value.doubleValue : String(value.doubleValue);
  if ("bytesValue" in value) return value.bytesValue;
  if ("arrayValue" in value) return list(isRecord(value.arrayValue) ? value.arrayValue.values : null).map((v) => unwrapValue(v, depth + 1));
  if ("kvlistValue" in value) return attributesOf(isRecord(value.kvlistValue) ? value.kvlistValue.values : null, depth + 1);
  return null;
}

function attributesOf(attributes: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const entry of list(attributes)) {
    if (isRecord(entry) && typeof entry.key === "string") out[entry.key] = unwrapValue(entry.value, depth);
  }
  return out;
}

/** The largest fixed64, the type OTLP gives nanosecond timestamps: a longer value is no timestamp. */
const MAX_FIXED64 = 2n ** 64n - 1n;

/** Nanosecond timestamps are decimal strings beyond 2^53, so they stay BigInt until made relative. */
function unixNano(value: unknown): bigint | null {
  const nano = typeof value === "string" && /^\d{1,20}$/.test(value) ? BigInt(value) : typeof value === "number" && Number.isFinite(value) && value >= 0 ? BigInt(Math.trunc(value)) : null;
  return nano !== null && nano <= MAX_FIXED64 ? nano : null;
}

const SPAN_KINDS = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
const STATUS_CODES = ["unset", "ok", "error"];

/** OTLP/JSON writes enums as integers; some encoders write their names (SPAN_KIND_SERVER). */
function enumName(value: unknown, names: string[], prefix: string): string {
  if (typeof value === "number" && names[value] !== undefined) return names[value];
  if (typeof value === "string") {
    const bare = value.startsWith(prefix) ? value.slice(prefix.length) : value;
    const found = names.find((n) => n.toLowerCase() === bare.toLowerCase());
    if (found) return found;
  }
  return names[0];
}


/** The tool-call keys of a GenAI execute_tool span's args (see the file comment). */
function toolCallArgs(attributes: Record<string, unknown>, kind: string): Record<string, unknown> {
  const callId = attributes["gen_ai.tool.call.id"];
  const args: Record<string, unknown> = { call_id: typeof callId === "string" || typeof callId === "number" ? String(callId) : null, side_effect: "unknown", timing: "recorded", "otel.span_kind": kind };
  const argumentsText = jsonText(attributes["gen_ai.tool.call.arguments"]);
  const result = resultText(attributes["gen_ai.tool.call.result"]);
  if (argumentsText !== null) args.arguments = argumentsText;
  if (result !== null) args.result = result;
  return args;
}

/** Spans as read: their text drafted at once, their ids and times kept until the whole input is seen (parents and linked spans may come later). */
class OtlpSpans {
  readonly drafted: DraftedSpans;
  /** Per span, its start and end (unix ns; fixed64 values need all 64 bits). */
  private times = new BigUint64Array(2048);
  origin: bigint | null = null;
  constructor(builder: EvidenceBuilder) {
    this.drafted = new DraftedSpans(builder);
  }
  add(span: Parameters<DraftedSpans["add"]>[0], start: bigint, end: bigint): void {
    const index = this.drafted.add(span);
    this.times = withRoom(this.times, 2 * index + 1);
    this.times[2 * index] = start;
    this.times[2 * index + 1] = end;
    if (this.origin === null || start < this.origin) this.origin = start;
  }
  start(index: number): bigint {
    return this.times[2 * index];
  }
  end(index: number): bigint {
    return this.times[2 * index + 1];
  }
}

const spanKey = (traceId: unknown, spanId: unknown): string | null =>
  typeof spanId === "string" && spanId !== "" ? `${typeof traceId === "string" ? traceId : ""}/${spanId}` : null;

function readRequest(builder: EvidenceBuilder, request: Record<string, unknown>, spans: OtlpSpans): void {
  for (const resourceSpans of list(request.resourceSpans)) {
    if (!isRecord(resourceSpans)) continue;
    const resource = attributesOf(isRecord(resourceSpans.resource) ? resourceSpans.resource.attributes : null);
    const service = typeof resource["service.name"] === "string" && resource["service.name"] !== "" ? resource["service.name"] : "unknown_service";
    const trackId = builder.track({ processId: service, processName: service, kind: "service" });
    // instrumentationLibrarySpans is the pre-1.0 name of scopeSpans.
    for (const scopeSpans of [...list(resourceSpans.scopeSpans), ...list(resourceSpans.instrumentationLibrarySpans)]) {
      if (!isRecord(scopeSpans)) continue;
      const scope = isRecord(scopeSpans.scope) ? scopeSpans.scope : isRecord(scopeSpans.instrumentationLibrary) ? scopeSpans.instrumentationLibrary : {};
      for (const span of list(scopeSpans.spans)) {
        if (!isRecord(span)) continue;
        const start = unixNano(span.startTimeUnixNano);
        if (start === null) {
          builder.limit("OTLP_SPAN_INVALID", "Some spans had no valid startTimeUnixNano and were skipped.");
          continue;
        }
        let end = unixNano(span.endTimeUnixNano);
        if (end === null) {
          if (span.endTimeUnixNano !== undefined) builder.limit("OTLP_END_INVALID", "Some spans had an endTimeUnixNano that is no timestamp; they were given a duration of 0.");
          end = start;
        }
        if (end < start) {
          builder.limit("OTLP_NEGATIVE_DURATION", "Some spans ended before they started; they were given a duration of 0.");
          end = start;
        }
        const status = isRecord(span.status) ? span.status : {};
        const args: Record<string, unknown> = { "otel.trace_id": span.traceId ?? null, "otel.span_id": span.spanId ?? null };
        if (typeof scope.name === "string" && scope.name !== "") args["otel.scope.name"] = scope.name;
        if (typeof scope.version === "string" && scope.version !== "") args["otel.scope.version"] = scope.version;
        const attributes = attributesOf(span.attributes);
        const tool = attributes["gen_ai.operation.name"] === "execute_tool";
        if (tool) {
          Object.assign(args, toolCallArgs(attributes, enumName(span.kind, SPAN_KINDS, "SPAN_KIND_")));
          builder.limit("TOOL_SIDE_EFFECT_UNKNOWN", SIDE_EFFECT_UNKNOWN_MESSAGE);
        }
        Object.assign(args, attributes);
        if (typeof status.message === "string" && status.message !== "") args["otel.status_description"] = status.message;
        const events = list(span.events).filter(isRecord);
        if (events.length > 0) {
          args["otel.events"] = events.map((event) => {
            const at = unixNano(event.timeUnixNano);
            return { name: event.name ?? null, at_ns: at === null ? null : Number(at - start), attributes: attributesOf(event.attributes) };
          });
        }
        const links: string[] = [];
        for (const link of list(span.links)) {
          const key = isRecord(link) ? spanKey(link.traceId, link.spanId) : null;
          if (key) links.push(key);
        }
        const parentSpanId = span.parentSpanId;
        spans.add({
          key: spanKey(span.traceId, span.spanId),
          parentKey: typeof parentSpanId === "string" && parentSpanId !== "" ? spanKey(span.traceId, parentSpanId) : null,
          refs: links,
          trackId,
          name: tool && typeof attributes["gen_ai.tool.name"] === "string" && attributes["gen_ai.tool.name"] !== "" ? attributes["gen_ai.tool.name"] : typeof span.name === "string" ? span.name : "(unnamed span)",
          category: tool ? "tool" : enumName(span.kind, SPAN_KINDS, "SPAN_KIND_"),
          status: tool && attributes["error.type"] !== undefined && attributes["error.type"] !== null ? "error" : enumName(status.code, STATUS_CODES, "STATUS_CODE_"),
          args: boundedSpanArgs(builder, args, OTLP_ARGS),
        }, start, end);
      }
    }
  }
}


/** Attributes and events beyond the args bound: events go first. */
const OTLP_ARGS = {
  listKey: "otel.events",
  code: "OTLP_ARGS_TRUNCATED",
  message: `Some spans' attributes and events exceeded ${FIELD_LIMITS.args} characters of JSON; events, long values or later attributes were left out.`,
};

export const otlpJsonImporter: FormatImporter = {
  id: "otlp-json",
  title: "OpenTelemetry traces (OTLP/JSON)",
  extensions: ["otlp.json", "json", "jsonl", "ndjson"],
  version: "3",

  sniff(_head, headText, fileName) {
    try {
      const text = headText.replace(/^\uFEFF/, "").trimStart();
      if (!text.startsWith("{")) return 0;
      if (!text.includes('"resourceSpans"')) return 0;
      if (text.includes('"scopeSpans"') || text.includes('"instrumentationLibrarySpans"')) return 0.95;
      return /\.(otlp\.json|jsonl|ndjson)$/i.test(fileName ?? "") ? 0.9 : 0.8;
    } catch {
      return 0;
    }
  },

  async parse({ source, builder }: ImportContext) {
    const spans = new OtlpSpans(builder);
    let documents = 0;
    for await (const document of jsonDocuments(FORMAT, source.chunks())) {
      const request = parseJsonDocument(FORMAT, document.bytes, document.offset);
      if (!isRecord(request)) throw new EvidenceParseError(FORMAT, "expected an ExportTraceServiceRequest object", { offset: document.offset, line: document.line });
      if (!("resourceSpans" in request)) {
        if (documents === 0) throw new EvidenceParseError(FORMAT, "not an OTLP trace request: no resourceSpans", { offset: document.offset, line: document.line });
        builder.limit("OTLP_NOT_TRACES", "Some lines were not trace requests (no resourceSpans) and were skipped.");
      }
      documents++;
      readRequest(builder, request, spans);
      await builder.checkpoint();
    }
    if (documents === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0, line: 1 });
    if (spans.origin === null) throw new EvidenceParseError(FORMAT, "no spans in the input", { offset: 0 });
    const origin = spans.origin;
    builder.metadata.time_origin_unix_nano = origin.toString();
    await spans.drafted.place(
      { prefix: "OTLP", refersTo: "parents and links" },
      (i) => ({ startNs: int64(spans.start(i) - origin, FORMAT, "startTimeUnixNano"), durNs: int64(spans.end(i) - spans.start(i), FORMAT, "endTimeUnixNano") }),
      (linked, i, spanIds) => {
        if (linked === undefined) builder.limit("OTLP_LINK_MISSING", "Some span links point to spans not in the file; those links were left out.");
        else builder.edge(spanIds[linked], spanIds[i], "follows_from");
      },
    );
  },
};
