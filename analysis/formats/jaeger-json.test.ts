// A Jaeger query-API answer written from its public JSON model (traceID, spans with references,
// startTime and duration in µs, processes by id): a checkout across three services with a failed
// call and an asynchronous receipt that follows from the request.
import { describe, expect, it } from "vitest";
import { agentTraceFixture, limitationCounts } from "../../test/helpers/tool-spans";
import { parseErrorOf } from "../../test/helpers/evidence-rows";
import { headText } from "../io/text";
import { detectFormat } from "./index";
import { jaegerJsonImporter } from "./jaeger-json";
import { importToMemory } from "./run";

const CHECKOUT = agentTraceFixture("jaeger-checkout.json");

const edges = (result: Awaited<ReturnType<typeof importToMemory>>) => {
  const name = new Map(result.tables.spans.map((s) => [s.span_id, JSON.parse(s.args as string)["jaeger.span_id"]]));
  return result.tables.edges.map((e) => `${e.kind}: ${name.get(e.from_span_id)} → ${name.get(e.to_span_id)}`).sort();
};

describe("Jaeger JSON importer", () => {
  it("reads spans on one track per service, CHILD_OF as parent and child edge, FOLLOWS_FROM as follows_from", async () => {
    const result = await importToMemory(jaegerJsonImporter, CHECKOUT, { chunkSize: 300 });
    expect(result.tables.spans.map((s) => [s.name, s.category, s.track_id, s.start_ns, s.dur_ns, s.depth, s.status])).toEqual([
      ["HTTP GET /checkout", "server", 0, 0, 120_000_000, 0, "unset"],
      ["GetCart", "client", 0, 5_000_000, 30_000_000, 1, "unset"],
      ["GetCart", "server", 1, 8_000_000, 20_000_000, 0, "unset"],
      ["redis GET", "client", 1, 10_000_000, 5_000_000, 1, "unset"],
      ["Charge", "client", 0, 40_000_000, 60_000_000, 1, "error"],
      ["Charge", "server", 2, 41_000_000, 10_000_000, 0, "error"],
      ["SendReceipt", "consumer", 2, 130_000_000, 15_000_000, 0, "unset"],
    ]);
    expect(result.tables.tracks.map((t) => [t.process_name, t.kind])).toEqual([
      ["frontend", "service"],
      ["cartservice", "service"],
      ["paymentservice", "service"],
    ]);
    expect(result.summary.rows).toMatchObject({ spans: 7, edges: 6, tracks: 3 });
    expect(edges(result)).toEqual(["child: a1 → b2", "child: a1 → e5", "child: b2 → c3", "child: c3 → d4", "child: e5 → f6", "follows_from: a1 → g7"]);
    const charge = JSON.parse(result.tables.spans[4].args as string);
    expect(charge).toMatchObject({ "jaeger.trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", error: true, "jaeger.logs": [{ at_ns: 59_000_000, fields: { event: "error", message: "card declined" } }] });
    expect(result.summary.metadata.time_origin_unix_nano).toBe("1752485400000000000");
  });

  it("reads one trace object alone, processes after its spans, and keeps spans whose parent is missing as roots", async () => {
    const trace = {
      traceID: "t",
      spans: [
        { traceID: "t", spanID: "x", operationName: "work", references: [{ refType: "CHILD_OF", traceID: "t", spanID: "gone" }], startTime: 1000, duration: 10, processID: "p1" },
        { traceID: "t", spanID: "y", operationName: "work", parentSpanID: "x", startTime: 1002, duration: 5, processID: "p1" },
      ],
      processes: { p1: { serviceName: "worker" } },
    };
    const result = await importToMemory(jaegerJsonImporter, JSON.stringify(trace));
    expect(result.tables.spans.map((s) => [s.parent_span_id, s.depth, s.start_ns])).toEqual([
      [null, 0, 0],
      [0, 1, 2000],
    ]);
    expect(result.tables.tracks.map((t) => t.process_name)).toEqual(["worker"]);
    expect(limitationCounts(result)).toMatchObject({ JAEGER_PARENT_MISSING: 1 });
  });

  it("fails on malformed input with a byte offset", async () => {
    expect((await parseErrorOf(jaegerJsonImporter, '{"data": [{"traceID": "t", "spans": [}]}')).at.offset).toBeGreaterThan(0);
    await parseErrorOf(jaegerJsonImporter, '{"data": {"traceID": "t"}}');
    await parseErrorOf(jaegerJsonImporter, '{"data": []}');
  });

  it("is detected as Jaeger, and does not claim OTLP/JSON", () => {
    expect(detectFormat(CHECKOUT, headText(CHECKOUT), "trace.json")?.id).toBe("jaeger-json");
    const otlp = new TextEncoder().encode('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","spanId":"b","name":"x"}]}]}]}');
    expect(jaegerJsonImporter.sniff(otlp, headText(otlp), "x.json")).toBe(0);
    expect(detectFormat(otlp, headText(otlp), "x.json")?.id).toBe("otlp-json");
  });
});
