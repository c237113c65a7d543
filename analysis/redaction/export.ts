import { agentView, DEFAULT_VERBATIM_KEYS, type ProjectionMemo } from "./agent-view";
import { TOKEN_KINDS, type RedactionContext, type TokenKind } from "./redact";

/**
 * Redaction for an export: the agent boundary's projection (agentView) under export rules — query
 * values and environment values too, path tokens keeping their last segment — keyed per export by
 * the caller, so the same value gets the same token everywhere in one file and another token in
 * the next. The kinds a person allowed are found and counted but left as they are. One pass
 * rewrites and reports: per kind, how many values and the first place one was found.
 */

export interface ExportRedactionReportEntry {
  kind: TokenKind;
  /** Occurrences found (redacted, or left as they are when the kind is allowed). */
  count: number;
  action: "redact" | "allow";
  /** Where the first was found: `frames.name row 12`, `notebook cells[3].content.text`. */
  example: string | null;
}

export interface ExportRedaction {
  /** A column of strings (null stays null); `json`: the column is JSON text by the schema (span args). */
  column(values: readonly (string | null)[], location: string, json?: boolean): (string | null)[];
  /**
   * A column's distinct values, each with how often and the first row it stands in (a database
   * hands these over without materializing the column): the redacted form of each.
   */
  distinct(entries: Iterable<{ value: string; times: number; row: number }>, location: string, json?: boolean): Map<string, string>;
  /** A document (the notebook): every string but identifiers, decoded JSON text included. */
  document<T>(value: T, location: string): T;
  report(): ExportRedactionReportEntry[];
}

export interface ExportRedactionOptions extends Omit<RedactionContext, "exportRules" | "keep"> {
  /** Kinds left as they are (a person's choice; an agent's request may only narrow this to none). */
  allow: ReadonlySet<TokenKind>;
}

/** Identifiers of the notebook document and the evidence that must survive unchanged for the export to hold together. */
export const EXPORT_VERBATIM_KEYS: ReadonlySet<string> = new Set([
  ...DEFAULT_VERBATIM_KEYS,
  "investigation_id",
  "cell_id",
  "hypothesis_id",
  "finding_id",
  "experiment_id",
  "superseded_by",
  "refuted_by_finding",
  "position",
  "kind",
  "format",
  "rows_digest",
  "zoom",
  "focus",
  "selected",
  "frame",
  "frame_keys",
  "created_at",
  "updated_at",
  "exported_at",
  "at",
  "status",
  "assessment",
  "lifecycle",
  "evidence_level",
  "relation",
  "actor",
  "metric",
  "orientation",
  "mode",
]);

export function createExportRedaction(options: ExportRedactionOptions): ExportRedaction {
  const redaction: RedactionContext = { ...options, exportRules: true, keep: options.allow };
  // One memo for the whole export: a frame name is projected once however many files hold it.
  const memo: ProjectionMemo = new Map();
  const counts = new Map<TokenKind, { count: number; example: string | null }>(TOKEN_KINDS.map((k) => [k, { count: 0, example: null }]));
  const view = <T>(value: T) =>
    agentView(value, { detail: "redacted", redaction, memo, verbatimKeys: EXPORT_VERBATIM_KEYS, maxStringLength: 1 << 24, maxListedPaths: 0 });
  const tally = (redacted: Record<TokenKind, number>, times: number, where: () => string) => {
    for (const kind of TOKEN_KINDS) {
      const n = redacted[kind];
      if (!n) continue;
      const entry = counts.get(kind)!;
      entry.count += n * times;
      entry.example ??= where();
    }
  };

  const distinct: ExportRedaction["distinct"] = (entries, location, json = false) => {
    const key = json ? "args" : "value";
    const out = new Map<string, string>();
    for (const { value: v, times, row } of entries) {
      const { value, report } = view({ [key]: v });
      out.set(v, value[key] as string);
      tally(report.redacted, times, () => `${location} row ${row}`);
    }
    return out;
  };

  return {
    distinct,
    column(values, location, json = false) {
      // Distinct values once each (a frame's file repeats on every row), counted per occurrence.
      const seen = new Map<string, { value: string; times: number; row: number }>();
      values.forEach((v, i) => {
        if (v === null) return;
        const entry = seen.get(v);
        if (entry) entry.times++;
        else seen.set(v, { value: v, times: 1, row: i });
      });
      const out = distinct(seen.values(), location, json);
      return values.map((v) => (v === null ? null : out.get(v)!));
    },
    document(value, location) {
      // Field by field, so the report can say where the first of each kind stands.
      const walk = (node: unknown, path: string): unknown => {
        if (Array.isArray(node)) return node.map((child, i) => walk(child, `${path}[${i}]`));
        if (!node || typeof node !== "object") return node;
        const out: Record<string, unknown> = {};
        for (const [k, child] of Object.entries(node)) {
          if (child && typeof child === "object") out[k] = walk(child, `${path}.${k}`);
          else if (typeof child === "string") {
            const { value: projected, report } = view({ [k]: child });
            tally(report.redacted, 1, () => `${location} ${path}.${k}`.replace(" .", " "));
            out[k] = projected[k];
          } else out[k] = child;
        }
        return out;
      };
      return walk(value, "") as typeof value;
    },
    report() {
      return TOKEN_KINDS.map((kind) => ({ kind, count: counts.get(kind)!.count, action: options.allow.has(kind) ? "allow" : "redact", example: counts.get(kind)!.example }));
    },
  };
}
