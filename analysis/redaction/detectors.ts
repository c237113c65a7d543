/**
 * What redaction looks for in one decoded string, as a table: each detector has a cheap hint (it
 * runs only on strings that could hold what it finds) and reports spans of the text with their
 * kind. Detectors are listed in priority order: a span overlapping one found earlier is dropped,
 * so a private key block wins over the paths inside it, and a URL's password over its host.
 * Pure; the redactor (redact.ts) turns spans into tokens.
 */

import type { TokenKind } from "./redact";

/** Where detectors report what they found; `add` refuses (returns false) a span overlapping an earlier one. */
export interface Spans {
  /**
   * The span [start, end) holds `value` (by default its text) of `kind`: it becomes a token, or a
   * PATH under the project root its project-relative form, after `prefix` if given.
   */
  add(start: number, end: number, kind: TokenKind, value?: string, options?: { prefix?: string }): boolean;
  /** No PATH may overlap [start, end) (a web URL's authority and path are not this machine's). */
  veto(start: number, end: number): void;
  /** Names of the local user(s) and machine (from the redaction context), as words. */
  readonly userRule: RegExp | null;
  readonly hostRule: RegExp | null;
  /** The local user names, lower case. */
  readonly localUsers: ReadonlySet<string>;
}

export interface Detector {
  name: string;
  /** Whether the detector may find anything in `text`, whose characters' classes are `chars` (see charClasses). */
  hint: (text: string, chars: number) => boolean;
  find: (text: string, spans: Spans) => void;
  /** Only under export rules (query values, environment values): the MCP boundary does not look for these. */
  exportOnly?: boolean;
}

/** Classes of the characters detectors look for, as bits: one pass over a string decides which detectors run. */
export const CHARS = {
  SLASH: 1,
  BACKSLASH: 2,
  AT: 4,
  COLON: 8,
  EQUALS: 16,
  /** `?`, `&` or `;`: a query string's separators. */
  QUERY: 32,
  PERCENT: 64,
  /** `~` or `$`: a home directory. */
  HOME: 128,
  DASH: 256,
  DOT: 512,
  DIGIT: 1024,
  UPPER: 2048,
  UNDERSCORE: 4096,
  SPACE: 8192,
} as const;

const CLASS_OF = new Uint16Array(128);
for (const [chars, bit] of [
  ["/", CHARS.SLASH],
  ["\\", CHARS.BACKSLASH],
  ["@", CHARS.AT],
  [":", CHARS.COLON],
  ["=", CHARS.EQUALS],
  ["?&;", CHARS.QUERY],
  ["%", CHARS.PERCENT],
  ["~$", CHARS.HOME],
  ["-", CHARS.DASH],
  [".", CHARS.DOT],
  ["0123456789", CHARS.DIGIT],
  ["ABCDEFGHIJKLMNOPQRSTUVWXYZ", CHARS.UPPER],
  ["_", CHARS.UNDERSCORE],
  [" \t\n\r", CHARS.SPACE],
] as const) {
  for (const ch of chars) CLASS_OF[ch.charCodeAt(0)] |= bit;
}

/** The classes of the characters in `text` (non-ASCII characters belong to none). */
export function charClasses(text: string): number {
  let classes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 128) classes |= CLASS_OF[code];
  }
  return classes;
}

/** The first match of a global pattern from the start (patterns are shared: lastIndex is reset); then `pattern.exec(text)` for the next. */
function first(pattern: RegExp, text: string): RegExpExecArray | null {
  pattern.lastIndex = 0;
  return pattern.exec(text);
}

/** Values that are no secret whatever name they stand under. */
const PLACEHOLDER = /^(?:true|false|null|nil|none|undefined|yes|no|on|off|\d{1,3}|\*+|x+|<[^>]*>|\$\{?[A-Za-z_][\w.]*\}?|\{\{.*\}\}|%[A-Za-z_]+%|(?:PATH|USER|HOST|EMAIL|IP|SECRET|QUERY|ENV|DATA)_[0-9a-f]{6})$/i;

/** A token redaction wrote (`SECRET_3f9a1c`): re-reading redacted text finds nothing in it. */
const TOKEN = /^(?:PATH|USER|HOST|EMAIL|IP|SECRET|QUERY|ENV|DATA)_[0-9a-f]{6}$/;

/** Random-looking enough to be a key rather than a word: a digit and a letter, or both cases, or base64 punctuation. */
function looksLikeToken(value: string): boolean {
  const digit = /\d/.test(value);
  const letter = /[A-Za-z]/.test(value);
  return (digit && letter) || (/[a-z]/.test(value.slice(1)) && /[A-Z]/.test(value.slice(1))) || /[+/=._~-]/.test(value);
}

/**
 * A bare 40-character AWS secret access key (base64 letters, digits, `/`, `+`), told from
 * identifiers and hashes of the same length: both cases and a digit (hex digests have one case),
 * and either several digits or no long lowercase run (camelCase words have runs of 5 or more).
 */
function looksLikeAwsSecret(value: string): boolean {
  if (!/[A-Z]/.test(value) || !/[a-z]/.test(value)) return false;
  const digits = value.replace(/\D/g, "").length;
  if (digits === 0 || value.includes("//") || value.split("/").length > 5) return false;
  const longestLowerRun = Math.max(...value.split(/[^a-z]/).map((run) => run.length));
  return digits >= 4 || longestLowerRun <= 4;
}

// ------------------------------------------------------------------ secrets

const PRIVATE_KEY = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END \1-----|$)/g;
const PUTTY_KEY = /PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC:\s*[0-9a-f]+|$)/g;

/**
 * `scheme://user:password@`, `scheme://:password@` (redis) and `scheme://key@` (a DSN). A scheme
 * starts after any character a scheme cannot hold, a word character included (`fetch_https://…`
 * in a function name): `\b` would miss those, and every URL pattern here starts the same way.
 */
const URL_USERINFO = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/([^\s/?#@"'<>]*)@/gi;

/** A query string's secret-like parameter: its value goes, the name stays. */
const QUERY_SECRET =
  /[?&;]((?:[\w.-]*[_.-])?(?:access_token|refresh_token|id_token|auth_token|token|api_?key|apikey|key|secret|client_secret|password|passwd|pwd|pass|sig|signature|credential|security-token|code|auth|session|sessionid|sid|jwt|private_token))=([^&#\s"'<>]+)/gi;

/** A URL with a scheme and a query string (group 1: the query, without `?`). */
const URL_QUERY = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s"'<>?#]*\?([^\s"'<>#]+)/gi;
/** `NAME=value` with an environment-style name (upper case): the value is the environment's. */
const ENV_VALUE = /(?<![\w.-])[A-Z][A-Z0-9_]{1,63}=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'&;,)}\]]+))/g;

const AUTHORIZATION = /\b((?:proxy-)?authorization)(["']?\s*[:=]\s*["']?)(?:(bearer|basic|token|digest|negotiate|ntlm|apikey|key)\s+)?([^\s,;"']+)/gi;
const AUTH_SCHEME = /\b(bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})/gi;

/** Keys with a recognisable prefix (most providers'), each with its own hint. */
const KNOWN_KEYS: readonly { hint: RegExp; pattern: RegExp }[] = [
  { hint: /A(?:KI|SI|BI|CC|GP|ID|IP|NP|NV|PK|RO|SC)A/, pattern: /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}(?![A-Z0-9])/g },
  { hint: /gh[pousr]_/, pattern: /gh[pousr]_[A-Za-z0-9]{30,}(?![A-Za-z0-9])/g },
  { hint: /github_pat_/, pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}/g },
  { hint: /glpat-/, pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g },
  { hint: /xox/, pattern: /(?<![A-Za-z0-9-])xox[abposre]-[A-Za-z0-9-]{10,}/g },
  { hint: /xapp-/, pattern: /(?<![A-Za-z0-9-])xapp-\d-[A-Za-z0-9-]{10,}/g },
  { hint: /hooks\.slack\.com/, pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/g },
  { hint: /AIza/, pattern: /AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { hint: /[sr]k_(?:live|test)_/, pattern: /(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}/g },
  { hint: /whsec_/, pattern: /whsec_[A-Za-z0-9]{20,}/g },
  { hint: /npm_/, pattern: /npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g },
  { hint: /sk-/, pattern: /(?<![A-Za-z0-9_-])sk-(?:proj-|ant-(?:[a-z]+\d*-)?|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}/g },
  { hint: /eyJ/, pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*|(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { hint: /SG\./, pattern: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g },
  { hint: /shp/, pattern: /shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}/g },
  { hint: /pypi-/, pattern: /(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}/g },
  { hint: /dckr_pat_/, pattern: /(?<![A-Za-z0-9_-])dckr_pat_[A-Za-z0-9_-]{20,}/g },
  { hint: /hf_/, pattern: /(?<![A-Za-z0-9])hf_[A-Za-z]{30,}/g },
  { hint: /dop_v1_/, pattern: /dop_v1_[a-f0-9]{64}/g },
  { hint: /hvs\./, pattern: /(?<![A-Za-z0-9_.-])hvs\.[A-Za-z0-9_-]{24,}/g },
];

/** Any of the known keys' hints, in one scan. */
const KNOWN_KEY_HINT = new RegExp(KNOWN_KEYS.map((k) => k.hint.source).join("|"));

/** Words that name a secret when a value is assigned to them (`DB_PASSWORD=…`, `apiKey: …`). */
const SECRET_NAME_HINT = /pass|pwd|secret|token|key|cred|auth|session|sid|cookie|jwt/i;
const ASSIGNED =
  /(?<![A-Za-z0-9_.-])((?:[A-Za-z0-9_.-]*?(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|account[_-]?key|shared[_-]?access[_-]?key|credentials?|authtoken|cookie|jwt))|(?:[A-Za-z0-9_.-]*?[_.-])?(?:pass|pwd|sid|session(?:[_-]?id)?|auth))(["']?\s*(?:=|:)\s*)(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'&;,)}\]]+))/gi;
/** `--password hunter2`, `--token abc…`: a flag and its value after a space. */
const FLAG_VALUE = /(?<![\w-])--?(?:password|passwd|token|secret|api-key|apikey|auth-token|access-token|client-secret)\s+(?!-)([^\s"']+)/gi;
/** Runs of base64 letters at least 40 long (a secret key is a run of exactly 40, not next to `=`). */
const BASE64_RUN = /[A-Za-z0-9/+]{40,}/g;

// ------------------------------------------------------------------ people and machines

const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])/g;
const EMAIL_ENCODED = /(?<![A-Za-z0-9._+-])[A-Za-z0-9._+-]+%40[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** Host names with an address in them: `ip-10-20-30-45`, `ec2-54-1-2-3.compute-1.amazonaws.com`. */
const DASHED_ADDRESS_HOST = /(?<![A-Za-z0-9.-])(?:[A-Za-z][A-Za-z0-9]*-)?(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})(?:\.[A-Za-z0-9-]+)*(?![A-Za-z0-9-])/g;
/** `host10.20.30.44`: a name glued to an IPv4 address. */
const GLUED_ADDRESS_HOST = /(?<![A-Za-z0-9.-])([A-Za-z][A-Za-z0-9-]*?[A-Za-z-])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\d.])(?:\.[A-Za-z][A-Za-z0-9-]*)*/g;
/** A URL's host: `scheme://[userinfo@]host` (group 1), a bracketed IPv6 address or a name. */
const URL_HOST = /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*):\/\/(?:[^\s/?#@"'<>]*@)?([^\s/?#:@"'<>[\]]+)/gi;
/**
 * Names that identify no machine: this one by its loopback names, and the names reserved for
 * documentation and tests (RFC 2606: example.com/.net/.org, .example, .test, .invalid, .localhost).
 */
const ANONYMOUS_HOST = /^(?:localhost|localhost\.localdomain|ip6-localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0)$|(?:^|\.)(?:example\.(?:com|net|org)|example|test|invalid|localhost)$/i;
/** Schemes whose authority is no machine: a bundler's namespace, a bucket, an extension, a path. */
const NOT_A_HOST_SCHEME = /^(?:file|webpack|webpack-internal|s3|s3a|s3n|gs|az|abfss?|wasbs?|hdfs|chrome-extension|moz-extension|safari-web-extension|chrome|chrome-devtools|devtools|edge|about|data|blob|javascript|node|vscode-file|vscode-webview|resource|jar|app|ng|rollup|vite|turbopack)$/i;
/** `user@host` without a domain (ssh, scp): the user part a login name, the host a bare name. */
const USER_AT_HOST = /(?<![\w.%+@/-])([a-z_][a-z0-9_-]{0,31})@([A-Za-z][A-Za-z0-9-]{0,62})(?![\w@.-]|:\/\/|\()/g;
/** What follows `@` and is no machine: npm dist-tags and ranges, decorators' neighbours. */
const NOT_A_HOST = /^(?:latest|next|beta|alpha|canary|rc|stable|dev|main|master|head|experimental|insiders|lts|nightly|preview|legacy|types|version|none|null|undefined|self|this|http|https|file|webpack)$/i;
/**
 * A bare fully qualified name: lower-case labels ending in a top-level domain. Only names that
 * cannot be something else: dotted code (`a.b.c`, `com.example.Order.place`, `console.log`,
 * `app.module.ts`) has upper case, underscores, a call or a last part that is no domain, and
 * reversed package names (`com.example.shop`) start with a domain.
 */
const FQDN = /(?<![\w.@/\\:$-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,12}([a-z]{2,24})(?![\w.$-]|\(|:\/\/)/g;
/** Top-level domains that end a host name in two labels (`example.com`); fewer collide with code than country codes do. */
const HOST_TLDS_2 = new Set(["com", "net", "org", "edu", "gov", "mil", "internal", "corp", "lan", "localdomain", "intranet", "local", "home"]);
/** ... and with three or more (`build-7.corp.example.de`). */
const HOST_TLDS_3 = new Set([...HOST_TLDS_2, "io", "co", "ai", "dev", "cloud", "info", "biz", "us", "uk", "de", "fr", "nl", "eu", "jp", "cn", "ru", "br", "au", "ca", "ch", "se", "no", "fi", "dk", "pl", "es", "it", "be", "at", "cz", "ie", "nz", "za", "kr", "sg", "hk", "tw", "in", "example", "test", "invalid"]);
/** First labels of reversed package names and code roots: `com.example.shop`, `process.env.local`. */
const CODE_ROOTS = new Set(["com", "org", "net", "io", "edu", "gov", "java", "javax", "jdk", "sun", "kotlin", "kotlinx", "android", "androidx", "scala", "akka", "dalvik", "process", "window", "document", "self", "this", "module", "exports", "globalthis", "console", "math", "json", "os", "sys"]);

/** Whether a lower-case dotted name reads as a machine's name (see FQDN). */
function isHostName(name: string, tld: string): boolean {
  const labels = name.split(".");
  if (CODE_ROOTS.has(labels[0]) || ANONYMOUS_HOST.test(name)) return false;
  if (!/[a-z]/.test(labels.slice(0, -1).join(""))) return false;
  return labels.length === 2 ? HOST_TLDS_2.has(tld) : HOST_TLDS_3.has(tld);
}

const VERSION_PREFIX = /^(?:v|ver|version|rev|r|build|release|node|chrome|firefox|python|java|go)-?$/i;
const IPV4 = /(?<![\w.])(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}(?![\w.])/g;
const IPV6_CANDIDATE = /(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){1,7}(?::|(?::[0-9A-Fa-f]{1,4}){1,7}|[0-9A-Fa-f]{1,4})(?![\w:])/g;

/** A hex digit next to a colon next to another hex digit or colon: what an IPv6 address has and a URL's scheme has not. */
const IPV6_HINT = /[0-9A-Fa-f]:[0-9A-Fa-f:]/;

const octets = (m: RegExpExecArray, from: number) => [m[from], m[from + 1], m[from + 2], m[from + 3]].every((o) => Number(o) <= 255);

/** Addresses that identify no one: loopback, unspecified, broadcast. */
function isAnonymousAddress(ip: string): boolean {
  return /^127\./.test(ip) || ip === "0.0.0.0" || ip === "255.255.255.255";
}

function isIpv6(candidate: string): boolean {
  if (!/\d/.test(candidate)) return false;
  const groups = candidate.split(":");
  if (candidate.includes("::")) return groups.filter(Boolean).length >= 2 && candidate.indexOf("::") === candidate.lastIndexOf("::");
  return groups.length === 8;
}

// ------------------------------------------------------------------ paths

/** Web URLs: their authority and path are the web's, not this machine's (their query is still read). */
const WEB_URL = /(?<![a-z0-9+.-])(?:https?|wss?|ftps?|chrome-extension|moz-extension|s3|gs|git|ssh):\/\/[^\s"'<>/?#]+[^\s"'<>?#]*/gi;
/** `file:///x`, `file:/x`, `file://localhost/x`, and `file://server/share/x` (a share: its path too). */
const FILE_URL = /(?<![\w-])file:(?:\/\/([^\s/"'<>)]*))?(\/[^\s"'<>)]*)/gi;
/** `webpack:///home/…`: a scheme with an empty authority before an absolute path. */
const LOCAL_PATH_URL = /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)(\/[^\s"'<>)]*)/gi;
const WINDOWS_PATH = /(?<![A-Za-z0-9])[A-Za-z]:(?:\\{1,2}|\/)(?:[^\\/\s"'<>|*?:]+(?:\\{1,2}|\/))*[^\\/\s"'<>|*?:]*/g;
const UNC_PATH = /(?<![\\\w])(?:\\\\){1,2}[A-Za-z0-9._$-]+(?:\\{1,2}[^\\\s"'<>|*?:]+)+/g;
const HOME_PATH = /(?<![\w/~$%])(?:~[A-Za-z0-9._-]*|\$HOME|\$\{HOME\}|%USERPROFILE%|%HOMEPATH%)[\\/][^\s"'<>|*?:;,()]+/g;
/** An absolute POSIX path of at least two segments (a lone `/x` is too often something else). */
const POSIX_PATH = /\/(?![/.]{1,2}(?:\/|$))[^\s/"'<>|*?:;,()[\]{}\\]+(?:\/[^\s/"'<>|*?:;,()[\]{}\\]*)+/g;
/** What may stand right before an absolute path. */
const PATH_LEFT = /[\s"'`(=,;<>|[{]/;
/** Words a path may be glued to in a stack or log line (`at/home/dana/app.js`). */
const GLUE_WORDS = /(?:^|[^A-Za-z])(?:at|in|from|file|path|dir|cwd|open|load|loading|read|reading|write|writing|see)$/i;
const HOME_ROOTS = /^\/(?:home|Users|root)\//;
/** Where, inside a candidate that was no path, another may start (see standsAsPath). */
const LATER_PATH_START = /[=`]\/|\/(?:home|Users|root)\//g;
const HTTP_ROUTE = /(?:^|\s)(?:GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS|CONNECT|TRACE)\s+$/;

/** Whether an absolute-path candidate at `start` is a path of this machine, judged by what precedes it. */
function standsAsPath(text: string, start: number, candidate: string, localUsers: ReadonlySet<string>): boolean {
  if (start === 0) return true;
  const left = text[start - 1];
  // A route after an HTTP method (`GET /api/items`) is the web's, not a file.
  if (PATH_LEFT.test(left)) return !HTTP_ROUTE.test(text.slice(Math.max(0, start - 10), start));
  // `file:/home/…`, `host:/srv/…` (scp), `key:/etc/…`.
  if (left === ":") return true;
  // Glued to a word: only a home directory, and only after a word of a stack or log line, inside
  // another scheme's URL (`vscode-file://vscode-app/home/…`), or naming a local user.
  if (/[A-Za-z0-9]/.test(left) && HOME_ROOTS.test(candidate)) {
    if (GLUE_WORDS.test(text.slice(Math.max(0, start - 24), start)) || /:\/\/[^\s/]+$/.test(text.slice(0, start))) return true;
    return localUsers.has(candidate.split("/")[2].toLowerCase());
  }
  return false;
}

export const DETECTORS: readonly Detector[] = [
  {
    name: "private_key",
    hint: (t, c) => (c & CHARS.DASH) !== 0 && (t.includes("-----BEGIN") || t.includes("PuTTY-User-Key-File")),
    find(text, spans) {
      for (let m = first(PRIVATE_KEY, text); m; m = PRIVATE_KEY.exec(text)) spans.add(m.index, m.index + m[0].length, "SECRET");
      for (let m = first(PUTTY_KEY, text); m; m = PUTTY_KEY.exec(text)) spans.add(m.index, m.index + m[0].length, "SECRET");
    },
  },
  {
    name: "url_userinfo",
    hint: (t, c) => (c & (CHARS.AT | CHARS.COLON)) === (CHARS.AT | CHARS.COLON) && t.includes("://"),
    find(text, spans) {
      for (let m = first(URL_USERINFO, text); m; m = URL_USERINFO.exec(text)) {
        const info = m[1];
        const at = m.index + m[0].length - 1 - info.length;
        const colon = info.indexOf(":");
        if (colon >= 0) {
          if (colon > 0 && !TOKEN.test(info.slice(0, colon))) spans.add(at, at + colon, "USER");
          if (colon < info.length - 1 && !TOKEN.test(info.slice(colon + 1))) spans.add(at + colon + 1, at + info.length, "SECRET");
        } else if (info && !TOKEN.test(info)) spans.add(at, at + info.length, info.length >= 16 && looksLikeToken(info) ? "SECRET" : "USER");
      }
    },
  },
  {
    name: "query_secret",
    hint: (_t, c) => (c & (CHARS.EQUALS | CHARS.QUERY)) === (CHARS.EQUALS | CHARS.QUERY),
    find(text, spans) {
      for (let m = first(QUERY_SECRET, text); m; m = QUERY_SECRET.exec(text)) {
        const value = m[2];
        if (PLACEHOLDER.test(value)) continue;
        const end = m.index + m[0].length;
        spans.add(end - value.length, end, "SECRET");
      }
    },
  },
  {
    name: "authorization",
    hint: (t, c) => (c & (CHARS.SPACE | CHARS.COLON | CHARS.EQUALS)) !== 0 && /auth|bearer|basic/i.test(t),
    find(text, spans) {
      for (let m = first(AUTHORIZATION, text); m; m = AUTHORIZATION.exec(text)) {
        const value = m[4];
        if (PLACEHOLDER.test(value)) continue;
        const end = m.index + m[0].length;
        spans.add(end - value.length, end, "SECRET");
      }
      for (let m = first(AUTH_SCHEME, text); m; m = AUTH_SCHEME.exec(text)) {
        const value = m[2];
        if (!looksLikeToken(value) || PLACEHOLDER.test(value)) continue;
        const end = m.index + m[0].length;
        spans.add(end - value.length, end, "SECRET");
      }
    },
  },
  {
    name: "known_keys",
    hint: (t, c) => t.length >= 20 && (c & (CHARS.DASH | CHARS.UNDERSCORE | CHARS.DOT | CHARS.UPPER)) !== 0 && KNOWN_KEY_HINT.test(t),
    find(text, spans) {
      for (const { hint, pattern } of KNOWN_KEYS) {
        if (!hint.test(text)) continue;
        for (let m = first(pattern, text); m; m = pattern.exec(text)) spans.add(m.index, m.index + m[0].length, "SECRET");
      }
    },
  },
  {
    name: "assigned_secret",
    hint: (t, c) => (c & (CHARS.EQUALS | CHARS.COLON | CHARS.DASH)) !== 0 && SECRET_NAME_HINT.test(t),
    find(text, spans) {
      for (let m = first(ASSIGNED, text); m; m = ASSIGNED.exec(text)) {
        const value = m[3] ?? m[4] ?? m[5] ?? "";
        if (!value || PLACEHOLDER.test(value.trim())) continue;
        const end = m.index + m[0].length - (m[3] !== undefined || m[4] !== undefined ? 1 : 0);
        spans.add(end - value.length, end, "SECRET");
      }
      for (let m = first(FLAG_VALUE, text); m; m = FLAG_VALUE.exec(text)) {
        if (PLACEHOLDER.test(m[1])) continue;
        const end = m.index + m[0].length;
        spans.add(end - m[1].length, end, "SECRET");
      }
    },
  },
  {
    name: "aws_secret_key",
    hint: (t, c) => t.length >= 40 && (c & (CHARS.UPPER | CHARS.DIGIT)) === (CHARS.UPPER | CHARS.DIGIT),
    find(text, spans) {
      for (let m = first(BASE64_RUN, text); m; m = BASE64_RUN.exec(text)) {
        if (m[0].length === 40 && text[m.index - 1] !== "=" && text[m.index + 40] !== "=" && looksLikeAwsSecret(m[0])) spans.add(m.index, m.index + 40, "SECRET");
      }
    },
  },
  {
    name: "url_host",
    hint: (t, c) => (c & (CHARS.COLON | CHARS.SLASH)) === (CHARS.COLON | CHARS.SLASH) && t.includes("://"),
    find(text, spans) {
      for (let m = first(URL_HOST, text); m; m = URL_HOST.exec(text)) {
        const host = m[2];
        // file:// URLs are paths (local_url); addresses are IPs (ip_address); tokens are done.
        if (NOT_A_HOST_SCHEME.test(m[1]) || ANONYMOUS_HOST.test(host) || TOKEN.test(host) || /^[\d.]+$/.test(host)) continue;
        const end = m.index + m[0].length;
        spans.add(end - host.length, end, "HOST", host.toLowerCase());
      }
    },
  },
  {
    name: "web_url",
    hint: (t, c) => (c & (CHARS.COLON | CHARS.SLASH)) === (CHARS.COLON | CHARS.SLASH) && t.includes("://"),
    find(text, spans) {
      for (let m = first(WEB_URL, text); m; m = WEB_URL.exec(text)) spans.veto(m.index, m.index + m[0].length);
    },
  },
  {
    name: "local_url",
    hint: (t, c) => (c & (CHARS.COLON | CHARS.SLASH)) === (CHARS.COLON | CHARS.SLASH) && (t.includes("file:") || t.includes(":///")),
    find(text, spans) {
      for (let m = first(FILE_URL, text); m; m = FILE_URL.exec(text)) {
        const host = m[1] && m[1].toLowerCase() !== "localhost" ? `//${m[1]}` : "";
        const path = /^\/[A-Za-z]:[\\/]/.test(m[2]) ? m[2].slice(1) : m[2];
        spans.add(m.index, m.index + m[0].length, "PATH", decodeSafely(host + path));
      }
      for (let m = first(LOCAL_PATH_URL, text); m; m = LOCAL_PATH_URL.exec(text)) {
        const path = m[2];
        if (/^\/\.{1,2}\//.test(path) || m[1].toLowerCase() === "file://") continue;
        spans.add(m.index, m.index + m[0].length, "PATH", decodeSafely(path), { prefix: `${m[1]}/` });
      }
    },
  },
  {
    name: "windows_path",
    hint: (t, c) => ((c & CHARS.COLON) !== 0 && (t.includes(":\\") || t.includes(":/"))) || ((c & CHARS.BACKSLASH) !== 0 && t.includes("\\\\")),
    find(text, spans) {
      for (let m = first(WINDOWS_PATH, text); m; m = WINDOWS_PATH.exec(text)) if (m[0].length > 3) spans.add(m.index, m.index + m[0].length, "PATH");
      if (text.includes("\\\\")) for (let m = first(UNC_PATH, text); m; m = UNC_PATH.exec(text)) spans.add(m.index, m.index + m[0].length, "PATH");
    },
  },
  {
    name: "home_path",
    hint: (_t, c) => (c & (CHARS.HOME | CHARS.PERCENT)) !== 0 && (c & (CHARS.SLASH | CHARS.BACKSLASH)) !== 0,
    find(text, spans) {
      for (let m = first(HOME_PATH, text); m; m = HOME_PATH.exec(text)) spans.add(m.index, m.index + m[0].length, "PATH");
    },
  },
  {
    name: "posix_path",
    hint: (_t, c) => (c & CHARS.SLASH) !== 0,
    find(text, spans) {
      POSIX_PATH.lastIndex = 0;
      for (let m = POSIX_PATH.exec(text); m; m = POSIX_PATH.exec(text)) {
        const candidate = m[0];
        if (standsAsPath(text, m.index, candidate, spans.localUsers) && spans.add(m.index, m.index + candidate.length, "PATH")) continue;
        // Not a path where it starts (a relative path's tail, a URL's): a later slash inside it may
        // start one, but only after a `=` or backtick, or as a home directory glued to a word.
        LATER_PATH_START.lastIndex = m.index + 1;
        const later = LATER_PATH_START.exec(text);
        POSIX_PATH.lastIndex = later && later.index < m.index + candidate.length ? later.index + (later[0][0] === "/" ? 0 : 1) : m.index + candidate.length;
      }
    },
  },
  {
    name: "email",
    hint: (_t, c) => (c & (CHARS.AT | CHARS.PERCENT)) !== 0,
    find(text, spans) {
      // A redacted URL's `SECRET_3f9a1c@host` is no address: re-reading redacted text finds nothing.
      for (let m = first(EMAIL, text); m; m = EMAIL.exec(text)) if (!TOKEN.test(m[0].slice(0, m[0].indexOf("@")))) spans.add(m.index, m.index + m[0].length, "EMAIL");
      if (text.includes("%40")) for (let m = first(EMAIL_ENCODED, text); m; m = EMAIL_ENCODED.exec(text)) spans.add(m.index, m.index + m[0].length, "EMAIL");
    },
  },
  {
    name: "address_host",
    hint: (t, c) => (c & CHARS.DIGIT) !== 0 && (c & (CHARS.DOT | CHARS.DASH)) !== 0 && /\d[.-]\d/.test(t),
    find(text, spans) {
      for (let m = first(DASHED_ADDRESS_HOST, text); m; m = DASHED_ADDRESS_HOST.exec(text)) if (octets(m, 1)) spans.add(m.index, m.index + m[0].length, "HOST");
      for (let m = first(GLUED_ADDRESS_HOST, text); m; m = GLUED_ADDRESS_HOST.exec(text)) {
        if (octets(m, 2) && !VERSION_PREFIX.test(m[1])) spans.add(m.index, m.index + m[0].length, "HOST");
      }
    },
  },
  {
    name: "user_at_host",
    hint: (_t, c) => (c & CHARS.AT) !== 0,
    find(text, spans) {
      for (let m = first(USER_AT_HOST, text); m; m = USER_AT_HOST.exec(text)) {
        const [, user, host] = m;
        if (NOT_A_HOST.test(host) || NOT_A_HOST.test(user) || TOKEN.test(host) || ANONYMOUS_HOST.test(host)) continue;
        const at = m.index + user.length;
        if (spans.add(m.index, at, "USER")) spans.add(at + 1, at + 1 + host.length, "HOST", host.toLowerCase());
      }
    },
  },
  {
    name: "host_name",
    hint: (t, c) => (c & CHARS.DOT) !== 0 && /[a-z]\.[a-z]/.test(t),
    find(text, spans) {
      for (let m = first(FQDN, text); m; m = FQDN.exec(text)) if (isHostName(m[0], m[1])) spans.add(m.index, m.index + m[0].length, "HOST");
    },
  },
  {
    name: "local_names",
    hint: () => true,
    find(text, spans) {
      for (const [rule, kind] of [
        [spans.hostRule, "HOST"],
        [spans.userRule, "USER"],
      ] as const) {
        if (!rule) continue;
        for (let m = first(rule, text); m; m = rule.exec(text)) spans.add(m.index, m.index + m[0].length, kind);
      }
    },
  },
  {
    name: "ip_address",
    hint: (_t, c) => (c & CHARS.DIGIT) !== 0 && (c & (CHARS.DOT | CHARS.COLON)) !== 0,
    find(text, spans) {
      if (text.includes(".")) for (let m = first(IPV4, text); m; m = IPV4.exec(text)) if (!isAnonymousAddress(m[0])) spans.add(m.index, m.index + m[0].length, "IP");
      if (IPV6_HINT.test(text)) for (let m = first(IPV6_CANDIDATE, text); m; m = IPV6_CANDIDATE.exec(text)) if (isIpv6(m[0])) spans.add(m.index, m.index + m[0].length, "IP");
    },
  },
  // Export rules only, last: what the detectors above found keeps its more specific kind.
  {
    name: "url_query",
    exportOnly: true,
    hint: (t, c) => (c & CHARS.QUERY) !== 0 && t.includes("://") && t.includes("?"),
    find(text, spans) {
      for (let m = first(URL_QUERY, text); m; m = URL_QUERY.exec(text)) {
        let at = m.index + m[0].length - m[1].length;
        for (const part of m[1].split(/([&;])/)) {
          if (part && part !== "&" && part !== ";") {
            const eq = part.indexOf("=");
            const value = eq < 0 ? part : part.slice(eq + 1);
            if (value && !PLACEHOLDER.test(value)) spans.add(at + part.length - value.length, at + part.length, "QUERY");
          }
          at += part.length;
        }
      }
    },
  },
  {
    name: "env_value",
    exportOnly: true,
    hint: (_t, c) => (c & (CHARS.EQUALS | CHARS.UPPER)) === (CHARS.EQUALS | CHARS.UPPER),
    find(text, spans) {
      for (let m = first(ENV_VALUE, text); m; m = ENV_VALUE.exec(text)) {
        const value = m[1] ?? m[2] ?? m[3] ?? "";
        if (!value || PLACEHOLDER.test(value)) continue;
        const end = m.index + m[0].length - (m[1] !== undefined || m[2] !== undefined ? 1 : 0);
        spans.add(end - value.length, end, "ENV");
      }
    },
  },
];

function decodeSafely(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
