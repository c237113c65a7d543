/**
 * Jaeger traces as JSON: the query service's HTTP API answer (and the UI's "Download JSON"),
 * `{"data": [{traceID, spans, processes}, …]}`, or one such trace object alone. Streamed trace by
 * trace. Each span is one span: name = operationName, category = its span.kind tag (else "span"),
 * status error when tagged error=true (or otel.status_code ERROR), ok for otel.status_code OK,
 * else unset; args = {jaeger.trace_id, jaeger.span_id, its tags, jaeger.logs} (bounded JSON).
 * Each service (processes[processID].serviceName) is one track. Times are µs since the epoch,
 * made ns from the earliest start. The first CHILD_OF reference (or the old parentSpanID) → the
 * parent and a `child` edge; FOLLOWS_FROM references (and further CHILD_OFs) → `follows_from`
 * edges (referenced → this), when the referenced span is in the file.
 */
import type { EvidenceBuilder } from "../evidence/builder";
import { FIELD_LIMITS } from "../evidence/schema";
import { parseJsonStream, type JsonPath, type JsonSelection } from "../io/json-stream";
import { EvidenceParseError } from "./errors";
import { boundedSpanArgs, DraftedSpans, withRoom } from "./span-tree";
import type { FormatImporter } from "./types";

const FORMAT = "jaeger-json";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const id = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** Jaeger tags [{key, type, value}] as an object. */
function tagsOf(tags: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const tag of list(tags)) if (isRecord(tag) && typeof tag.key === "string") out[tag.key] = tag.value ?? null;
  return out;
}


/** Tags and logs beyond the args bound: logs go first. */
const JAEGER_ARGS = {
  listKey: "jaeger.logs",
  code: "JAEGER_ARGS_TRUNCATED",
  message: `Some spans' tags and logs exceeded ${FIELD_LIMITS.args} characters of JSON; logs, long values or later tags were left out.`,
};

function statusOf(tags: Record<string, unknown>): string {
  if (tags.error === true || tags.error === "true") return "error";
  const otel = typeof tags["otel.status_code"] === "string" ? tags["otel.status_code"].toUpperCase() : null;
  if (otel === "ERROR") return "error";
  if (otel === "OK") return "ok";
  return "unset";
}

class JaegerReader {
  /** Spans as read: their text drafted at once, their ids kept until the whole input is seen (references may point forward). */
  readonly spans: DraftedSpans;
  /** Per span, its start and duration (µs since the epoch). */
  private times = new Float64Array(2048);
  private origin = Infinity;
  traces = 0;
  constructor(private readonly builder: EvidenceBuilder) {
    this.spans = new DraftedSpans(builder);
  }

  /** One trace: its processes and spans (spans may name their process inline, as `process`). */
  trace(trace: Record<string, unknown>, spans: unknown[], offset: number): void {
    this.traces++;
    const processes = isRecord(trace.processes) ? trace.processes : {};
    for (const span of spans) {
      if (!isRecord(span)) throw new EvidenceParseError(FORMAT, "a span is not an object", { offset });
      this.span(span, processes, id(trace.traceID));
    }
  }

  private span(span: Record<string, unknown>, processes: Record<string, unknown>, traceId: string | null): void {
    const { builder } = this;
    const startUs = span.startTime;
    const durUs = span.duration ?? 0;
    if (typeof startUs !== "number" || !Number.isFinite(startUs) || startUs < 0) {
      builder.limit("JAEGER_SPAN_INVALID", "Some spans had no valid startTime and were skipped.");
      return;
    }
    let duration = typeof durUs === "number" && Number.isFinite(durUs) ? durUs : 0;
    if (duration < 0) {
      builder.limit("JAEGER_NEGATIVE_DURATION", "Some spans had a negative duration; they were given a duration of 0.");
      duration = 0;
    }
    const process = isRecord(span.process) ? span.process : typeof span.processID === "string" && isRecord(processes[span.processID]) ? (processes[span.processID] as Record<string, unknown>) : null;
    if (!process) builder.limit("JAEGER_PROCESS_MISSING", "Some spans name no process of their trace; they are on the track unknown_service.");
    const service = process && typeof process.serviceName === "string" && process.serviceName !== "" ? process.serviceName : "unknown_service";
    const trackId = builder.track({ processId: service, processName: service, kind: "service" });
    const trace = id(span.traceID) ?? traceId ?? "";
    const spanId = id(span.spanID);
    const tags = tagsOf(span.tags);
    const args: Record<string, unknown> = { "jaeger.trace_id": trace, "jaeger.span_id": spanId, ...tags };
    const logs = list(span.logs).filter(isRecord);
    if (logs.length > 0) args["jaeger.logs"] = logs.map((log) => ({ at_ns: typeof log.timestamp === "number" ? (log.timestamp - startUs) * 1000 : null, fields: tagsOf(log.fields) }));
    let parentKey: string | null = null;
    const follows: string[] = [];
    const refs = list(span.references).filter(isRecord);
    if (refs.length === 0 && id(span.parentSpanID)) parentKey = `${trace}/${span.parentSpanID as string}`;
    for (const ref of refs) {
      const refSpan = id(ref.spanID);
      if (!refSpan) continue;
      const key = `${id(ref.traceID) ?? trace}/${refSpan}`;
      if (ref.refType === "CHILD_OF" && parentKey === null) parentKey = key;
      else follows.push(key);
    }
    const index = this.spans.add({
      key: spanId ? `${trace}/${spanId}` : null,
      parentKey,
      refs: follows,
      trackId,
      name: typeof span.operationName === "string" && span.operationName !== "" ? span.operationName : "(unnamed span)",
      category: typeof tags["span.kind"] === "string" ? tags["span.kind"] : "span",
      status: statusOf(tags),
      args: boundedSpanArgs(builder, args, JAEGER_ARGS),
    });
    this.times = withRoom(this.times, 2 * index + 1);
    this.times[2 * index] = startUs;
    this.times[2 * index + 1] = duration;
    if (startUs < this.origin) this.origin = startUs;
  }

  async write(): Promise<void> {
    const { builder, times, origin } = this;
    builder.metadata.time_origin_unix_nano = (BigInt(Math.round(origin)) * 1000n).toString();
    await this.spans.place(
      { prefix: "JAEGER", refersTo: "references" },
      (i) => ({ startNs: Math.round((times[2 * i] - origin) * 1000), durNs: Math.round(times[2 * i + 1] * 1000) }),
      (from, i, spanIds) => {
        if (from === undefined) builder.limit("JAEGER_REFERENCE_MISSING", "Some spans reference spans not in the file; those references were left out.");
        else if (from !== i) builder.edge(spanIds[from], spanIds[i], "follows_from");
      },
    );
  }
}

function select(path: JsonPath): JsonSelection {
  if (path.length === 0) return "stream";
  const top = path[0];
  if (top === "data" || top === "spans") return path.length === 1 ? "stream" : "materialize";
  if (top === "processes" || top === "traceID") return "materialize";
  return "skip";
}

export const jaegerJsonImporter: FormatImporter = {
  id: "jaeger-json",
  title: "Jaeger traces (JSON, as the query API and UI write them)",
  extensions: ["json"],
  version: "1",

  sniff(_head, headText) {
    const text = headText.replace(/^\uFEFF/, "").trimStart();
    if (!text.startsWith("{")) return 0;
    if (/^\{\s*"data"\s*:\s*\[\s*(\{\s*"traceID"\s*:|\])/.test(text)) return 0.95;
    if (/"traceID"\s*:/.test(text) && /"spanID"\s*:/.test(text) && /"operationName"\s*:/.test(text)) return 0.9;
    return 0;
  },

  async parse({ source, builder, limits }) {
    const reader = new JaegerReader(builder);
    // A lone trace: its spans may come before its processes, so they wait for the end.
    const lone: { spans: unknown[]; trace: Record<string, unknown>; seen: boolean } = { spans: [], trace: {}, seen: false };
    let topKeys = 0;
    await parseJsonStream(
      source.chunks(),
      {
        format: FORMAT,
        maxDepth: limits.maxDepth,
        select: (path) => {
          if (path.length === 1) {
            if (typeof path[0] === "number") throw new EvidenceParseError(FORMAT, "expected an object with data (or one trace), not an array", { offset: 0 });
            topKeys++;
          }
          return select(path);
        },
        onValue: (path, value, offset) => {
          if (path.length === 0) throw new EvidenceParseError(FORMAT, "expected an object with data (or one trace)", { offset });
          if (path[0] === "data") {
            if (path.length === 1) throw new EvidenceParseError(FORMAT, "data is not an array", { offset });
            if (!isRecord(value)) throw new EvidenceParseError(FORMAT, "a trace in data is not an object", { offset });
            reader.trace(value, list(value.spans), offset);
          } else if (path[0] === "spans") {
            if (path.length === 1) throw new EvidenceParseError(FORMAT, "spans is not an array", { offset });
            lone.seen = true;
            lone.spans.push(value);
          } else {
            lone.trace[path[0] as string] = value;
          }
        },
      },
      () => builder.checkpoint(),
    );
    if (topKeys === 0) throw new EvidenceParseError(FORMAT, "empty input", { offset: 0 });
    if (lone.seen) reader.trace(lone.trace, lone.spans, 0);
    if (reader.spans.length === 0) throw new EvidenceParseError(FORMAT, "no spans in the input", { offset: 0 });
    await reader.write();
  },
};
