/**
 * Redaction of one decoded agent-facing string: absolute paths, user and host names, e-mail and
 * IP addresses and secret-looking values become typed tokens (`PATH_3f9a1c`, `EMAIL_…`,
 * `SECRET_…`). Pure: the keyed token function is supplied by the caller (the server keys it per
 * workspace), so the same value always maps to the same token within one workspace and to another
 * elsewhere.
 *
 * The detectors (detectors.ts) all read the original text and report spans; the spans are then
 * replaced in one pass. No detector sees another's output, so none can eat part of a token, and a
 * span overlapping one of a detector listed before it is dropped. Strings that are JSON text are
 * decoded before they get here (agent-view.ts): this function never sees escapes to corrupt.
 */

import { charClasses, DETECTORS, type Spans } from "./detectors";

/**
 * `DATA`: a value that should have been JSON text but could not be read, redacted whole.
 * `QUERY` (a web URL's query values) and `ENV` (an environment value, `NAME=value`) are looked for
 * only under export rules (see `RedactionContext.exportRules`).
 */
export type TokenKind = "PATH" | "USER" | "HOST" | "EMAIL" | "IP" | "SECRET" | "QUERY" | "ENV" | "DATA";
export const TOKEN_KINDS: readonly TokenKind[] = ["PATH", "USER", "HOST", "EMAIL", "IP", "SECRET", "QUERY", "ENV", "DATA"];

export interface RedactionContext {
  /** Absolute project root: paths under it become project-relative instead of tokens. */
  projectRoot: string;
  /** Names of the local user(s) and machine, replaced wherever they stand as words. */
  userNames?: readonly string[];
  hostNames?: readonly string[];
  /** A stable keyed id (hex) for a value; `PATH_${id}`. Keyed per workspace by the caller. */
  tokenFor: (kind: TokenKind, value: string) => string;
  /**
   * Exports' rules (a file leaves the machine): also web URLs' query values (`QUERY_…`) and
   * environment values (`NAME=value` → `ENV_…`), and a path's token keeps its last segment
   * (`PATH_3f9a1c/cart.js`) so a reader still sees which file. Off at the MCP boundary.
   */
  exportRules?: boolean;
  /** Kinds a person chose to leave as they are: found and counted, not replaced. */
  keep?: ReadonlySet<TokenKind>;
}

export type RedactionCounts = Record<TokenKind, number>;

export function emptyCounts(): RedactionCounts {
  return { PATH: 0, USER: 0, HOST: 0, EMAIL: 0, IP: 0, SECRET: 0, QUERY: 0, ENV: 0, DATA: 0 };
}

/**
 * Adds `from`'s counts to `into`. Kind by kind in one statement each: it runs for every redacted
 * string of every answer, and a loop over TOKEN_KINDS costs a keyed property access per kind.
 */
export function addCounts(into: RedactionCounts, from: RedactionCounts): void {
  into.PATH += from.PATH;
  into.USER += from.USER;
  into.HOST += from.HOST;
  into.EMAIL += from.EMAIL;
  into.IP += from.IP;
  into.SECRET += from.SECRET;
  into.QUERY += from.QUERY;
  into.ENV += from.ENV;
  into.DATA += from.DATA;
}

/** Words too generic to replace on their own (`(root)` is a frame name); paths still hide them. */
const GENERIC_NAMES = new Set(["root", "admin", "user", "users", "node", "nobody", "ubuntu", "debian", "runner", "app", "www", "daemon", "home", "test", "localhost"]);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A path with `/` separators, single slashes and no trailing one. */
function normalPath(p: string): string {
  const slashes = p.replace(/\\+/g, "/").replace(/\/{2,}/g, "/");
  return slashes.length > 1 ? slashes.replace(/\/+$/, "") : slashes;
}

/** A short word of letters and digits (most keys and names) can only be a local user's or machine's name. */
const SHORT_WORD = /^[A-Za-z$][A-Za-z0-9$]{0,15}$/;
const WORD_DETECTORS = DETECTORS.filter((d) => d.name === "local_names");
const AGENT_DETECTORS = DETECTORS.filter((d) => !d.exportOnly);

interface Span {
  start: number;
  end: number;
  kind: TokenKind;
  value: string;
  prefix: string;
}

/** Disjoint intervals [start, end), kept in order of start: finding one that overlaps takes a binary search. */
class Intervals<T extends { start: number; end: number }> {
  readonly items: T[] = [];

  /** Index of the first interval starting at or after `start`. */
  private after(start: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid].start < start) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  overlaps(start: number, end: number): boolean {
    const i = this.after(start);
    return (i > 0 && this.items[i - 1].end > start) || (i < this.items.length && this.items[i].start < end);
  }

  /** Adds an interval overlapping none already held. */
  insert(item: T): void {
    const i = this.after(item.start);
    if (i === this.items.length) this.items.push(item);
    else this.items.splice(i, 0, item);
  }
}

/** The spans found in one string: the first of overlapping spans (by detector priority) wins. */
class FoundSpans implements Spans {
  readonly found = new Intervals<Span>();
  private readonly vetoes = new Intervals<{ start: number; end: number }>();

  constructor(
    private readonly text: string,
    readonly userRule: RegExp | null,
    readonly hostRule: RegExp | null,
    readonly localUsers: ReadonlySet<string>,
  ) {}

  add(start: number, end: number, kind: TokenKind, value?: string, options?: { prefix?: string }): boolean {
    if (end <= start || this.found.overlaps(start, end) || (kind === "PATH" && this.vetoes.overlaps(start, end))) return false;
    this.found.insert({ start, end, kind, value: value ?? this.text.slice(start, end), prefix: options?.prefix ?? "" });
    return true;
  }

  veto(start: number, end: number): void {
    if (!this.vetoes.overlaps(start, end)) this.vetoes.insert({ start, end });
  }
}

export type Redactor = (text: string) => { text: string; counts: RedactionCounts };

/** A redactor for one workspace: `redact(text)` returns the redacted text and counts per kind. */
export function createRedactor(context: RedactionContext): Redactor {
  const root = normalPath(context.projectRoot);
  // A keyed token costs an HMAC; values repeat within and across strings (the same path on every frame).
  const tokens = new Map<string, string>();
  const token = (kind: TokenKind, value: string) => {
    const key = `${kind}\0${value}`;
    let made = tokens.get(key);
    if (made === undefined) {
      made = `${kind}_${context.tokenFor(kind, value).slice(0, 6)}`;
      if (tokens.size < 10_000) tokens.set(key, made);
    }
    return made;
  };
  const usable = (names: readonly string[]) => [...new Set(names.filter((n) => n.length >= 3 && !GENERIC_NAMES.has(n.toLowerCase())))];
  const nameRule = (names: readonly string[]) => (names.length ? new RegExp(`(?<![A-Za-z0-9])(?:${names.map(escapeRegExp).join("|")})(?![A-Za-z0-9])`, "gi") : null);
  const users = usable(context.userNames ?? []);
  const hosts = usable([...(context.hostNames ?? []), ...(context.hostNames ?? []).map((h) => h.split(".")[0])]);
  const userRule = nameRule(users);
  const hostRule = nameRule(hosts);
  const localUsers = new Set(users.map((u) => u.toLowerCase()));
  const detectors = context.exportRules ? DETECTORS : AGENT_DETECTORS;
  const keep = context.keep ?? new Set<TokenKind>();
  /** Under export rules, a path token keeps the path's last segment unless it names the user or machine. */
  const lastSegment = (path: string): string => {
    if (!context.exportRules) return "";
    const last = path.slice(path.lastIndexOf("/") + 1);
    // A segment that holds anything redaction finds (a name, a key, an address) is not kept.
    if (!/^[A-Za-z0-9._+-]{1,120}$/.test(last) || /^\.+$/.test(last) || redact(last).text !== last) return "";
    return `/${last}`;
  };

  /** A path under the project root as project-relative text, any other as null (a token). */
  const relative = (raw: string): string | null => {
    const p = normalPath(raw);
    if (p === root) return ".";
    if (root !== "/" && p.startsWith(`${root}/`)) return p.slice(root.length + 1);
    return null;
  };

  function redact(text: string): { text: string; counts: RedactionCounts } {
    const spans = new FoundSpans(text, userRule, hostRule, localUsers);
    const chars = charClasses(text);
    for (const detector of SHORT_WORD.test(text) ? WORD_DETECTORS : detectors) if (detector.hint(text, chars)) detector.find(text, spans);
    const found = spans.found.items;
    const counts = emptyCounts();
    if (!found.length) return { text, counts };

    let out = "";
    let at = 0;
    for (const span of found) {
      out += text.slice(at, span.start);
      const rel = span.kind === "PATH" ? relative(span.value) : null;
      if (rel !== null) out += span.prefix ? `${span.prefix}./${rel === "." ? "" : rel}` : rel;
      else {
        counts[span.kind]++;
        if (keep.has(span.kind)) out += text.slice(span.start, span.end);
        else if (span.kind === "PATH") {
          const path = normalPath(span.value);
          out += span.prefix + token("PATH", path) + lastSegment(path);
        } else out += span.prefix + token(span.kind, span.value);
      }
      at = span.end;
    }
    return { text: out + text.slice(at), counts };
  }
  return redact;
}
