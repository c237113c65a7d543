/**
 * Redaction of agent-facing strings: absolute paths, user and host names, e-mail and IP
 * addresses and secret-looking values become typed tokens (`PATH_3f9a1c`, `EMAIL_…`, `SECRET_…`).
 * Pure: the keyed token function is supplied by the caller (the server keys it per workspace),
 * so the same value always maps to the same token within one workspace and to another elsewhere.
 */

export type TokenKind = "PATH" | "USER" | "HOST" | "EMAIL" | "IP" | "SECRET";
export const TOKEN_KINDS: readonly TokenKind[] = ["PATH", "USER", "HOST", "EMAIL", "IP", "SECRET"];

export interface RedactionContext {
  /** Absolute project root: paths under it become project-relative instead of tokens. */
  projectRoot: string;
  /** Names of the local user(s) and machine, replaced wherever they stand as words. */
  userNames?: readonly string[];
  hostNames?: readonly string[];
  /** A stable keyed id (hex) for a value; `PATH_${id}`. Keyed per workspace by the caller. */
  tokenFor: (kind: TokenKind, value: string) => string;
}

export type RedactionCounts = Record<TokenKind, number>;

export function emptyCounts(): RedactionCounts {
  return { PATH: 0, USER: 0, HOST: 0, EMAIL: 0, IP: 0, SECRET: 0 };
}

/** Words too generic to replace on their own (`(root)` is a frame name); paths still hide them. */
const GENERIC_NAMES = new Set(["root", "admin", "user", "users", "node", "nobody", "ubuntu", "debian", "runner", "app", "www", "daemon", "home", "test", "localhost"]);

const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
const BEARER = /\b(Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{8,})/g;
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^/\s:@]+):([^/\s@]+)@/gi;
const KNOWN_KEYS =
  /\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})/g;
const ASSIGNED_SECRET = /\b((?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth))(\s*[=:]\s*)(["']?)([^\s"'&;,]{4,})/gi;
const EMAIL = /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g;
const IPV4 = /(?<![\w.])(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}(?![\w.])/g;
const IPV6_CANDIDATE = /(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){1,7}(?::|(?::[0-9A-Fa-f]{1,4}){1,7}|[0-9A-Fa-f]{1,4})(?![\w:])/g;
const FILE_URL = /\bfile:\/\/(\/[^\s"'<>]*)/g;
const WINDOWS_PATH = /(?<![\w])[A-Za-z]:\\(?:[^\\\s"'<>|*?:]+\\)*[^\\\s"'<>|*?:]*/g;
const HOME_PATH = /(?<![\w/~])~\/[^\s"'<>|*?:;,()]+/g;
/** An absolute POSIX path of at least two segments, not part of a URL or a relative path. */
const POSIX_PATH = /(?<![\w:/.~@-])\/(?:[^\s/"'<>|*?:;,()[\]{}]+\/)+[^\s/"'<>|*?:;,()[\]{}]*/g;
const EXISTING_TOKEN = /^(?:PATH|USER|HOST|EMAIL|IP|SECRET)_[0-9a-f]{6}$/;

function isIpv6(candidate: string): boolean {
  if (!/\d/.test(candidate)) return false;
  const groups = candidate.split(":");
  if (candidate.includes("::")) return groups.filter(Boolean).length >= 2 && candidate.indexOf("::") === candidate.lastIndexOf("::");
  return groups.length === 8;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function trimSlash(p: string): string {
  return p.length > 1 ? p.replace(/[/\\]+$/, "") : p;
}

/** A redactor for one workspace: `redact(text)` returns the redacted text and counts per kind. */
export function createRedactor(context: RedactionContext) {
  const root = trimSlash(context.projectRoot.replace(/\\/g, "/"));
  const token = (kind: TokenKind, value: string) => `${kind}_${context.tokenFor(kind, value).slice(0, 6)}`;
  const nameRule = (names: readonly string[] | undefined) => {
    const usable = [...new Set((names ?? []).filter((n) => n.length >= 3 && !GENERIC_NAMES.has(n.toLowerCase())))];
    return usable.length ? new RegExp(`(?<![A-Za-z0-9])(?:${usable.map(escapeRegExp).join("|")})(?![A-Za-z0-9])`, "gi") : null;
  };
  const userRule = nameRule(context.userNames);
  const hostRule = nameRule([...(context.hostNames ?? []), ...(context.hostNames ?? []).map((h) => h.split(".")[0])]);

  return function redact(text: string): { text: string; counts: RedactionCounts } {
    const counts = emptyCounts();
    const swap = (kind: TokenKind, value: string) => {
      counts[kind]++;
      return token(kind, value);
    };
    const path = (raw: string): string => {
      const p = trimSlash(raw.replace(/\\/g, "/"));
      if (p === root) return ".";
      if (root !== "/" && p.startsWith(`${root}/`)) return p.slice(root.length + 1);
      return swap("PATH", p);
    };
    let out = text;
    // Each pass runs only when its tell-tale character is present: most observed strings are plain names.
    if (out.includes("-----")) out = out.replace(PRIVATE_KEY, (m) => swap("SECRET", m));
    if (out.includes("://")) out = out.replace(URL_CREDENTIALS, (_m, scheme: string, user: string, pass: string) => `${scheme}${swap("USER", user)}:${swap("SECRET", pass)}@`);
    out = out.replace(BEARER, (_m, scheme: string, value: string) => `${scheme} ${swap("SECRET", value)}`);
    out = out.replace(KNOWN_KEYS, (m) => swap("SECRET", m));
    if (out.includes("=") || out.includes(":")) {
      out = out.replace(ASSIGNED_SECRET, (m, name: string, sep: string, quote: string, value: string) =>
        EXISTING_TOKEN.test(value) ? m : `${name}${sep}${quote}${swap("SECRET", value)}`,
      );
    }
    if (out.includes("@")) out = out.replace(EMAIL, (m) => swap("EMAIL", m));
    if (out.includes("file://")) out = out.replace(FILE_URL, (_m, p: string) => path(p));
    if (out.includes(":\\")) out = out.replace(WINDOWS_PATH, (m) => path(m));
    if (out.includes("~/")) out = out.replace(HOME_PATH, (m) => swap("PATH", m));
    if (out.includes("/")) out = out.replace(POSIX_PATH, (m) => path(m));
    if (out.includes(".")) out = out.replace(IPV4, (m) => swap("IP", m));
    if (out.includes(":")) out = out.replace(IPV6_CANDIDATE, (m) => (isIpv6(m) ? swap("IP", m) : m));
    if (userRule) out = out.replace(userRule, (m) => swap("USER", m));
    if (hostRule) out = out.replace(hostRule, (m) => swap("HOST", m));
    return { text: out, counts };
  };
}

export type Redactor = ReturnType<typeof createRedactor>;
