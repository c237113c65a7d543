import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { demangle, demangledFrame } from "./demangle";
import { demangleItanium } from "./itanium";
import { demangleRustLegacy, demangleRustV0 } from "./rust";

const FIXTURES = new URL("../../test/fixtures/symbols/", import.meta.url);

/** `mangled<TAB>demangled` lines written by c++filt (see test/fixtures/symbols/README.md). */
function pairs(file: string): [string, string][] {
  const bytes = readFileSync(new URL(file, FIXTURES));
  const text = file.endsWith(".gz") ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => line.split("\t") as [string, string]);
}

/** The pairs on which `demangle` disagrees with c++filt (empty when it agrees on all). */
function disagreements(list: [string, string][], fn: (s: string) => string | null = demangle): string[] {
  return list.filter(([mangled, expected]) => fn(mangled) !== expected).map(([mangled, expected]) => `${mangled}\n  c++filt: ${expected}\n  ours:    ${fn(mangled)}`);
}

describe("symbol demangling", () => {
  it("shows _Z5deltav as delta(), keeping the mangled name beside it", () => {
    expect(demangle("_Z5deltav")).toBe("delta()");
    expect(demangledFrame({ name: "_Z5deltav", kind: "native", module: "/srv/app" })).toEqual({ name: "delta()", kind: "native", module: "/srv/app", mangledName: "_Z5deltav" });
    // Not mangled, or not wholly readable: left as it is, with no mangled name.
    for (const name of ["main", "_Zqq", "_Z", "_R", "__libc_start_main", "_ZN3foo", "java.lang.Thread.run()", "_Z5delta v"]) {
      expect(demangledFrame({ name, kind: "native" })).toEqual({ name, kind: "native" });
    }
  });

  it("agrees with c++filt on every symbol g++ 12 made of a file of namespaces, templates, operators and lambdas", () => {
    const list = pairs("cxx-sample.g++.tsv");
    expect(list.length).toBe(349);
    expect(disagreements(list)).toEqual([]);
    // A few of them, spelled out.
    const of = new Map(list);
    expect(of.get("_ZN3geo4GridIiLi3EE4eachIZ4mainEUliE0_EEvT_")).toBe("void geo::Grid<int, 3>::each<main::{lambda(int)#2}>(main::{lambda(int)#2})");
    expect(of.get("_Z6arraysRA4_iPFiiiEMN3geo5PointEiMS4_KFdvE")).toBe("arrays(int (&) [4], int (*)(int, int), int geo::Point::*, double (geo::Point::*)() const)");
    expect(of.get("_ZNK3geo5PointcvbEv")).toBe("geo::Point::operator bool() const");
  });

  it("agrees with c++filt on all 5,864 C++ symbols libstdc++.so.6 exports", () => {
    const list = pairs("libstdc++.so.6.tsv.gz");
    expect(list.length).toBe(5864);
    expect(disagreements(list)).toEqual([]);
  });

  it("agrees with c++filt -i on every Rust symbol of a crate built with v0 and with legacy mangling", () => {
    const v0 = pairs("rust-sample.v0.tsv");
    const legacy = pairs("rust-sample.legacy.tsv");
    expect([v0.length, legacy.length]).toEqual([654, 26]);
    expect(disagreements(v0)).toEqual([]);
    expect(disagreements(legacy)).toEqual([]);
    expect(demangle("_RNvXs_Cseg5vz0rOR1E_6sampleNtB4_6SquareNtB4_5Shape4area")).toBe("<sample::Square as sample::Shape>::area");
    expect(demangle("_ZN6sample16Counter$LT$T$GT$3add17h2cddd1acb9da567fE")).toBe("sample::Counter<T>::add");
    // A legacy Rust symbol is not read as C++ (c++filt would say sample::main::h…).
    expect(demangleItanium("_ZN6sample4main17hcac3bc4167d1b50fE")).toBe("sample::main::hcac3bc4167d1b50f");
    expect(demangle("_ZN6sample4main17hcac3bc4167d1b50fE")).toBe("sample::main");
  });

  it("agrees with c++filt on symbols g++ makes here now (skipped without g++, nm and c++filt)", (ctx) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "emberscope-demangle-"));
    const binary = path.join(dir, "sample");
    let symbols: string[];
    let expected: string[];
    try {
      execFileSync("g++", ["-O0", "-std=c++17", "-o", binary, new URL("cxx-sample.cpp", FIXTURES).pathname], { stdio: "ignore", timeout: 120_000 });
      symbols = [...new Set(execFileSync("nm", [binary], { encoding: "utf8" }).split("\n").map((l) => l.split(" ").pop() ?? "").filter((s) => s.startsWith("_Z")))];
      expected = execFileSync("c++filt", { input: symbols.join("\n"), encoding: "utf8" }).trim().split("\n");
    } catch (error) {
      ctx.skip(true, `g++, nm or c++filt is not usable here: ${(error as Error).message.split("\n")[0]}`);
      return;
    }
    expect(symbols.length).toBeGreaterThan(100);
    expect(disagreements(symbols.map((s, i) => [s, expected[i]]))).toEqual([]);
  });

  it("reads GCC's clone suffixes, special names and Mach-O's extra underscore as c++filt does", () => {
    expect(demangle("_Z5deltav.cold")).toBe("delta() [clone .cold]");
    expect(demangle("_ZL5twicei.constprop.0.isra.0")).toBe("twice(int) [clone .constprop.0] [clone .isra.0]");
    expect(demangle("_ZTVN3geo5PointE")).toBe("vtable for geo::Point");
    expect(demangle("_ZThn16_N3geo5PointD1Ev")).toBe("non-virtual thunk to geo::Point::~Point()");
    expect(demangle("_ZGVZ4mainE1x")).toBe("guard variable for main::x");
    expect(demangle("__Z5deltav")).toBe("delta()");
    expect(demangle("_Z5deltav@plt")).toBe("delta()@plt");
  });

  it("never throws and stays quick on cut, altered or hostile symbols", () => {
    const list = [...pairs("cxx-sample.g++.tsv"), ...pairs("rust-sample.v0.tsv")].map(([m]) => m.replace(/@.*/, ""));
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (const symbol of list) {
      for (let cut = 2; cut < symbol.length; cut += 7) expect(() => demangle(symbol.slice(0, cut))).not.toThrow();
      for (let i = 0; i < 8; i++) {
        const at = Math.floor(random() * symbol.length);
        const altered = symbol.slice(0, at) + "0123456789_ESZNIRPKLTJXDBCv"[Math.floor(random() * 27)] + symbol.slice(at + 1);
        expect(() => demangle(altered)).not.toThrow();
      }
    }
    // Deep nesting, long lengths, and back-references that point forward or at themselves.
    // Each in well under a second even on a busy machine (they would take minutes, or for ever, unbounded).
    for (const hostile of ["_Z" + "P".repeat(100_000) + "i", "_Z4294967295a", "_ZN" + "1a".repeat(50_000) + "E", "_RNvB_1a", "_RB0_", "_RINvCs_1a1bIB5_EE", "_ZSt"]) {
      const started = performance.now();
      expect(demangle(hostile)).toBeNull();
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  }, 120_000);

  it("bounds what a short symbol may print: substitutions that double at each step give up instead of printing for ever", () => {
    // f(pair<int, int>, pair<P1, P1>, pair<P2, P2>, …): each parameter is a pair of the one before, named by
    // substitution; 40 of them are 659 characters that would print 2^40 copies of `int`.
    const doubling = (n: number) => {
      let symbol = "_Z1fSt4pairIiiE";
      for (let k = 1; k <= n; k++) symbol += `St4pairIS${(2 * k - 2).toString(36).toUpperCase()}_S${(2 * k - 2).toString(36).toUpperCase()}_E`;
      return symbol;
    };
    expect(demangleItanium(doubling(2))).toBe("f(std::pair<int, int>, std::pair<std::pair<int, int>, std::pair<int, int> >, std::pair<std::pair<std::pair<int, int>, std::pair<int, int> >, std::pair<std::pair<int, int>, std::pair<int, int> > >)");
    const started = performance.now();
    expect(demangleItanium(doubling(40))).toBeNull();
    // Rust's back-references can double the same way: tuples of the tuple before, twice.
    const base62 = (n: number): string => {
      const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
      let text = "";
      for (let v = n - 1; v >= 0; v = Math.floor(v / 62) - 1) text = digits[v % 62] + text;
      return `${text}_`;
    };
    const tuples = (n: number) => {
      let v0 = "_RINvC1a1fT";
      const offsets = [v0.length - 3];
      v0 += "uuE";
      for (let k = 0; k < n; k++) {
        offsets.push(v0.length - 2);
        v0 += `TB${base62(offsets[k])}B${base62(offsets[k])}E`;
      }
      return `${v0}E`;
    };
    expect(demangleRustV0(tuples(1))).toBe("a::f::<((), ()), (((), ()), ((), ()))>");
    expect(demangleRustV0(tuples(40))).toBeNull();
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("reads Rust legacy escapes and rejects what is not a Rust hash", () => {
    expect(demangleRustLegacy("_ZN4core3ptr67drop_in_place$LT$alloc..boxed..Box$LT$dyn$u20$sample..Shape$GT$$GT$17h6023e272d4899cffE")).toBe("core::ptr::drop_in_place<alloc::boxed::Box<dyn sample::Shape>>");
    expect(demangleRustLegacy("_ZN3foo3barE")).toBeNull();
    expect(demangleRustLegacy("_ZN3foo$XX$17h6023e272d4899cffE")).toBeNull();
  });
});
