import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MCP_TOOL_NAMES } from "../../server/mcp/tools";
import { agentView, instructionSignals, reportIsClean, TOKEN_KINDS, type AgentViewOptions, type TokenKind } from ".";

/** The corpus of hostile and look-alike strings kept as data: test/fixtures/hostile-strings.json. */
interface Entry {
  expect: "redact" | "rewrite" | "neutralize" | "pass";
  text: string;
  kinds?: TokenKind[];
  leaks?: string[];
  key?: string;
  to?: string;
  note?: string;
}
const corpus = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../test/fixtures/hostile-strings.json"), "utf8")) as {
  context: { projectRoot: string; userNames: string[]; hostNames: string[] };
  strings: Entry[];
};

const tokenFor = (kind: TokenKind, value: string) => createHmac("sha256", "corpus").update(`${kind}\0${value}`).digest("hex");
const options: AgentViewOptions = { detail: "redacted", redaction: { ...corpus.context, tokenFor }, toolNames: MCP_TOOL_NAMES };
const SUPPRESSED = /^\[suppressed: instruction-like observed text, \d+ chars\]$/;

function view(entry: Entry, detail: AgentViewOptions["detail"] = "redacted") {
  const key = entry.key ?? "value";
  const { value, report } = agentView({ [key]: entry.text }, { ...options, detail });
  return { out: value[key], report };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Every string inside a JSON text (keys too), to check none reads as instructions. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => [k, ...stringsOf(v)]);
  return [];
}

const label = (e: Entry) => `${e.key ? `${e.key}: ` : ""}${JSON.stringify(e.text).slice(0, 90)}`;
const of = (kind: Entry["expect"]) => corpus.strings.filter((e) => e.expect === kind).map((e) => [label(e), e] as const);

describe("the hostile-string corpus", () => {
  it("holds at least 200 labelled strings, each with what must happen", () => {
    expect(corpus.strings.length).toBeGreaterThanOrEqual(200);
    for (const e of corpus.strings) {
      expect(["redact", "rewrite", "neutralize", "pass"]).toContain(e.expect);
      if (e.expect === "redact") expect(e.kinds?.length).toBeGreaterThan(0);
      if (e.expect === "rewrite") expect(typeof e.to).toBe("string");
    }
    for (const kind of ["redact", "neutralize", "pass"] as const) expect(of(kind).length).toBeGreaterThanOrEqual(50);
  });

  it.each(of("redact"))("redacts %s", (_label, entry) => {
    const { out, report } = view(entry);
    expect(out).not.toBe(entry.text);
    for (const kind of entry.kinds!) expect(report.redacted[kind], `${kind} counted`).toBeGreaterThan(0);
    for (const leak of entry.leaks ?? []) expect(out).not.toContain(leak);
    if (entry.key === "args" && isJson(entry.text)) expect(isJson(out)).toBe(true);
  });

  it.each(of("rewrite"))("rewrites %s", (_label, entry) => {
    expect(view(entry).out).toBe(entry.to);
  });

  it.each(of("neutralize"))("neutralizes %s, with full detail too", (_label, entry) => {
    for (const detail of ["redacted", "full"] as const) {
      const { out, report } = view(entry, detail);
      expect(report.suppressed.count).toBeGreaterThan(0);
      if (entry.key === "args") {
        // Suppressed inside the args, which stay valid JSON, and no string in them reads as instructions.
        expect(isJson(out)).toBe(true);
        expect(out).toContain("[suppressed: instruction-like observed text");
        for (const s of stringsOf(JSON.parse(out))) expect(instructionSignals(s, options)).toEqual([]);
        expect(instructionSignals(stringsOf(JSON.parse(out)).join(" "), options)).toEqual([]);
      } else expect(out).toMatch(SUPPRESSED);
    }
  });

  it.each(of("pass"))("passes %s unchanged", (_label, entry) => {
    const { out, report } = view(entry);
    expect(out).toBe(entry.text);
    expect(reportIsClean(report), JSON.stringify(report)).toBe(true);
  });
});

describe("args stay valid JSON", () => {
  it("every corpus string, placed in args as a value, a nested value and a key, comes back as valid JSON that no longer holds it when it had to go", () => {
    const broken: string[] = [];
    for (const entry of corpus.strings) {
      const args = JSON.stringify({ [entry.text]: 1, value: entry.text, nested: [entry.text, { deeper: entry.text, n: 3 }] });
      const { out, report } = view({ expect: "redact", text: args, key: "args" });
      if (!isJson(out)) {
        broken.push(args);
        continue;
      }
      if (entry.expect === "pass") {
        expect(out).toBe(args);
        expect(reportIsClean(report)).toBe(true);
      }
      // (Unreadable JSON is redacted whole only where JSON is expected, not as a string inside it.)
      if (entry.expect === "redact" && !entry.kinds?.includes("DATA")) for (const leak of entry.leaks ?? []) expect(out).not.toContain(JSON.stringify(leak).slice(1, -1));
    }
    expect(broken).toEqual([]);
  });

  it("args as Chrome and OTLP importers store them (nested objects, arrays, escapes, unicode) stay valid after redaction", () => {
    const samples = [
      { data: { url: "file:///home/dana/x.js", stack: ["at f (/home/dana/a.js:1:2)", "C:\\Users\\dana\\b.js"], note: 'say "hi"\n\ttab \\ back' } },
      { "http.url": "https://u:pw123456@example.com/p?token=abcdef123456&x=1", "net.peer.ip": "10.1.2.3", "enduser.id": "dana@example.com" },
      { "": "empty key", "\u0000": "nul key", emoji: "\ud83d\udd25 /home/dana/\ud83d\udd25.js" },
      [[["deep", ["deeper", ["/Users/dana/x"]]]]],
    ];
    for (const sample of samples) {
      const args = JSON.stringify(sample);
      const { out, report } = view({ expect: "redact", text: args, key: "args" });
      expect(isJson(out), out).toBe(true);
      expect(out).not.toContain("dana");
      expect(TOKEN_KINDS.some((k) => report.redacted[k] > 0)).toBe(true);
    }
  });
});
