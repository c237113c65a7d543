/**
 * Symbol demangling at import: C++ (Itanium ABI, `_Z…`) and Rust (legacy `_ZN…17h<hash>E` and v0
 * `_R…`), also with the extra leading underscore of Mach-O and a linker's `@version` or `@plt`
 * suffix. A frame whose name demangles shows the readable name and keeps the mangled one
 * (frames.mangled_name); any other name is left as it is.
 */
import type { FrameInput } from "../evidence/builder";
import { demangleItanium } from "./itanium";
import { demangleRustLegacy, demangleRustV0 } from "./rust";

/** Longer symbols are left alone: a name is bounded to 4096 characters anyway. */
const MAX_SYMBOL = 8192;
const LOOKS_MANGLED = /^_{1,2}[ZR]/;

/** The readable form of a mangled symbol, or null when `symbol` is not one that demangles whole. */
export function demangle(symbol: string): string | null {
  if (symbol.length > MAX_SYMBOL || !LOOKS_MANGLED.test(symbol) || /\s/.test(symbol)) return null;
  // A versioned or PLT symbol (`_Z3foov@plt`, `…@GLIBCXX_3.4`): its suffix stays as written.
  const at = symbol.indexOf("@");
  const base = at > 0 ? symbol.slice(0, at) : symbol;
  const suffix = at > 0 ? symbol.slice(at) : "";
  const plain = base.startsWith("__Z") || base.startsWith("__R") ? base.slice(1) : base;
  const text = plain.startsWith("_R") ? demangleRustV0(plain) : (demangleRustLegacy(plain) ?? (plain.startsWith("_Z") ? demangleItanium(plain) : null));
  return text === null || text === "" ? null : text + suffix;
}

/** A frame with its name demangled and the mangled name kept, when the name is a mangled symbol. */
export function demangledFrame(input: FrameInput): FrameInput {
  const readable = demangle(input.name);
  return readable === null ? input : { ...input, name: readable, mangledName: input.name };
}
