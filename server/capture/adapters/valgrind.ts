import { promises as fsp } from "node:fs";
import path from "node:path";
import type { CaptureAdapter } from "./types";
import { probeCommand, whichExecutable } from "./tools";

/** Instruction-level costs of any executable under valgrind's callgrind (slow: ~50× or more). */
export const callgrindAdapter: CaptureAdapter = {
  name: "callgrind",
  summary: "Instruction counts per function and call edge (valgrind --tool=callgrind).",
  options: {},
  probe: async () => {
    const found = await probeCommand("valgrind", ["--version"]);
    if (!found || found.code !== 0) return { adapter: "callgrind", available: false, version: null, reason: "valgrind is not installed (apt-get install valgrind)." };
    return { adapter: "callgrind", available: true, version: found.output.trim(), reason: null };
  },
  unsuitableFor: () => null,
  repetitions: () => ({ runs: 1, warmups: 0 }),
  command: (base, outDir) => {
    const valgrind = whichExecutable("valgrind", base.env.PATH ?? process.env.PATH ?? "", "/") ?? "valgrind";
    return { argv: [valgrind, "--tool=callgrind", `--callgrind-out-file=${path.join(outDir, "callgrind.out.%p")}`, "--", ...base.argv], env: base.env };
  },
  collect: async (outDir) => {
    const names = (await fsp.readdir(outDir).catch(() => [] as string[])).filter((n) => n.startsWith("callgrind.out.")).sort();
    return names.map((n) => ({ file: path.join(outDir, n), kind: "callgrind", mediaType: "text/plain", format: "callgrind" as const }));
  },
};
