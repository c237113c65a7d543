import { spawnSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { agentView, type MemoEntry, type ProjectionMemo, type TokenKind } from "../../analysis/redaction";
import { viewForAgent } from "../../server/mcp/view";
import { MCP_TOOL_NAMES } from "../../server/mcp/tools";

const MB = 1_000_000;
/** The trace's size: 100 MB (EMBERSCOPE_BENCH_REDACTION_MB for a quicker look). */
const TRACE_BYTES = Number(process.env.EMBERSCOPE_BENCH_REDACTION_MB ?? 100) * MB;
const ROUNDS = 3;
/** A page of spans as get_trace_window answers it (its largest page). */
const PAGE_ROWS = 200;

/** The shared generator (../shared/bench), written for no benchmark of ours: a browser-like trace with args. */
const GENERATOR = process.env.EMBERSCOPE_BENCH_GEN_TRACE ?? path.resolve(import.meta.dirname, "..", "..", "..", "shared", "bench", "gen-trace.js");

/**
 * Values an agent must not see, planted into every 20th event's args (a real trace's args carry
 * file URLs, home paths, hosts and the odd credential; the generator's are https URLs only).
 */
const PLANTED = [
  "file:///home/dana/work/shop/src/cart.js",
  "webpack:///home/dana/work/shop/node_modules/react-dom/cjs/react-dom.development.js",
  "C:\\Users\\dana\\AppData\\Local\\app\\main.js",
  "postgres://svc:pa55w0rd-prod@db.internal:5432/shop",
  "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
  "dana.smith@example.com",
  "10.20.30.44:8080",
  "at /home/dana/work/shop/src/checkout.ts:41:7",
];

interface SpanRow {
  name: string;
  category: string;
  args: string | null;
}

/** The trace's strings as the importer stores them: name, category and args as JSON text. */
function traceRows(file: string): { rows: SpanRow[]; bytes: number; planted: number } {
  const rows: SpanRow[] = [];
  let bytes = 0;
  let planted = 0;
  const text = readFileSync(file, "utf8");
  let at = text.indexOf("\n") + 1;
  let n = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    const line = text.slice(at, end < 0 ? text.length : end).replace(/,$/, "");
    at = end < 0 ? text.length : end + 1;
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as { name: string; cat?: string; args?: { data?: Record<string, unknown> } };
    if (event.args?.data && n++ % 20 === 0) {
      event.args.data.url = PLANTED[planted++ % PLANTED.length];
    }
    const row = { name: event.name, category: event.cat ?? "", args: event.args ? JSON.stringify(event.args) : null };
    bytes += Buffer.byteLength(row.name) + Buffer.byteLength(row.category) + (row.args ? Buffer.byteLength(row.args) : 0);
    rows.push(row);
  }
  return { rows, bytes, planted };
}

/** A memo that never remembers: every string is projected (the redaction's own cost). */
class NoMemo extends Map<string, MemoEntry> {
  override set(): this {
    return this;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * Redaction and neutralization throughput over a 100 MB Chrome trace's strings (span names,
 * categories and args JSON): MB of strings per second, through the agent projection that every
 * MCP result crosses.
 */
export async function redactionBenchmark(): Promise<Record<string, unknown>> {
  if (!existsSync(GENERATOR)) throw new Error(`The redaction benchmark needs the trace generator ${GENERATOR} (set EMBERSCOPE_BENCH_GEN_TRACE).`);
  const dir = mkdtempSync(path.join(tmpdir(), "emberscope-bench-redaction-"));
  try {
    const file = path.join(dir, "trace.json");
    const gen = spawnSync(process.execPath, [GENERATOR, file, String(TRACE_BYTES)], { encoding: "utf8" });
    if (gen.status !== 0) throw new Error(gen.stderr);
    const { rows, bytes, planted } = traceRows(file);
    const traceFileBytes = readFileSync(file).length;
    const projectRoot = path.join(dir, "project");
    const tokenFor = (kind: TokenKind, value: string) => createHmac("sha256", "bench").update(`${kind}\0${value}`).digest("hex");
    const redaction = { projectRoot, userNames: [os.userInfo().username, "dana"], hostNames: [os.hostname()], tokenFor };

    /** Wall and CPU time (ms) of one round; CPU time is this process's, less sensitive to other work on the machine. */
    const timed = (round: () => void): { wall: number; cpu: number } => {
      const wall = performance.now();
      const cpu = process.cpuUsage();
      round();
      const used = process.cpuUsage(cpu);
      return { wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 };
    };
    // Every string projected, nothing remembered: the cost of redacting and neutralizing the text.
    const noMemo: ProjectionMemo = new NoMemo();
    const everyString = () =>
      timed(() => {
        let redacted = 0;
        for (let i = 0; i < rows.length; i += PAGE_ROWS) {
          const { report } = agentView(rows.slice(i, i + PAGE_ROWS), { detail: "redacted", redaction, toolNames: MCP_TOOL_NAMES, memo: noMemo });
          redacted += report.redacted.PATH + report.redacted.SECRET;
        }
        if (redacted === 0) throw new Error("the planted values were not redacted");
      });
    // As the MCP server projects results: pages of spans through viewForAgent with its kept projections.
    const mcpPages = () =>
      timed(() => {
        for (let i = 0; i < rows.length; i += PAGE_ROWS) viewForAgent({ spans: rows.slice(i, i + PAGE_ROWS) }, { ws: null, projectRoot, detail: "redacted" });
      });
    const rate = (ms: number) => Math.round((bytes / MB / (ms / 1000)) * 10) / 10;
    const figures = (rounds: { wall: number; cpu: number }[]) => ({
      rounds_wall_ms: rounds.map((r) => Math.round(r.wall)),
      rounds_cpu_ms: rounds.map((r) => Math.round(r.cpu)),
      median_mb_per_s: rate(median(rounds.map((r) => r.wall))),
      median_mb_per_cpu_s: rate(median(rounds.map((r) => r.cpu))),
    });
    const every: { wall: number; cpu: number }[] = [];
    const pages: { wall: number; cpu: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      every.push(everyString());
      pages.push(mcpPages());
    }
    return {
      note: "MB = 10^6 bytes of the strings (UTF-8). Rounds share the machine's cores with any other work: wall-clock figures are noisy (median_mb_per_s); median_mb_per_cpu_s divides by this process's CPU time, which other work disturbs less. Each round projects every row once. every_string_projected: no string's projection is reused (the redaction's own cost); mcp_pages_of_200_spans: through viewForAgent, which keeps projections of strings up to 256 chars across calls (the generator's args repeat: see distinct_args).",
      load_average_1m: Math.round(os.loadavg()[0] * 10) / 10,
      trace: { generator: path.basename(GENERATOR), file_bytes: traceFileBytes, spans: rows.length, string_bytes: bytes, distinct_args: new Set(rows.map((r) => r.args)).size, planted_values: planted },
      every_string_projected: figures(every),
      mcp_pages_of_200_spans: figures(pages),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
