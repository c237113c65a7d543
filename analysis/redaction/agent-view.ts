import { createRedactor, emptyCounts, TOKEN_KINDS, type RedactionContext, type RedactionCounts } from "./redact";
import { neutralizeText, type NeutralizeOptions } from "./neutralize";

/**
 * The projection of a result that crosses the agent boundary: every string is neutralized
 * (always) and redacted (unless a person chose "full" detail), long strings are cut, and a
 * report says what changed and where. The input is never modified.
 */

export type AgentDetail = "redacted" | "full";

export interface AgentViewOptions extends NeutralizeOptions {
  detail: AgentDetail;
  redaction: RedactionContext;
  /** Keys whose values are identifiers or opaque tokens the agent must echo back unchanged. */
  verbatimKeys?: ReadonlySet<string>;
  /** Longest string passed through; longer ones are cut and reported. */
  maxStringLength?: number;
  /** How many suppressed paths are listed (the count is always exact). */
  maxListedPaths?: number;
  /**
   * Projections to reuse across calls (a server answering many calls over the same evidence).
   * The caller keeps one map per distinct set of the other options, since entries depend on them.
   */
  memo?: ProjectionMemo;
}

/** How one observed string crosses the boundary; kept per distinct string. */
export interface ProjectedString {
  text: string;
  suppressed: boolean;
  counts: RedactionCounts | null;
  cut: boolean;
}
export type ProjectionMemo = Map<string, ProjectedString>;

export interface AgentViewReport {
  detail: AgentDetail;
  redacted: RedactionCounts;
  suppressed: { count: number; paths: string[]; paths_truncated: boolean };
  truncated_strings: number;
}

export const DEFAULT_VERBATIM_KEYS: ReadonlySet<string> = new Set([
  "run_id",
  "artifact_id",
  "commit_id",
  "head_commit_id",
  "parent_id",
  "operation_id",
  "plan_id",
  "plan_token",
  "generation_id",
  "workspace_id",
  "frame_key",
  "node_id",
  "cursor",
  "next_cursor",
  "idempotency_key",
  "base_run_id",
  "candidate_run_id",
]);

/** A value stored under a name like these is a secret whatever it looks like (e.g. a workload's env). */
const SECRET_KEY_NAME = /(?:^|[_-])(?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth(?:orization)?)(?:$|[_-])|^(?:pass(?:word|wd)?|secret|token|apikey)$/i;

function pathOf(parts: readonly (string | number)[]): string {
  return parts.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("") || "(root)";
}

/** Whether a key names a secret, per distinct key (keys are a result schema's few field names). */
const secretKeys = new Map<string, boolean>();

function isSecretKey(key: string): boolean {
  let secret = secretKeys.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY_NAME.test(key);
    if (secretKeys.size < 10_000) secretKeys.set(key, secret);
  }
  return secret;
}

export function agentView<T>(value: T, options: AgentViewOptions): { value: T; report: AgentViewReport } {
  const redacting = options.detail === "redacted";
  // Built on the first string the memo has not seen: with a warm memo most calls never need it.
  let redactor: ReturnType<typeof createRedactor> | null = null;
  const redact = (text: string) => (redactor ??= createRedactor(options.redaction))(text);
  const verbatim = options.verbatimKeys ?? DEFAULT_VERBATIM_KEYS;
  const maxString = options.maxStringLength ?? 4000;
  const maxPaths = options.maxListedPaths ?? 50;
  const report: AgentViewReport = { detail: options.detail, redacted: emptyCounts(), suppressed: { count: 0, paths: [], paths_truncated: false }, truncated_strings: 0 };

  // Observed strings repeat (the same frame and span names on every row): project each once.
  const memo: ProjectionMemo = options.memo ?? new Map();
  const project = (text: string): ProjectedString => {
    const neutral = neutralizeText(text, options);
    if (neutral.suppressed) return { text: neutral.text, suppressed: true, counts: null, cut: false };
    let out = neutral.text;
    let counts: RedactionCounts | null = null;
    if (redacting) {
      const r = redact(out);
      out = r.text;
      if (TOKEN_KINDS.some((k) => r.counts[k] > 0)) counts = r.counts;
    }
    const cut = out.length > maxString;
    if (cut) out = `${out.slice(0, maxString)}… [cut ${out.length - maxString} chars]`;
    return { text: out, suppressed: false, counts, cut };
  };

  /** The keys and indexes from the root to the container being visited (read only when reporting a path). */
  const at: (string | number)[] = [];

  /** `key` is the string's key or index in its container (none at the root): its path is built only if it is reported. */
  const visitString = (text: string, key?: string | number): string => {
    let projected = memo.get(text);
    if (!projected) {
      projected = project(text);
      if (memo.size < 100_000) memo.set(text, projected);
    }
    if (projected.suppressed) {
      report.suppressed.count++;
      if (report.suppressed.paths.length < maxPaths) report.suppressed.paths.push(pathOf(key === undefined ? at : [...at, key]));
      else report.suppressed.paths_truncated = true;
    }
    if (projected.counts) for (const kind of TOKEN_KINDS) report.redacted[kind] += projected.counts[kind];
    if (projected.cut) report.truncated_strings++;
    return projected.text;
  };

  const visitSecret = (text: string): string => {
    report.redacted.SECRET++;
    return `SECRET_${options.redaction.tokenFor("SECRET", text).slice(0, 6)}`;
  };

  const visit = (node: unknown): unknown => {
    if (typeof node === "string") return visitString(node);
    if (Array.isArray(node)) {
      const out = new Array<unknown>(node.length);
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === "string") out[i] = visitString(child, i);
        else if (child === null || typeof child === "number" || typeof child === "boolean") out[i] = child;
        else {
          at.push(i);
          out[i] = visit(child);
          at.pop();
        }
      }
      return out;
    }
    if (node && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(node)) {
        const child = (node as Record<string, unknown>)[key];
        if (typeof child === "string") {
          if (verbatim.has(key)) out[key] = child;
          else if (redacting && isSecretKey(key)) out[key] = visitSecret(child);
          else out[key] = visitString(child, key);
        } else if (child === null || typeof child === "number" || typeof child === "boolean") out[key] = child;
        else {
          at.push(key);
          out[key] = visit(child);
          at.pop();
        }
      }
      return out;
    }
    return node;
  };

  return { value: visit(value) as T, report };
}

/** Whether the view changed anything a reader should be told about. */
export function reportIsClean(report: AgentViewReport): boolean {
  return report.suppressed.count === 0 && report.truncated_strings === 0 && TOKEN_KINDS.every((k) => report.redacted[k] === 0);
}
