import type { PresetContext } from "./presets";

/**
 * The SQL console's first answer, computed by the page on the server (the server engine, the
 * same tables and scope) and rendered with the page's HTML: rows show at first paint, before the
 * page's scripts or DuckDB-WASM load. Plain data, as a server page hands it to a client component.
 */
export interface FirstSqlAnswer {
  commit_id: string;
  seq: number;
  generations: string[];
  /** What the presets are filled from (the named queries' own answers). */
  context: PresetContext;
  /** The query answered, and the preset whose text it is (if any). */
  sql: string;
  preset: string | null;
  answer:
    | { columns: { name: string; type: string }[]; rows: Record<string, unknown>[]; truncated: boolean; ms: number; engine: string; engine_version: string }
    | { error: string; code: string };
}
