import { addCounts, createRedactor, emptyCounts, TOKEN_KINDS, type RedactionContext, type RedactionCounts, type TokenKind } from "./redact";
import { instructionSignals, neutralizeText, SUPPRESSED_MARKER, type NeutralizeOptions } from "./neutralize";
import { looksLikeJson, MAX_JSON_DEPTH, parseJson, pointerStep, shrinkJson } from "./json-text";

/**
 * The projection of a result that crosses the agent boundary: every string is neutralized
 * (always) and redacted (unless a person chose "full" detail), long strings are cut, and a
 * report says what changed and where. The input is never modified.
 *
 * Strings that are JSON text (span args) are decoded first: their keys and strings are projected
 * one by one and the value is written back as JSON, so the answer is JSON wherever the input was.
 * Where JSON was expected and the text is not JSON (args cut at their bound), the string is
 * redacted whole (`DATA_…`): what cannot be read cannot be vouched for.
 */

export type AgentDetail = "redacted" | "full";

export interface AgentViewOptions extends NeutralizeOptions {
  detail: AgentDetail;
  redaction: RedactionContext;
  /** Keys whose values are identifiers or opaque tokens the agent must echo back unchanged. */
  verbatimKeys?: ReadonlySet<string>;
  /** Keys whose string values are JSON text by the evidence schema (decoded, and redacted whole when unreadable). */
  jsonKeys?: ReadonlySet<string>;
  /** Longest string passed through; longer ones are cut (JSON text stays JSON) and reported. */
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
  /** Replaced whole by the suppression marker. */
  suppressed: boolean;
  /** JSON Pointers of the strings suppressed inside JSON text (the text itself stays JSON). */
  suppressedInside?: readonly string[];
  counts: RedactionCounts | null;
  cut: boolean;
  /** Holds a word an instruction could start with: read together with its neighbours in JSON text. */
  worded?: boolean;
}
/** A string's projections, kept apart by how it was read: as text, as JSON text, or inside JSON text (not cut). */
export interface MemoEntry {
  text?: ProjectedString;
  json?: ProjectedString;
  inner?: ProjectedString;
}
export type ProjectionMemo = Map<string, MemoEntry>;

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

/** How a result's key treats its string value (see `agentView`'s roleOf). */
type KeyRole = "verbatim" | "secret" | "json" | "text";

/** The evidence schema's JSON text columns: spans.args and measurements.dimensions. */
export const DEFAULT_JSON_KEYS: ReadonlySet<string> = new Set(["args", "dimensions"]);

/** A value stored under a name like these is a secret whatever it looks like (e.g. a workload's env, a header). */
const SECRET_KEY_NAME =
  /(?:^|[_.-])(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|account[_-]?key|credentials?|auth(?:orization)?|cookie|session(?:[_-]?id)?|jwt|dsn)(?:$|[_.-])|(?:password|passwd|secret|token|apikey|accesskey|privatekey|credentials?)$/i;
/** Names under which even a number is a secret (a PIN, a numeric password). */
const SECRET_NUMBER_NAME = /(?:^|[_.-])(?:pass(?:word|wd|code)?|pwd|pin|secret)$/i;

function pathOf(parts: readonly (string | number)[]): string {
  return parts.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("") || "(root)";
}

/** Per distinct key (keys are a schema's few field names, or an args object's). */
function keyTest(rule: RegExp) {
  const known = new Map<string, boolean>();
  return (key: string): boolean => {
    let hit = known.get(key);
    if (hit === undefined) {
      hit = rule.test(key);
      if (known.size < 10_000) known.set(key, hit);
    }
    return hit;
  };
}
const isSecretKey = keyTest(SECRET_KEY_NAME);
const isSecretNumberKey = keyTest(SECRET_NUMBER_NAME);

/** Keys whose object holds environment variables: under export rules their values are `ENV_…`. */
const ENV_OBJECT_KEY = /^(?:env|environ|environment|env_vars|envvars)$/i;

const markerFor = (text: string) => `${SUPPRESSED_MARKER.slice(0, -1)}, ${text.length} chars]`;

function anyCounted(counts: RedactionCounts): boolean {
  for (const kind of TOKEN_KINDS) if (counts[kind] > 0) return true;
  return false;
}

/** One walk over a decoded JSON value: keys and strings projected, secret-named values tokenized. */
class JsonWalk {
  readonly counts = emptyCounts();
  /** JSON Pointers of the strings suppressed. */
  readonly inside: string[] = [];
  /** Every key and string read, to read them together too. */
  readonly strings: string[] = [];
  changed = false;
  /** Whether a key or string holds a word an instruction could start with. */
  worded = false;
  /** Nested deeper than MAX_JSON_DEPTH: not walked further, and the whole value is redacted. */
  tooDeep = false;
  private readonly path: (string | number)[] = [];

  constructor(
    private readonly project: (text: string) => ProjectedString,
    /** The token for a value under a secret-like name (the value itself where a person kept secrets), or null when not redacting. */
    private readonly secretToken: ((value: unknown) => unknown) | null,
    /** Under export rules, the token for a value of an environment object (`"env": {"HOME": …}`). */
    private readonly envToken: ((value: string) => string) | null = null,
  ) {}

  walk(node: unknown): unknown {
    if (typeof node === "string") return this.inner(node);
    if (node === null || typeof node !== "object") return node;
    if (this.path.length >= MAX_JSON_DEPTH) {
      this.tooDeep = true;
      return null;
    }
    if (Array.isArray(node)) {
      const out = new Array<unknown>(node.length);
      for (let i = 0; i < node.length && !this.tooDeep; i++) {
        this.path.push(i);
        out[i] = this.walk(node[i]);
        this.path.pop();
      }
      return out;
    }
    // No prototype: a "__proto__" key in the data stays a key.
    const out = Object.create(null) as Record<string, unknown>;
    const parent = this.path[this.path.length - 1];
    const envObject = this.envToken !== null && typeof parent === "string" && ENV_OBJECT_KEY.test(parent);
    for (const key of Object.keys(node)) {
      if (this.tooDeep) break;
      const child = (node as Record<string, unknown>)[key];
      this.path.push(key);
      let outKey = this.inner(key);
      for (let n = 2; Object.hasOwn(out, outKey); n++) outKey = `${outKey.replace(/~\d+$/, "")}~${n}`;
      if (this.secretToken && ((typeof child === "string" && isSecretKey(key)) || (typeof child === "number" && isSecretNumberKey(key)))) {
        this.changed = true;
        this.counts.SECRET++;
        out[outKey] = this.secretToken(child);
      } else if (envObject && typeof child === "string" && child !== "") {
        const token = this.envToken!(child);
        this.counts.ENV++;
        if (token !== child) this.changed = true;
        this.strings.push(key);
        out[outKey] = token;
      } else out[outKey] = this.walk(child);
      this.path.pop();
    }
    return out;
  }

  /** A key or string at the current path. */
  private inner(text: string): string {
    this.strings.push(text);
    const p = this.project(text);
    if (p.counts) addCounts(this.counts, p.counts);
    if (p.worded) this.worded = true;
    if (p.suppressed || p.suppressedInside) {
      const pointer = this.path.map(pointerStep).join("");
      if (p.suppressed) this.inside.push(pointer);
      for (const q of p.suppressedInside ?? []) this.inside.push(pointer + q);
    }
    if (p.text !== text) this.changed = true;
    return p.text;
  }
}

export function agentView<T>(value: T, options: AgentViewOptions): { value: T; report: AgentViewReport } {
  const redacting = options.detail === "redacted";
  // Built on the first string the memo has not seen: with a warm memo most calls never need it.
  let redactor: ReturnType<typeof createRedactor> | null = null;
  const redact = (text: string) => (redactor ??= createRedactor(options.redaction))(text);
  const verbatim = options.verbatimKeys ?? DEFAULT_VERBATIM_KEYS;
  const jsonKeys = options.jsonKeys ?? DEFAULT_JSON_KEYS;
  const maxString = options.maxStringLength ?? 4000;
  const maxPaths = options.maxListedPaths ?? 50;
  const report: AgentViewReport = { detail: options.detail, redacted: emptyCounts(), suppressed: { count: 0, paths: [], paths_truncated: false }, truncated_strings: 0 };
  const token = (kind: TokenKind, text: string) => `${kind}_${options.redaction.tokenFor(kind, text).slice(0, 6)}`;

  // Observed strings repeat (the same frame and span names on every row): project each once.
  const memo: ProjectionMemo = options.memo ?? new Map();
  /** The projection of `text` kept in `slot`, else made by `make(text, expectJson)` and kept. */
  const remembered = (slot: keyof MemoEntry, make: (text: string, expectJson: boolean) => ProjectedString, text: string, expectJson = false): ProjectedString => {
    let entry = memo.get(text);
    let projected = entry?.[slot];
    if (!projected) {
      projected = make(text, expectJson);
      if (!entry) {
        entry = {};
        if (memo.size < 100_000) memo.set(text, entry);
      }
      entry[slot] = projected;
    }
    return projected;
  };

  /** A plain string: neutralized whole, then redacted (not cut: the caller cuts). */
  const projectText = (text: string): ProjectedString => {
    const neutral = neutralizeText(text, options);
    if (neutral.suppressed) return { text: neutral.text, suppressed: true, counts: null, cut: false };
    const worded = neutral.worded ? { worded: true } : {};
    if (!redacting) return { text: neutral.text, suppressed: false, counts: null, cut: false, ...worded };
    const r = redact(neutral.text);
    return { text: r.text, suppressed: false, counts: anyCounted(r.counts) ? r.counts : null, cut: false, ...worded };
  };

  /** A string inside JSON text, or a key there: JSON inside JSON is read too, to a bounded depth. */
  const projectInner = (text: string, depth: number): ProjectedString =>
    depth < 3 && looksLikeJson(text) ? (projectJsonText(text, false, depth + 1) ?? projectText(text)) : remembered("inner", projectText, text);

  const keep = options.redaction.keep;
  const secretToken = (v: unknown): unknown => (keep?.has("SECRET") ? v : token("SECRET", typeof v === "string" ? v : JSON.stringify(v)));
  const envToken = options.redaction.exportRules ? (v: string) => (keep?.has("ENV") ? v : token("ENV", v)) : null;

  /**
   * JSON text, decoded: every key and string projected, secret-named values tokenized, written
   * back as JSON when anything changed (else the text as it came, escapes and spacing included).
   * Undefined when the text is not JSON and none was expected.
   */
  const projectJsonText = (text: string, expected: boolean, depth = 0): ProjectedString | undefined => {
    const parsed = parseJson(text);
    const walk = parsed && new JsonWalk((s) => projectInner(s, depth), redacting ? secretToken : null, redacting ? envToken : null);
    const walked = walk?.walk(parsed!.value);
    if (!walk || walk.tooDeep) {
      // Fail closed: structure was expected (or is too deep to walk) and cannot be vouched for.
      // With full detail nothing is redacted: the text is then neutralized whole like any other.
      if (redacting && (expected || walk) && !keep?.has("DATA")) return { text: token("DATA", text), suppressed: false, counts: { ...emptyCounts(), DATA: 1 }, cut: false };
      return undefined;
    }
    // An instruction split across keys and values reads as one when they are read together.
    // (Only when one of them holds a word a rule starts with: a rule needs one.)
    if (!walk.inside.length && walk.worded && walk.strings.length > 1 && instructionSignals(walk.strings.join(" ; "), options).length) {
      return { text: JSON.stringify(markerFor(text)), suppressed: true, counts: null, cut: false };
    }
    const out = walk.changed ? JSON.stringify(walked) : text;
    const cut = out.length > maxString;
    return {
      text: cut ? shrinkJson(walked, out, maxString) : out,
      suppressed: false,
      ...(walk.inside.length ? { suppressedInside: walk.inside } : {}),
      counts: anyCounted(walk.counts) ? walk.counts : null,
      cut,
      ...(walk.worded ? { worded: true } : {}),
    };
  };

  /** Any observed string: JSON text decoded (where expected or where it looks like JSON), else text, then cut. */
  const project = (text: string, expectJson: boolean): ProjectedString => {
    if (expectJson || looksLikeJson(text)) {
      const json = projectJsonText(text, expectJson);
      if (json) return json;
    }
    const projected = projectText(text);
    if (projected.suppressed || projected.text.length <= maxString) return projected;
    return { ...projected, text: `${projected.text.slice(0, maxString)}… [cut ${projected.text.length - maxString} chars]`, cut: true };
  };

  /** The keys and indexes from the root to the container being visited (read only when reporting a path). */
  const at: (string | number)[] = [];

  const reportPath = (key: string | number | undefined, suffix = "") => {
    report.suppressed.count++;
    if (report.suppressed.paths.length < maxPaths) report.suppressed.paths.push(pathOf(key === undefined ? at : [...at, key]) + suffix);
    else report.suppressed.paths_truncated = true;
  };

  /**
   * `key` is the string's key or index in its container (none at the root): its path is built only
   * if it is reported. `expectJson`: the key is one of the JSON text columns.
   */
  const visitString = (text: string, key?: string | number, expectJson = false): string => {
    const entry = memo.get(text);
    const projected = (expectJson ? entry?.json : entry?.text) ?? remembered(expectJson ? "json" : "text", project, text, expectJson);
    if (projected.suppressed) reportPath(key);
    if (projected.suppressedInside) for (const pointer of projected.suppressedInside) reportPath(key, `#${pointer}`);
    if (projected.counts) addCounts(report.redacted, projected.counts);
    if (projected.cut) report.truncated_strings++;
    return projected.text;
  };

  /**
   * What a key says about its string value, decided once per key and call (an answer repeats its
   * few keys on every row): echoed verbatim, a secret, JSON text, or text.
   */
  const roles = new Map<string, KeyRole>();
  const roleOf = (key: string): KeyRole => {
    let role = roles.get(key);
    if (role === undefined) {
      role = verbatim.has(key) ? "verbatim" : redacting && isSecretKey(key) ? "secret" : jsonKeys.has(key) ? "json" : "text";
      if (roles.size < 1000) roles.set(key, role);
    }
    return role;
  };

  const visitSecret = (text: string): string => {
    report.redacted.SECRET++;
    return keep?.has("SECRET") ? text : token("SECRET", text);
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
          const role = roleOf(key);
          if (role === "verbatim") out[key] = child;
          else if (role === "secret") out[key] = visitSecret(child);
          else out[key] = visitString(child, key, role === "json");
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
