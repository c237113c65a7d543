import { EmberscopeError } from "../../domain/errors";
import { measureAdapter } from "./measure";
import { nodeCpuProfileAdapter, nodeHeapProfileAdapter, nodeTraceEventsAdapter } from "./node";
import { perfAdapter } from "./perf";
import type { AdapterProbe, CaptureAdapter } from "./types";
import { callgrindAdapter } from "./valgrind";

/** Every capture adapter, by name: the registry capabilities, plans, CLI and docs read. */
export const ADAPTERS: readonly CaptureAdapter[] = [nodeCpuProfileAdapter, nodeHeapProfileAdapter, nodeTraceEventsAdapter, callgrindAdapter, perfAdapter, measureAdapter];

export function adapterNamed(name: string): CaptureAdapter {
  const adapter = ADAPTERS.find((a) => a.name === name);
  if (!adapter) {
    throw new EmberscopeError("ADAPTER_NOT_FOUND", `No capture adapter is named ${name}.`, {
      details: { argument: "adapter", adapters: ADAPTERS.map((a) => a.name) },
      recovery: { operation: "captures.capabilities", arguments: {}, safe_to_repeat: true },
    });
  }
  return adapter;
}

const probes = new Map<string, Promise<AdapterProbe>>();

/** Availability per adapter, probed once per process (tools do not appear mid-run). */
export function probeAdapter(adapter: CaptureAdapter): Promise<AdapterProbe> {
  let probe = probes.get(adapter.name);
  if (!probe) {
    probe = adapter.probe();
    probes.set(adapter.name, probe);
  }
  return probe;
}

export type { CaptureAdapter } from "./types";
