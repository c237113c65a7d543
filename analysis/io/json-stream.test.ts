import { describe, expect, it } from "vitest";
import { EvidenceParseError, InputBoundError } from "../formats/errors";
import { JsonStreamParser, parseJsonBytes, parseJsonStream, type JsonPath, type JsonSelection, type JsonStreamOptions, type JsonValue } from "./json-stream";

const encode = (text: string) => new TextEncoder().encode(text);

/** Feeds `bytes` split at the given cut points and returns what onValue heard. */
function parseSplit(bytes: Uint8Array, cuts: number[], options: JsonStreamOptions = {}): { path: (string | number)[]; value: JsonValue; offset: number }[] {
  const heard: { path: (string | number)[]; value: JsonValue; offset: number }[] = [];
  const parser = new JsonStreamParser({ ...options, onValue: (path, value, offset) => heard.push({ path: [...path], value, offset }) });
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    parser.write(bytes.subarray(from, cut));
    from = cut;
  }
  parser.end();
  return heard;
}

function parseError(text: string | Uint8Array, options: JsonStreamOptions = {}): EvidenceParseError {
  try {
    parseSplit(typeof text === "string" ? encode(text) : text, [], options);
  } catch (error) {
    if (error instanceof EvidenceParseError) return error;
    throw error;
  }
  throw new Error(`expected a parse error for ${String(text)}`);
}

/** Deterministic pseudo-random numbers in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return state / 2 ** 32;
  };
}

const TRICKY_STRINGS = ["", "plain", 'quote " inside', "back\\slash", "brace { [ ] } inside", "é 😀 ü", "\u0001 control", "__proto__", "tab\there", "\ud800 lone"];

/** A random JSON value: objects and arrays up to depth 4, tricky strings and numbers. */
function randomValue(random: () => number, depth: number): unknown {
  const pick = random();
  if (depth < 4 && pick < 0.3) {
    const object: Record<string, unknown> = {};
    const size = Math.floor(random() * 5);
    for (let i = 0; i < size; i++) object[TRICKY_STRINGS[Math.floor(random() * TRICKY_STRINGS.length)] + (random() < 0.5 ? i : "")] = randomValue(random, depth + 1);
    return object;
  }
  if (depth < 4 && pick < 0.45) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  if (pick < 0.7) return TRICKY_STRINGS[Math.floor(random() * TRICKY_STRINGS.length)];
  if (pick < 0.8) return [0, -0.5, 1e21, 123456.789, -42, 2 ** 53 + 2, 5e-324][Math.floor(random() * 7)];
  return [true, false, null][Math.floor(random() * 3)];
}

const SAMPLE_DOCUMENT = String.raw`{"a":[1,-2.5,3e2,0,-0.125E-2,1.5e+3,12345678901234567890],"s":"x\"y\\z\/\b\f\n\r\t\u00e9\ud83d\ude00","e":"","u":"héllo wörld 😀","n":null,"t":true,"f":false,"o":{"__proto__":{"deep":[[],{}]}} , "big": 9007199254740993, "tiny": 1e-400, "huge": 1e400}`;

describe("JsonStreamParser", () => {
  it("materializes a document exactly as JSON.parse does", () => {
    expect(parseJsonBytes(encode(SAMPLE_DOCUMENT))).toEqual(JSON.parse(SAMPLE_DOCUMENT));
    const parsed = parseJsonBytes(encode(SAMPLE_DOCUMENT)) as Record<string, Record<string, unknown>>;
    // "__proto__" is an own key, as with JSON.parse, not a prototype swap.
    expect(Object.keys(parsed.o)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(parsed.o)).toBe(Object.prototype);
  });

  it("gives the same result whatever the chunk boundaries (every cut, and every pair of cuts)", () => {
    const bytes = encode(SAMPLE_DOCUMENT);
    const expected = JSON.parse(SAMPLE_DOCUMENT);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(parseSplit(bytes, [cut])[0].value).toEqual(expected);
    }
    const small = encode(String.raw`[{"k":"a\u00e9\"b"},-12.5e1,true,null,"😀"]`);
    const smallExpected = JSON.parse(new TextDecoder().decode(small));
    for (let a = 0; a <= small.length; a++) {
      for (let b = a; b <= small.length; b++) expect(parseSplit(small, [a, b])[0].value).toEqual(smallExpected);
    }
    // One byte at a time.
    expect(parseSplit(bytes, Array.from({ length: bytes.length }, (_, i) => i))[0].value).toEqual(expected);
  });

  it("decodes numbers exactly like JSON.parse, including the fast path's edges", () => {
    const numbers = ["0", "-0", "1", "-1", "0.1", "0.3", "123456789012345", "1234567890123456", "0.000001", "1e22", "1e23", "2.5e-22", "2.5e-23", "1.7976931348623157e308", "5e-324", "4.35", "1721000123.456", "-98765.4321e-3", "123.456e5"];
    for (const text of numbers) {
      const value = parseJsonBytes(encode(text)) as number;
      expect(Object.is(value, JSON.parse(text)), text).toBe(true);
    }
    for (let i = 0; i < 2000; i++) {
      const text = (Math.random() * 10 ** Math.floor(Math.random() * 12)).toFixed(Math.floor(Math.random() * 7));
      expect(parseJsonBytes(encode(text))).toBe(JSON.parse(text));
    }
  });

  it("streams the children of selected containers and materializes or skips the rest by path", () => {
    const text = `{"traceEvents":[{"ph":"X","args":{"a":[1,2]}},{"ph":"B"}],"samples":[3,4,5],"ignored":{"x":"${"y".repeat(100)}"},"startTime":7}`;
    const select = (path: JsonPath): JsonSelection => {
      if (path.length === 0 || path[0] === "traceEvents" || path[0] === "samples") return path.length <= 1 ? "stream" : "materialize";
      return path[0] === "ignored" ? "skip" : "materialize";
    };
    const bytes = encode(text);
    for (const cut of [0, 10, 30, 60, 90, bytes.length]) {
      const heard = parseSplit(bytes, [cut], { select });
      expect(heard.map((h) => [h.path, h.value])).toEqual([
        [["traceEvents", 0], { ph: "X", args: { a: [1, 2] } }],
        [["traceEvents", 1], { ph: "B" }],
        [["samples", 0], 3],
        [["samples", 1], 4],
        [["samples", 2], 5],
        [["startTime"], 7],
      ]);
      // Offsets name the first byte of each value.
      expect(heard.map((h) => text[h.offset])).toEqual(["{", "{", "3", "4", "5", "7"]);
    }
  });

  it("skips huge strings inside skipped values without keeping them", () => {
    const payload = "z".repeat(100_000);
    const text = `{"keep":1,"drop":"${payload}","also":[2]}`;
    const heard = parseSplit(encode(text), [20, 50_000], {
      maxTokenBytes: 1000,
      select: (path) => (path.length === 0 ? "stream" : path[0] === "drop" ? "skip" : "materialize"),
    });
    expect(heard.map((h) => [h.path, h.value])).toEqual([
      [["keep"], 1],
      [["also"], [2]],
    ]);
    // The same string kept is over the token bound.
    expect(() => parseSplit(encode(text), [20, 50_000], { maxTokenBytes: 1000 })).toThrow(InputBoundError);
  });

  it("accepts Chrome's unterminated top-level array, with or without a trailing comma, only when asked", () => {
    for (const text of ['[{"a":1},{"b":2},\n', '[{"a":1},{"b":2}', '[{"a":1},{"b":2} , ']) {
      const heard = parseSplit(encode(text), [], { allowUnterminatedArray: true, select: (p) => (p.length === 0 ? "stream" : "materialize") });
      expect(heard.map((h) => h.value)).toEqual([{ a: 1 }, { b: 2 }]);
      expect(parseError(text)).toBeInstanceOf(EvidenceParseError);
    }
    expect(parseJsonBytes(encode("[1,2,"), { allowUnterminatedArray: true })).toEqual([1, 2]);
    expect(parseJsonBytes(encode("["), { allowUnterminatedArray: true })).toEqual([]);
    // Only the top level may stay open, and a cut element is still truncation.
    expect(parseError('[{"a":[1,2', { allowUnterminatedArray: true }).at.offset).toBe(10);
    expect(parseError('[{"a":1', { allowUnterminatedArray: true }).at.offset).toBe(7);
    expect(parseError('{"a":1,', { allowUnterminatedArray: true }).at.offset).toBe(7);
  });

  it("reports truncated input at the byte where it stops, naming what was cut", () => {
    const cases: [string, RegExp][] = [
      ['{"a":[1,2', /inside an array/],
      ['{"a":"abc', /inside a string/],
      ['{"a"', /after a property name/],
      ['{"a":tr', /inside a literal/],
      ['{"a":1', /inside an object/],
      ["[", /inside an array/],
    ];
    for (const [text, reason] of cases) {
      const error = parseError(text);
      expect(error.reason).toMatch(reason);
      expect(error.at.offset).toBe(encode(text).length);
    }
  });

  it("reports invalid bytes and grammar errors at their offset", () => {
    const cases: [string, number][] = [
      ['{"a":1,}', 7],
      ['{"a" 1}', 5],
      ["[1 2]", 3],
      ["[01]", 1],
      ["[1.]", 1],
      ["[-]", 1],
      ["[1e]", 1],
      ["[nul]", 1],
      ["[True]", 1],
      ['["a\\x"]', 3],
      ['["\\u12G4"]', 2],
      ['["a\u0001"]', 3],
      ["[1] x", 4],
      ["{1:2}", 1],
      ["[1}", 2],
      ["\u00ff", 0],
    ];
    for (const [text, offset] of cases) {
      const error = parseError(text);
      expect(error.at.offset, text).toBe(offset);
    }
  });

  it("treats empty and whitespace-only input as malformed, and skips a UTF-8 byte-order mark", () => {
    expect(parseError("").at.offset).toBe(0);
    expect(parseError("  \n").reason).toMatch(/empty/);
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...encode('{"a":1}')]);
    for (let cut = 0; cut <= withBom.length; cut++) expect(parseSplit(withBom, [cut])[0].value).toEqual({ a: 1 });
  });

  it("enforces the nesting depth limit with InputBoundError", () => {
    const deep = "[".repeat(5) + "]".repeat(5);
    expect(parseJsonBytes(encode(deep), { maxDepth: 5 })).toEqual([[[[[]]]]]);
    try {
      parseJsonBytes(encode(deep), { maxDepth: 4 });
      throw new Error("expected a depth error");
    } catch (error) {
      expect(error).toBeInstanceOf(InputBoundError);
      expect((error as InputBoundError).bound).toBe("depth");
      expect((error as InputBoundError).message).toMatch(/byte 4/);
    }
  });

  it("materializes the elements of a streamed array with the values, errors and bounds of a whole document", () => {
    const stream = { select: (p: JsonPath): JsonSelection => (p.length === 0 ? "stream" : "materialize") };
    const texts = [SAMPLE_DOCUMENT, String.raw`{"name":"a\u0000b","args":{"i":[1,{"x":null}]}}`, "[]", "{}", '[[["deep"]]]'];
    const elements = texts.map((t) => JSON.parse(t) as JsonValue);
    const bytes = encode(`[${texts.join(",\n")}]`);
    for (const cuts of [[], [1], [bytes.length >> 1], Array.from({ length: 40 }, (_, i) => i * 23)]) {
      const heard = parseSplit(bytes, cuts.filter((c) => c <= bytes.length), stream);
      expect(heard.map((h) => h.value)).toEqual(elements);
      expect(heard.map((h) => h.path)).toEqual(elements.map((_, i) => [i]));
    }
    // Offsets are where each element starts.
    expect(parseSplit(encode('[{"a":1}, {"b":2}]'), [], stream).map((h) => h.offset)).toEqual([1, 10]);
    // A malformed element is reported at the same offset as without the fast path.
    for (const [text, offset] of [['[{"a":1}, {"a":1,}]', 17], ['[{"a":"x\u0001"}]', 8], ['[{"a":01}]', 6], ['[{"a":1]]', 7]] as [string, number][]) {
      try {
        parseSplit(encode(text), [], stream);
        throw new Error(`expected a parse error for ${text}`);
      } catch (error) {
        expect(error, text).toBeInstanceOf(EvidenceParseError);
        expect((error as EvidenceParseError).at.offset, text).toBe(offset);
      }
    }
    // Bounds hold for whole elements: a long string or number cut by a chunk boundary, and nesting.
    expect(() => parseSplit(encode(`[{"a":"${"x".repeat(100)}"}]`), [20], { ...stream, maxTokenBytes: 50 })).toThrow(InputBoundError);
    expect(() => parseSplit(encode(`[{"a":${"1".repeat(100)}}]`), [20], { ...stream, maxTokenBytes: 50 })).toThrow(InputBoundError);
    expect(() => parseSplit(encode("[[[[[1]]]]]"), [], { ...stream, maxDepth: 4 })).toThrow(InputBoundError);
    expect(parseSplit(encode("[[[[1]]]]"), [], { ...stream, maxDepth: 4 })[0].value).toEqual([[[1]]]);
  });

  it("builds runs of elements with JSON.parse exactly as token by token: values, offsets, and the order of select and onValue", () => {
    const random = seeded(7);
    const texts: string[] = [];
    for (let i = 0; i < 3000; i++) texts.push(JSON.stringify(randomValue(random, 0)).replace(/,/g, () => (random() < 0.1 ? " ,\n " : ",")));
    const offsets: number[] = [];
    let text = "[";
    texts.forEach((t, i) => {
      if (i > 0) text += random() < 0.5 ? "," : " ,\r\n\t";
      offsets.push(new TextEncoder().encode(text).length);
      text += t;
    });
    text += "]";
    const bytes = encode(text);
    const expected = texts.map((t) => JSON.parse(t) as JsonValue);
    for (const size of [7, 4096, 1 << 16, bytes.length]) {
      const log: string[] = [];
      const heard: { value: JsonValue; offset: number }[] = [];
      const parser = new JsonStreamParser({
        select: (p) => {
          if (p.length === 1) log.push(`select ${p[0]}`);
          return p.length === 0 ? "stream" : "materialize";
        },
        onValue: (p, value, offset) => {
          log.push(`value ${p[0]}`);
          heard.push({ value, offset });
        },
      });
      for (let at = 0; at < bytes.length; at += size) parser.write(bytes.subarray(at, at + size));
      parser.end();
      expect(heard.map((h) => h.value), `chunks of ${size}`).toEqual(expected);
      expect(heard.map((h) => h.offset), `chunks of ${size}`).toEqual(offsets);
      expect(log, `chunks of ${size}`).toEqual(expected.flatMap((_, i) => [`select ${i}`, `value ${i}`]));
    }
  });

  it("leaves an element of a run that select streams or skips to the token path, and reports a bad element deep in a long run at its byte", () => {
    const elements = Array.from({ length: 2500 }, (_, i) => ({ i, list: [i, { s: `e${i}` }] }));
    const bytes = encode(JSON.stringify(elements));
    const heard = parseSplit(bytes, [], {
      select: (p) => {
        if (p.length !== 1) return p.length === 0 ? "stream" : "materialize";
        const index = p[0] as number;
        return index === 1500 ? "stream" : index % 7 === 3 ? "skip" : "materialize";
      },
    });
    const streamed = heard.filter((h) => h.path.length > 1);
    expect(streamed.map((h) => h.path)).toEqual([[1500, "i"], [1500, "list"]]);
    expect(heard.filter((h) => h.path.length === 1).map((h) => (h.value as { i: number }).i)).toEqual(elements.filter((e) => e.i % 7 !== 3 && e.i !== 1500).map((e) => e.i));
    // The text is ASCII, so string indices are byte offsets; the error is at the stray "x".
    const bad = JSON.stringify(elements).replace('"e2000"', '"e2000" x');
    const error = parseError(bad, { select: (p) => (p.length === 0 ? "stream" : "materialize") });
    expect(error.message).toMatch(/unexpected character: expected ',' or '}'/);
    expect(error.message).not.toContain("x'");
    expect(error.at.offset).toBe(bad.indexOf('"e2000" x') + 8);
  });

  it("offers rawElement each materialized object and array of a streamed array, in order, where onValue would hear it", () => {
    const random = seeded(11);
    const texts = Array.from({ length: 3000 }, () => JSON.stringify(randomValue(random, 0)));
    const text = `[${texts.join(", ")}]`;
    const bytes = encode(text);
    const starts: number[] = [];
    for (let i = 0, at = 1; i < texts.length; at += encode(texts[i]).length + 2, i++) starts.push(at);
    const expected = texts.map((t) => JSON.parse(t) as JsonValue);
    // Taking every other element, or one in 13 (then runs of declined ones are parsed ahead, one taken after all).
    for (const [size, takes] of [5, 300, 4096, bytes.length].flatMap((size) => [(i: number) => i % 2 === 0, (i: number) => i % 13 === 12].map((t) => [size, t] as const))) {
      const log: string[] = [];
      const taken: JsonValue[] = [];
      const parser = new JsonStreamParser({
        select: (p) => {
          if (p.length === 1) log.push(`select ${p[0]}`);
          // Every 50th element is skipped: never offered.
          return p.length === 0 ? "stream" : (p[0] as number) % 50 === 49 ? "skip" : "materialize";
        },
        onValue: (p, value, offset) => {
          log.push(`value ${p[0]}`);
          expect(value).toEqual(expected[p[0] as number]);
          expect(offset).toBe(starts[p[0] as number]);
        },
        rawElement: (p, chunk, start, limit, maxNesting, offset) => {
          const index = p[0] as number;
          const length = encode(texts[index]).length;
          expect(offset).toBe(starts[index]);
          expect(maxNesting).toBe(1023);
          expect(limit).toBeLessThanOrEqual(chunk.length);
          // Takes every other element that ends before the limit; the rest go on to onValue.
          const take = takes(index) && start + length <= limit;
          if (take) expect(new TextDecoder().decode(chunk.subarray(start, start + length))).toBe(texts[index]);
          log.push(`${take ? "took" : "declined"} ${index}`);
          if (take) taken.push(JSON.parse(texts[index]) as JsonValue);
          return take ? start + length : -1;
        },
      });
      for (let at = 0; at < bytes.length; at += size) parser.write(bytes.subarray(at, at + size));
      parser.end();
      // Each element: select, then (when offered) the hook, then onValue unless the hook took it.
      let offered = 0;
      let e = 0;
      for (const line of log) {
        const [what, index] = line.split(" ");
        if (what === "select") expect(Number(index), `chunks of ${size}`).toBe(e++);
        else expect(Number(index), `${line}, chunks of ${size}`).toBe(e - 1);
        if (what === "took" || what === "declined") offered++;
      }
      expect(e).toBe(texts.length);
      expect(log.filter((l) => l.startsWith("value")).length + taken.length, `chunks of ${size}`).toBe(texts.length - Math.floor(texts.length / 50));
      expect(log.filter((l) => l.startsWith("took") || l.startsWith("declined")).every((l) => Number(l.split(" ")[1]) % 50 !== 49)).toBe(true);
      // Every object and array that is not skipped is offered; cut by a chunk boundary, it cannot be taken.
      const composites = [...texts.keys()].filter((i) => /^[[{]/.test(texts[i]) && i % 50 !== 49);
      expect(offered, `chunks of ${size}`).toBe(composites.length);
      if (size === bytes.length) expect(taken.length).toBe(composites.filter(takes).length);
    }
  });

  it("reports a malformed element the hook declines at its byte, as without the hook", () => {
    const stream = { select: (p: JsonPath): JsonSelection => (p.length === 0 ? "stream" : "materialize") };
    for (const [text, offset] of [['[{"a":1}, {"a":1,}]', 17], ['[{"a":1},{"a":01}]', 14], ['[{"a":1},{"a":1]]', 15]] as [string, number][]) {
      const offered: number[] = [];
      const error = parseError(text, {
        ...stream,
        rawElement: (_p, _chunk, _start, _limit, _nesting, at) => {
          offered.push(at);
          return -1;
        },
      });
      expect(error.at.offset, text).toBe(offset);
      expect(parseError(text, stream).at.offset, text).toBe(offset);
      expect(offered, text).toEqual([1, text.indexOf("{", 2)]);
    }
    // The hook is told how deep an element may nest, and how far it may reach.
    const bounds: number[][] = [];
    const bounded = { ...stream, maxDepth: 4, maxTokenBytes: 6, rawElement: (_p: JsonPath, _b: Uint8Array, start: number, limit: number, nesting: number) => (bounds.push([start, limit, nesting]), -1) };
    expect(() => parseSplit(encode("[[[[[1]]]]]"), [], bounded)).toThrow(InputBoundError);
    expect(bounds).toEqual([[1, 7, 3]]);
    // What the hook takes is not read again: the parser goes on after it.
    const took = parseSplit(encode('[{"x":1} , {"y":2},\n{"z":3}]'), [], { ...stream, rawElement: (_p, chunk, start) => (chunk[start + 2] === 0x79 ? start + 7 : -1) });
    expect(took.map((h) => h.value)).toEqual([{ x: 1 }, { z: 3 }]);
  });

  it("keeps a string's leading U+FEFF on every path, as JSON.parse does", () => {
    const bytes = encode('[{"s":"\ufeffa"},"\ufeffb",{"\ufeffk":"\ufeff"}]');
    const expected = JSON.parse('[{"s":"\ufeffa"},"\ufeffb",{"\ufeffk":"\ufeff"}]') as JsonValue[];
    const stream = { select: (p: JsonPath): JsonSelection => (p.length === 0 ? "stream" : "materialize") };
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(parseSplit(bytes, [cut], stream).map((h) => h.value), `cut at ${cut}`).toEqual(expected);
      expect(parseSplit(bytes, [cut])[0].value, `cut at ${cut}`).toEqual(expected);
    }
  });

  it("parses an async chunk stream and runs afterChunk between chunks", async () => {
    const chunks = [encode('{"x":[1,'), encode("2,3]}")];
    let afterChunks = 0;
    const values: JsonValue[] = [];
    await parseJsonStream(
      (async function* () {
        yield* chunks;
      })(),
      { select: (p) => (p.length < 2 ? "stream" : "materialize"), onValue: (_p, v) => values.push(v) },
      () => {
        afterChunks++;
      },
    );
    expect(values).toEqual([1, 2, 3]);
    expect(afterChunks).toBe(2);
  });
});

describe("JsonStreamParser on hostile input", () => {
  it("rejects absurdly long literals and handles absurdly long numbers without building huge argument lists", () => {
    expect(parseError(`[${"t".repeat(200_000)}]`).at.offset).toBe(1);
    expect(parseJsonBytes(encode(`[${"9".repeat(200_000)}]`))).toEqual([Infinity]);
  });
});
