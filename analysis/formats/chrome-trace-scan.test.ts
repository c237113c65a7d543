import { describe, expect, it } from "vitest";
import { EvidenceBuilder, MemorySink } from "../evidence/builder";
import { AsciiBytes } from "../evidence/text-coding";
import { JsonStreamParser } from "../io/json-stream";
import { EvidenceParseError } from "./errors";
import { parseChromeTrace } from "./chrome-trace";
import { ScanBudget, TraceEventScanner, type ScannedEvent } from "./chrome-trace-scan";
import { DEFAULT_IMPORT_LIMITS } from "./types";

const encode = (text: string) => new TextEncoder().encode(text);

/** Deterministic pseudo-random numbers in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}

/** What the collector would read from JSON.parse of the same bytes, in the scanner's terms. */
function expectedFromJson(bytes: Uint8Array): Omit<ScannedEvent, "ph"> & { ph: unknown } {
  const event = JSON.parse(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes)) as Record<string, unknown>;
  const args = event.args as Record<string, unknown> | undefined;
  return {
    ph: event.ph,
    name: event.name as string | undefined,
    cat: event.cat as string | undefined,
    ts: event.ts as number | undefined,
    dur: event.dur as number | undefined,
    tdur: event.tdur as number | undefined,
    pid: event.pid as number | string | undefined,
    tid: event.tid as number | string | undefined,
    s: event.s as string | undefined,
    args: args === undefined || Object.keys(args).length === 0 ? null : JSON.stringify(args),
  };
}

/** The event the scanner reads from `text`. */
function scanText(text: string | Uint8Array): ScannedEvent | null {
  const bytes = typeof text === "string" ? encode(text) : text;
  const scanner = new TraceEventScanner();
  return scanner.scan(bytes, 0, bytes.length, 1024) === bytes.length ? eventOf(scanner) : null;
}

/** The scanner's last event, its args as text (an X, i or I event's ASCII args come as their bytes). */
function eventOf(scanner: TraceEventScanner): ScannedEvent {
  const { args } = scanner.event;
  return { ...scanner.event, args: args instanceof AsciiBytes ? args.text() : args };
}

describe("TraceEventScanner", () => {
  it("reads simple events exactly as JSON.parse (and JSON.stringify of args) would give them", () => {
    const accepted = [
      '{"name":"module3.function_20","cat":"bench","ph":"X","ts":123,"dur":45,"pid":1,"tid":3,"args":{"i":12345}}',
      '{ "ph" : "B" , "name" : "Begin" , "ts" : 1.5e3 , "pid" : "p1" , "tid" : "0x1f" }',
      '{"ph":"E","ts":-0,"pid":1,"tid":2,"args":{}}',
      '{"ph":"i","s":"g","ts":12345678901234567890,"name":"mark"}',
      '{"ph":"I","ts":1e400,"name":"huge"}',
      String.raw`{"ph":"X","ts":0.1,"dur":1.50,"name":"q\"uo\\te \u00e9 \ud83d\ude00 \/ \b\f\n\r\t","cat":"é 😀","tts":3,"tdur":4}`,
      String.raw`{"ph":"X","ts":1,"args":{"s":"a\"b\\c\n\u001f\u0000","n":[1,-2,1.5,-0.25,1e+21,true,false,null,[],{}],"o":{"p":{"q":[{"r":"é😀"}]}},"":0}}`,
      '{"ph":"X","ts":1,"args":{"__proto__":1,"a1":2,"k":"\ufeffbom"}}',
      '{"ph":"X","ts":1,"name":"\ufeffbom first","args":{"big":123456789012345,"neg":-123456789012345}}',
      // Args JSON.stringify writes otherwise are parsed and written back, as the collector's own way does.
      '{"ph":"X","ts":1,"args":{"a":1,"a":2}}',
      '{"ph":"X","ts":1,"args":{"o":{"a":1,"a":2}}}',
      '{"ph":"X","ts":1,"args":{"b":1,"1":2}}',
      '{"ph":"X","ts":1,"args":{"a": 1}}',
      '{"ph":"X","ts":1,"args":{ }}',
      '{"ph":"X","ts":1,"args":{"a":1.50,"b":1e3,"c":-0,"d":12345678901234567890,"e":1e400}}',
      String.raw`{"ph":"X","ts":1,"args":{"a":"\u00e9\u001F\u000a\/"}}`,
      '{"ph":"X","ts":1,"args":{"é":1,"__proto__":{"x":[1, 2]}}}',
    ];
    for (const text of accepted) {
      const event = scanText(text);
      expect(event, text).not.toBeNull();
      expect(event, text).toEqual(expectedFromJson(encode(text)));
      // Numbers keep their sign and rounding (toEqual alone would not tell -0 from 0).
      for (const key of ["ts", "dur", "tdur", "pid", "tid"] as const) expect(Object.is(event![key], expectedFromJson(encode(text))[key]), `${text} ${key}`).toBe(true);
    }
  });

  it("declines what it cannot vouch for: other phases and keys, a key twice, invalid JSON", () => {
    const declined = [
      '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"Main"}}',
      '{"ph":"C","ts":1,"args":{"v":1}}',
      '{"ph":"b","ts":1,"id":1}',
      '{"ph":"s","ts":1,"id":1}',
      '{"ph":"P","ts":1}',
      '{"ph":"R","ts":1}',
      '{"ph":"XX","ts":1}',
      '{"ph":"X","ts":1,"bind_id":"0x1","flow_out":true}',
      '{"ph":"X","ts":1,"id":1}',
      '{"ph":"X","ts":1,"cname":"good"}',
      '{"ph":"X","ts":1,"ts":2}',
      '{"ph":"X","p\\u0068":"X","ts":1}',
      '{"ts":1,"name":"no phase"}',
      '{"ph":"X","ts":"1"}',
      '{"ph":"X","ts":1,"pid":null}',
      '{"ph":"X","ts":1,"name":5}',
      '{"ph":"X","ts":1,"args":[1]}',
      '{"ph":"X","ts":1,"args":null}',
      '{"ph":"X","ts":1,"args":{"a":"\\x"}}',
      '{"ph":"X","ts":1,"args":{"a":"\\u12"}}',
      '{"ph":"X","ts":1,"args":{"a":1,}}',
      '{"ph":"X","ts":1,"args":{"a" 1}}',
      '{"ph":"X","ts":1,"name":"bad \\x escape"}',
      '{"ph":"X","ts":01}',
      '{"ph":"X","ts":1.}',
      '{"ph":"X","ts":1,}',
      '{"ph":"X","ts":1 2}',
      '{"ph":"X","ts":1,"args":{"a":tru}}',
      '{"ph":"X","ts":1,"args":{"a":[1,]}}',
      '{"ph":"X","ts":1,"args":{"a":1]}',
      '{}',
      '["X"]',
    ];
    for (const text of declined) expect(scanText(text), text).toBeNull();
  });

  it("decodes invalid UTF-8 in names and args as JSON.parse of the decoded bytes does", () => {
    const parts = (...pieces: (string | number[])[]) => new Uint8Array(pieces.flatMap((p) => (typeof p === "string" ? [...encode(p)] : p)));
    const withBadName = parts('{"ph":"X","ts":1,"name":"a', [0xff, 0xe2, 0x82], '","args":{"v":"', [0xc3], 'x"}}');
    expect(scanText(withBadName)).toEqual(expectedFromJson(withBadName));
    // Two invalid keys that decode to the same U+FFFD: one key, as JSON.parse makes it.
    const sameKeys = parts('{"ph":"X","ts":1,"args":{"', [0xff], '":1,"', [0xfe], '":2}}');
    expect(scanText(sameKeys)).toEqual(expectedFromJson(sameKeys));
    expect(scanText(sameKeys)!.args).toBe('{"\ufffd":2}');
  });

  it("slices text from ASCII chunks and copies it for B events, with the same strings either way", () => {
    const scanner = new TraceEventScanner();
    const chunk = encode('[{"ph":"X","ts":1,"name":"a long enough name","args":{"k":"v"}},{"ph":"B","ts":2,"name":"a long enough name","args":{"k":"v"}}]');
    const second = new TextDecoder().decode(chunk).indexOf("},{") + 2;
    expect(scanner.scan(chunk, 1, chunk.length, 1024)).toBe(second - 1);
    expect(eventOf(scanner)).toMatchObject({ ph: "X", name: "a long enough name", args: '{"k":"v"}' });
    expect(scanner.scan(chunk, second, chunk.length, 1024)).toBe(chunk.length - 1);
    expect(eventOf(scanner)).toMatchObject({ ph: "B", name: "a long enough name", args: '{"k":"v"}' });
    // The same object with other bytes: after newChunk the text is decoded afresh.
    chunk.set(encode("b"), new TextDecoder().decode(chunk).indexOf("a long"));
    scanner.newChunk();
    expect(scanner.scan(chunk, 1, chunk.length, 1024)).toBe(second - 1);
    expect(scanner.event.name).toBe("b long enough name");
  });

  it("reads every form of number as JSON.parse does, small integers by their digits and the rest past them", () => {
    const numbers = ["0", "1", "9", "10", "276", "47809095", "123456789012345", "1234567890123456", "12345678901234567", "9007199254740993", "99999999999999999999", "-0", "-5", "-123", "1.5", "10.0", "1e3", "1E3", "12e-2", "5e+2", "1e400", "0.25", "123456789012345.5"];
    for (const number of numbers) {
      for (const key of ["ts", "dur", "pid", "tid"]) {
        const text = key === "ts" ? `{"ph":"X","ts":${number}}` : `{"ph":"X","ts":1,"${key}":${number}}`;
        const event = scanText(text);
        expect(event, text).not.toBeNull();
        const expected = expectedFromJson(encode(text));
        expect(event, text).toEqual(expected);
        expect(Object.is(event![key as "ts"], expected[key as "ts"]), text).toBe(true);
      }
    }
    for (const number of ["01", "00", "1.", "1e", "1e+", ".5", "-", "+1", "1-2", "0x1"]) expect(scanText(`{"ph":"X","ts":${number}}`), number).toBeNull();
  });

  it("knows a key only by all its bytes: one that starts or ends like a known key is declined", () => {
    for (const key of ["nam", "names", "n\\u0061me", "c", "ca", "cats", "p", "pi", "pidx", "phh", "t", "ts2", "ti", "tt", "ttsx", "td", "tdu", "tdurx", "d", "du", "durs", "a", "arg", "argss", "s2", "S", "NAME"]) {
      const text = `{"ph":"X","ts":1,"${key}":1}`;
      expect(scanText(text), text).toBeNull();
    }
    // Known keys spaced from their colon are still taken.
    const spaced = '{"ph" :"X","name"\t: "n","cat"\n:"c","ts" : 1,"dur" :2,"pid": 1,"tid" :"t","s" :"g","tts":1 ,"tdur" :1 ,"args" :{"a":1}}';
    expect(scanText(spaced)).toEqual(expectedFromJson(encode(spaced)));
  });

  it("reads each event by its own keys, whatever order of keys the event before it had", () => {
    const scanner = new TraceEventScanner();
    const sequence = [
      '{"name":"a","cat":"c","ph":"X","ts":1,"dur":2,"pid":1,"tid":2,"args":{"i":1}}',
      '{"name":"b","cat":"c","ph":"X","ts":2,"dur":3,"pid":1,"tid":2,"args":{"i":2}}',
      '{"ph":"X","name":"c","ts":3,"cat":"c","dur":3,"tid":2,"pid":1}',
      '{"ph":"X","name":"c","ts":3,"cat":"c","dur":3,"tid":2,"pid":1,"args":{},"tts":1,"tdur":2,"s":"g"}',
      '{"ph":"X","name":"c","ts":3}',
      '{"ph" :"X","name": "c","ts" : 3}',
      '{"ph":"X","name2":"c","ts":3}',
      '{"ph":"X","names":"c","ts":3}',
      '{"ph":"X","nam":"c","ts":3}',
      '{"ph":"X","name":"c","name":"d","ts":3}',
      '{"ph":"X","name":"c","ts":3,"ts":4}',
      '{"ph":"X","ts":1}',
      '{"ph":"X","ts":1,"dur":1}',
      '{"ph":"B","ts":1,"s":"t"}',
      '{"ph":"i","ts":1,"s":"t","name":"x"}',
    ];
    for (let round = 0; round < 3; round++) {
      for (const text of round === 1 ? [...sequence].reverse() : sequence) {
        const bytes = encode(text);
        const valid = !/name2|names|"nam"|"c","name"|"ts":3,"ts"/.test(text);
        expect(scanner.scan(bytes, 0, bytes.length, 1024), text).toBe(valid ? bytes.length : -1);
        if (valid) expect(eventOf(scanner), text).toEqual(expectedFromJson(bytes));
        // Cut anywhere before its end, the same event is declined.
        for (let limit = 0; limit < bytes.length; limit += 3) expect(scanner.scan(bytes, 0, limit, 1024), `${text} ${limit}`).toBe(-1);
      }
    }
  });

  it("gives names and categories of every length the same text through its intern table, whatever filled the table before", () => {
    const scanner = new TraceEventScanner();
    const random = seeded(7);
    // More distinct texts than the table has slots, many alike: prefixes of one another, one byte apart, every length to beyond what it keeps.
    const texts: string[] = [];
    for (let length = 0; length <= 70; length++) texts.push("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_.:/-+abcdefghij".slice(0, length));
    for (let k = 0; k < 6000; k++) {
      const base = `module${k % 37}.function_${k}`;
      texts.push(base, base.slice(0, -1) + "x", `${k}`.padStart(1 + (k % 20), "z"));
    }
    for (let round = 0; round < 3; round++) {
      for (let k = 0; k < 3000; k++) {
        const name = pick(random, texts);
        const cat = pick(random, texts);
        const text = `{"ph":"${pick(random, ["X", "B", "i"])}","ts":1,"name":"${name}","cat":"${cat}","args":{"s":"${name}"}}`;
        const bytes = encode(text);
        // The event at the end of its bytes, or followed by others.
        const buffer = random() < 0.5 ? bytes : new Uint8Array([...bytes, ...encode(',{"ph":"X","ts":2}')]);
        scanner.newChunk();
        expect(scanner.scan(buffer, 0, buffer.length, 1024), text).toBe(bytes.length);
        expect(eventOf(scanner), text).toEqual(expectedFromJson(bytes));
      }
    }
    // A rewritten chunk (same object, new bytes) gives its new names.
    const chunk = encode('{"ph":"X","ts":1,"name":"module1.function_1"}');
    expect(scanner.scan(chunk, 0, chunk.length, 1024)).toBe(chunk.length);
    chunk[chunk.length - 3] = 0x32;
    scanner.newChunk();
    expect(scanner.scan(chunk, 0, chunk.length, 1024)).toBe(chunk.length);
    expect(scanner.event.name).toBe("module1.function_2");
  });

  it("reads args of every length the same, made from their bytes when short or sliced from the chunk's text when long", () => {
    for (let length = 0; length <= 40; length++) {
      for (const ph of ["X", "B"]) {
        const text = `{"ph":"${ph}","ts":1,"args":{"k":"${"v".repeat(length)}"},"name":"${"n".repeat(length)}"}`;
        expect(scanText(text), text).toEqual(expectedFromJson(encode(text)));
        const numeric = `{"ph":"${ph}","ts":1,"args":{"${"k".repeat(length + 1)}":${length}}}`;
        expect(scanText(numeric), numeric).toEqual(expectedFromJson(encode(numeric)));
      }
    }
  });

  it("takes an event only when it ends before the limit and nests no deeper than allowed", () => {
    const scanner = new TraceEventScanner();
    const text = encode('{"ph":"X","ts":1,"args":{"a":[{"b":true}]}},{"ph":"X","ts":2}');
    const end = new TextDecoder().decode(text).indexOf("},{") + 1;
    expect(scanner.scan(text, 0, text.length, 4)).toBe(end);
    expect(scanner.scan(text, 0, text.length, 3)).toBe(-1);
    for (let limit = 0; limit < end; limit++) expect(scanner.scan(text, 0, limit, 4), `limit ${limit}`).toBe(-1);
  });
});

describe("ScanBudget", () => {
  it("rests the scanner for 16 windows of 1024 events after a window where it took fewer than 3 in 4, then tries again", () => {
    const budget = new ScanBudget();
    const offer = (count: number, taken: (k: number) => boolean) => {
      let scanned = 0;
      for (let k = 0; k < count; k++) {
        if (!budget.shouldScan()) continue;
        scanned++;
        budget.record(taken(k));
      }
      return scanned;
    };
    expect(offer(10 * 1024, (k) => k % 4 !== 0)).toBe(10 * 1024);
    expect(offer(1024, (k) => k % 2 === 0)).toBe(1024);
    expect(offer(16 * 1024, () => true)).toBe(0);
    expect(offer(1024, () => true)).toBe(1024);
    expect(offer(4096, () => true)).toBe(4096);
  });
});

// ---------------------------------------------------------------------------------------------
// Differential test: random traces through the scanner and through JSON.parse alone.

const NAMES = ["Task", "module3.function_20", "\u001b esc\n", 'quote " inside', "back\\slash", "é 😀 ü", "\u0001 ctrl", "tab\there", "\ufeffbom", "\ud800 lone", "/slash/", "", "{brace}"];
const KEYS = ["i", "k", "data", "url", "1", "10", "__proto__", "é", "a b", 'q"', ""];

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)];

const SHORT_ESCAPES: Record<string, string> = { "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** JSON text of a string, with escapes written in several legal ways. */
function stringText(random: Random, value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    const r = random();
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "/" && r < 0.3) out += "\\/";
    else if (SHORT_ESCAPES[ch] && r > 0.2) out += SHORT_ESCAPES[ch];
    else if (code < 0x20 || (r < 0.03 && code < 0x10000)) out += "\\u" + code.toString(16).padStart(4, "0")[random() < 0.3 ? "toUpperCase" : "toLowerCase"]();
    else if ((code >= 0x10000 && r < 0.2) || (code >= 0xd800 && code < 0xe000)) {
      // A surrogate pair as two escapes; a lone surrogate can only be written as one.
      for (let u = 0; u < ch.length; u++) out += "\\u" + ch.charCodeAt(u).toString(16);
    }
    else out += ch;
  }
  return out + '"';
}

const NUMBER_FORMS = ["0", "-0", "1", "42", "1e3", "1E+3", "1.50", "1.5", "-7", "0.001", "123456789012345", "1234567890123456", "12345678901234567890", "1e21", "1e400", "5e-324", "2.5e-3", "-1.25"];

function spaces(random: Random): string {
  return random() < 0.1 ? pick(random, [" ", "\n", "\t ", "\r\n"]) : "";
}

/**
 * Random JSON text for a value inside args: objects, arrays, strings, numbers, literals. Untidy:
 * sometimes spaced, with a key twice, or integer-like and non-ASCII keys; tidy: none of those, so
 * that only its strings and numbers decide whether the scanner takes it.
 */
function argsValueText(random: Random, depth: number, tidy: boolean): string {
  const r = random();
  const space = () => (tidy ? "" : spaces(random));
  if (depth < 3 && r < 0.3) {
    const keys = Array.from({ length: Math.floor(random() * 4) }, () => pick(random, tidy ? KEYS.filter((k) => !/^\d+$|é/.test(k)) : KEYS));
    if (keys.length > 0 && random() < 0.1) keys.push(keys[0]);
    const unique = tidy ? [...new Set(keys)] : keys;
    return "{" + unique.map((k) => `${space()}${stringText(random, k)}${space()}:${space()}${argsValueText(random, depth + 1, tidy)}`).join(",") + "}";
  }
  if (depth < 3 && r < 0.4) return "[" + Array.from({ length: Math.floor(random() * 3) }, () => argsValueText(random, depth + 1, tidy)).join(`,${space()}`) + "]";
  if (r < 0.7) return stringText(random, pick(random, NAMES));
  if (r < 0.9) return pick(random, NUMBER_FORMS);
  return pick(random, ["true", "false", "null"]);
}

/** One random trace event (or something that is not one), as JSON text. */
function eventText(random: Random, ts: number): string {
  const phase = pick(random, ["X", "X", "X", "X", "B", "B", "E", "E", "i", "I", "R", "b", "e", "n", "s", "t", "f", "C", "M", "O", "P"]);
  const fields: [string, string][] = [["ph", `"${phase}"`]];
  const maybe = (key: string, value: () => string, p = 0.85) => {
    if (random() < p) fields.push([key, value()]);
  };
  maybe("name", () => (random() < 0.05 ? "7" : stringText(random, pick(random, NAMES))));
  maybe("cat", () => stringText(random, pick(random, ["bench", "blink", "é", "c\\d"])), 0.6);
  maybe("ts", () => (random() < 0.85 ? String(ts) : random() < 0.5 ? pick(random, NUMBER_FORMS) : `"${ts}"`), 0.95);
  maybe("dur", () => (random() < 0.8 ? String(Math.floor(random() * 50)) : pick(random, [...NUMBER_FORMS, "-5", '"3"'])), phase === "X" ? 0.9 : 0.1);
  maybe("pid", () => pick(random, ["1", "1", "2", '"1"', '"p"', "1.0", random() < 0.3 ? "null" : "1"]), 0.9);
  maybe("tid", () => pick(random, ["1", "2", "3", '"1"', '"t2"', random() < 0.3 ? "true" : "3"]), 0.9);
  maybe("s", () => pick(random, ['"t"', '"p"', '"g"', "1"]), phase === "i" || phase === "I" ? 0.6 : 0.05);
  maybe("id", () => pick(random, ["1", '"0x1"', "2"]), ["b", "e", "n", "s", "t", "f", "C", "P"].includes(phase) ? 0.9 : 0.03);
  maybe("tts", () => pick(random, NUMBER_FORMS), 0.1);
  maybe("tdur", () => pick(random, NUMBER_FORMS), 0.05);
  maybe("bind_id", () => '"0xA"', 0.05);
  maybe("flow_out", () => "true", 0.03);
  maybe("flow_in", () => "true", 0.03);
  maybe("cname", () => '"good"', 0.02);
  const argsKind = random();
  maybe("args", () => (argsKind < 0.4 ? `{"i":${Math.floor(random() * 1e6)},"s":${stringText(random, pick(random, NAMES))}}` : argsKind < 0.55 ? pick(random, ["{}", "[]", "null", "5", '{"name":"Main"}', '{"sort_index":-1}']) : argsValueText(random, 0, argsKind < 0.8)), 0.7);
  if (random() < 0.05) fields.push(pick(random, fields));
  for (let k = fields.length - 1; k > 0; k--) {
    if (random() < 0.3) {
      const j = Math.floor(random() * (k + 1));
      [fields[k], fields[j]] = [fields[j], fields[k]];
    }
  }
  const r = random();
  if (r < 0.01) return pick(random, ['"not an event"', "5", "[1,2]", "null", "[]", '{"ph":1}']);
  return "{" + fields.map(([k, v]) => `${spaces(random)}"${k}"${spaces(random)}:${spaces(random)}${v}${spaces(random)}`).join(",") + "}";
}

/** Bytes of a random trace: an array, Chrome's unterminated array, or {traceEvents}; some names with raw invalid UTF-8. */
function randomTrace(random: Random, events: number): Uint8Array {
  const texts: string[] = [];
  let ts = 1000;
  for (let e = 0; e < events; e++) {
    ts += Math.floor(random() * 20) - 2;
    texts.push(eventText(random, ts));
  }
  const form = random();
  const joined = texts.join(random() < 0.5 ? "," : ",\n");
  const text = form < 0.4 ? `[${joined}]` : form < 0.6 ? `[\n${texts.map((t) => t + ",\n").join("")}` : `{"traceEvents":[${joined}],"displayTimeUnit":"ms"}`;
  const bytes = encode(text);
  // Some names "Task" get a raw invalid byte (0xff) for their T.
  for (let at = bytes.indexOf(0x54); at >= 0; at = bytes.indexOf(0x54, at + 1)) {
    if (bytes[at - 1] === 0x22 && bytes[at + 1] === 0x61 && random() < 0.2) bytes[at] = 0xff;
  }
  return bytes;
}

/** Chunks of random sizes, the same for every run of one seed. */
function randomChunks(bytes: Uint8Array, random: Random): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  const sizes = [1, 3, 17, 200, 4096, 1 << 16, bytes.length];
  const size = pick(random, sizes);
  for (let at = 0; at < bytes.length; ) {
    const n = random() < 0.3 ? 1 + Math.floor(random() * 2 * size) : size;
    chunks.push(bytes.subarray(at, Math.min(bytes.length, at + n)));
    at += n;
  }
  return chunks;
}

async function importTrace(chunks: Uint8Array[], scan: "adaptive" | "always" | "never") {
  const sink = new MemorySink();
  const builder = new EvidenceBuilder(sink, 512);
  let error: unknown = null;
  try {
    await parseChromeTrace(
      {
        source: {
          fileName: "trace.json",
          async *chunks() {
            yield* chunks;
          },
        },
        builder,
        limits: DEFAULT_IMPORT_LIMITS,
      },
      scan,
    );
  } catch (caught) {
    error = caught instanceof EvidenceParseError ? { message: caught.message, at: caught.at } : caught;
    return { error };
  }
  const summary = await builder.finish();
  return { tables: sink.tables, summary };
}

/** How many of the trace's events the scanner takes, offered each (and declining it) as the importer's parser would. */
function scannedCount(bytes: Uint8Array): number {
  const scanner = new TraceEventScanner();
  let count = 0;
  const parser = new JsonStreamParser({
    allowUnterminatedArray: true,
    select: (path) => (path.length === 0 || (path.length === 1 && path[0] === "traceEvents") ? "stream" : typeof path[0] === "number" || path.length === 2 ? "materialize" : "skip"),
    rawElement: (_path, buf, start, limit, maxNesting) => {
      if (scanner.scan(buf, start, limit, maxNesting) >= 0) count++;
      return -1;
    },
  });
  parser.write(bytes);
  parser.end();
  return count;
}

describe("chrome-trace import with and without the event scanner", () => {
  it("gives identical rows, limitations and metadata for random traces of every phase, form and chunking", async () => {
    let scanned = 0;
    let total = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const random = seeded(seed);
      const events = 20 + Math.floor(random() * 400);
      const bytes = randomTrace(random, events);
      const chunks = randomChunks(bytes, random);
      const withScan = await importTrace(chunks, "always");
      const without = await importTrace(chunks, "never");
      expect(withScan, `seed ${seed}`).toStrictEqual(without);
      if (seed % 10 === 0) expect(await importTrace(chunks, "adaptive"), `seed ${seed}`).toStrictEqual(without);
      total += events;
      scanned += scannedCount(bytes);
    }
    // The comparison means something only if the scanner took a good share of the events (and declined others).
    expect(scanned / total).toBeGreaterThan(0.15);
    expect(scanned / total).toBeLessThan(0.9);
  });

  it("gives identical results when the scanner rests through a stretch of events it declines and resumes after", async () => {
    const random = seeded(5);
    const texts: string[] = [];
    for (let e = 0; e < 30_000; e++) {
      const stretch = e < 5000 || e >= 25_000 ? "X" : "C";
      texts.push(stretch === "X" ? `{"name":"f${e % 50}","ph":"X","ts":${e},"dur":1,"pid":1,"tid":${e % 3},"args":{"i":${e}}}` : `{"name":"c","ph":"C","ts":${e},"pid":1,"args":{"v":${e % 7}}}`);
      if (random() < 0.01) texts.push(eventText(random, e));
    }
    const bytes = encode(`[${texts.join(",\n")}]`);
    const chunks = randomChunks(bytes, random);
    expect(await importTrace(chunks, "adaptive")).toStrictEqual(await importTrace(chunks, "never"));
  });

  it("gives identical results for args taken as their bytes: within their bound, at it, past it (cut, with the limitation), and args of B events merged at their E", async () => {
    const texts: string[] = [];
    for (let e = 0; e < 5 * 2048 + 50; e++) {
      // A vector of repeating args, then unique ones: after the third vector the args column stops
      // coding and takes bytes as they are.
      const args = e % 2048 === 7 ? `{"s":"${"x".repeat(16_384 - 8 + (e % 3) - 1)}"}` : e < 2048 ? `{"k":${e % 3}}` : `{"i":${e}}`;
      const ph = e % 5 === 0 ? "i" : "X";
      texts.push(`{"name":"f${e % 50}","ph":"${ph}","ts":${e},"dur":1,"pid":1,"tid":${e % 3},"args":${args}}`);
      if (e % 100 === 0) texts.push(`{"name":"b","ph":"B","ts":${e},"pid":1,"tid":9,"args":{"a":${e}}}`, `{"ph":"E","ts":${e + 1},"pid":1,"tid":9,"args":{"z":1}}`);
    }
    const bytes = encode(`[${texts.join(",\n")}]`);
    const chunks = randomChunks(bytes, seeded(9));
    const scanned = await importTrace(chunks, "always");
    expect(scanned).toStrictEqual(await importTrace(chunks, "never"));
    expect(JSON.stringify(scanned.summary)).toContain("FIELD_TRUNCATED");
  });

  it("gives identical results for a malformed trace, with the error at the same byte", async () => {
    for (let seed = 100; seed < 130; seed++) {
      const random = seeded(seed);
      const bytes = randomTrace(random, 50);
      // Break one byte somewhere (a stray character where a delimiter is).
      const at = 1 + Math.floor(random() * (bytes.length - 2));
      const broken = new Uint8Array(bytes);
      broken[at] = pick(random, [0x78, 0x2c, 0x7d, 0x5d, 0x22, 0x01]);
      const chunks = randomChunks(broken, random);
      expect(await importTrace(chunks, "always"), `seed ${seed}`).toStrictEqual(await importTrace(chunks, "never"));
    }
  });
});
