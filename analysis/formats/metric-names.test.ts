import { describe, expect, it } from "vitest";
import { lowerSnake, splitCamelCase } from "./metric-names";
import { perfScriptImporter } from "./perf-script";
import { pprofMetric } from "./pprof";
import { importToMemory } from "./run";

describe("metric names", () => {
  it("lower_snake_cases format-native names, with the caller's fallback when nothing is left", () => {
    expect(lowerSnake("cpu-clock", "event")).toBe("cpu_clock");
    expect(lowerSnake("L1-dcache-load-misses", "event")).toBe("l1_dcache_load_misses");
    expect(lowerSnake("sched:sched_switch", "event")).toBe("sched_sched_switch");
    expect(lowerSnake("--", "event")).toBe("event");
    expect(lowerSnake("", "value")).toBe("value");
  });

  it("splits camelCase only where asked: pprof sample types, not perf's raw event codes", async () => {
    expect(splitCamelCase("allocSpace")).toBe("alloc_Space");
    expect(pprofMetric("allocSpace", "bytes")).toEqual({ name: "alloc_space_bytes", unit: "bytes", kind: "sampled" });
    expect(pprofMetric("delay", "nanoseconds")).toEqual({ name: "delay_ns", unit: "ns", kind: "sampled" });
    const raw = await importToMemory(perfScriptImporter, "app 7 1.000000: 10 rC4: \n\t 1190 main (/opt/app)\n\n");
    expect(raw.tables.metrics.map((m) => m.name)).toEqual(["samples", "rc4"]);
  });
});
