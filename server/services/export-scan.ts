import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { TOKEN_KINDS, type RedactionCounts } from "../../analysis/redaction";
import type { ReadBundle } from "./export-bundle";

/**
 * Re-scans what an export carries for values redaction looks for: every string of the notebook
 * and of the flame summaries (identifiers aside) and of every Parquet part — each row's values (so every dictionary entry
 * that a row uses), the column statistics (min/max) and the key-value metadata. The engine and
 * viewer parts are code, not evidence, and are not scanned.
 */
export interface BundleScan {
  strings: number;
  found: Record<string, number>;
  /** Parts where each kind was found (at most 10 per kind). */
  where: Record<string, string[]>;
}

export async function scanBundle(bundle: ReadBundle, countsOf: (text: string) => RedactionCounts, verbatimKeys: ReadonlySet<string>): Promise<BundleScan> {
  const found: Record<string, number> = Object.fromEntries(TOKEN_KINDS.map((k) => [k, 0]));
  const where: Record<string, string[]> = {};
  let strings = 0;
  const seen = new Map<string, RedactionCounts>();
  const scan = (text: string, part: string) => {
    strings++;
    let counts = seen.get(text);
    if (!counts) {
      counts = countsOf(text);
      if (seen.size < 200_000) seen.set(text, counts);
    }
    for (const kind of TOKEN_KINDS) {
      if (!counts[kind]) continue;
      found[kind] += counts[kind];
      const list = (where[kind] ??= []);
      if (list.length < 10 && !list.includes(part)) list.push(part);
    }
  };
  const walk = (node: unknown, part: string, key: string | null) => {
    if (typeof node === "string") {
      if (key === null || !verbatimKeys.has(key)) scan(node, part);
      // JSON text inside (span args) is scanned as its strings too.
      if (/^\s*[[{]/.test(node)) {
        try {
          walk(JSON.parse(node), part, null);
        } catch {
          // not JSON: scanned as text above
        }
      }
    } else if (Array.isArray(node)) for (const child of node) walk(child, part, key);
    else if (node && typeof node === "object") {
      for (const [k, child] of Object.entries(node)) {
        scan(k, part);
        walk(child, part, k);
      }
    }
  };
  for (const spec of bundle.manifest.parts) {
    const bytes = bundle.parts.get(spec.name)!;
    if (spec.name === "notebook.json" || spec.name === "summaries.json") walk(JSON.parse(new TextDecoder().decode(bytes)), spec.name, null);
    else if (spec.name.endsWith(".parquet")) {
      const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      const metadata = parquetMetadata(file);
      for (const kv of metadata.key_value_metadata ?? []) walk([kv.key, kv.value ?? ""], spec.name, null);
      const rows = await parquetReadObjects({ file, compressors, rowFormat: "object" });
      const values = new Set<string>();
      for (const row of rows) {
        for (const [k, v] of Object.entries(row)) {
          if (typeof v !== "string") continue;
          values.add(v);
          walk(v, spec.name, k === "generation_id" || k === "frame_key" ? k : null);
        }
      }
      for (const group of metadata.row_groups) {
        for (const chunk of group.columns) {
          const stats = chunk.meta_data?.statistics;
          for (const v of [stats?.min_value, stats?.max_value, stats?.min, stats?.max]) if (typeof v === "string") scan(values.has(v) ? v : completeWords(v), spec.name);
        }
      }
    }
  }
  return { strings, found, where };
}

/**
 * A statistic that is no value of its column was cut by the writer (a max also has its last
 * character raised: `db.example` → `db.examplf`): its last word is a fragment, not a value, and
 * read as one it looks like anything (a host name, a user). What comes before it is scanned.
 */
function completeWords(stat: string): string {
  return stat.replace(/[^\s|,;"'()[\]{}<>]*$/, "");
}
