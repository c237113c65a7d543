/**
 * Rust symbol demangling, written from rustc's two manglings: legacy (`_ZN…17h<hash>E`, Itanium
 * shaped, with `$LT$`-style escapes and a hash as the last component) and v0 (`_R…`, RFC 2603:
 * paths, generic arguments, types, constants and back-references). Output is the readable form
 * without hashes and crate disambiguators, as `c++filt -i` and rustc-demangle's `{:#}` print it.
 * Returns null for anything it cannot read whole.
 */

const LEGACY_ESCAPES: Record<string, string> = { SP: "@", BP: "*", RF: "&", LT: "<", GT: ">", LP: "(", RP: ")", C: "," };
const MAX_DEPTH = 256;
const MAX_OUTPUT = 16384;
const MAX_STEPS = 100_000;

/** `$u7e$` and the named escapes of a legacy component; null when one is malformed. */
function unescapeLegacy(text: string): string | null {
  let out = "";
  let i = text.startsWith("_$") ? 1 : 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "$") {
      const end = text.indexOf("$", i + 1);
      if (end < 0) return null;
      const code = text.slice(i + 1, end);
      if (LEGACY_ESCAPES[code] !== undefined) out += LEGACY_ESCAPES[code];
      else if (/^u[0-9a-f]{2,6}$/.test(code)) {
        const point = parseInt(code.slice(1), 16);
        if (point > 0x10ffff) return null;
        out += String.fromCodePoint(point);
      } else return null;
      i = end + 1;
    } else if (c === "." && text[i + 1] === ".") {
      out += "::";
      i += 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** A legacy Rust symbol (`_ZN` components, the last `h` + 16 hex digits, `E`) without its hash. */
export function demangleRustLegacy(symbol: string): string | null {
  const m = /^_ZN(.*)E(?:\.llvm\.\d+)?$/.exec(symbol);
  if (!m) return null;
  const body = m[1];
  const parts: string[] = [];
  let at = 0;
  while (at < body.length) {
    const digits = /^\d+/.exec(body.slice(at));
    if (!digits) return null;
    const length = Number(digits[0]);
    at += digits[0].length;
    if (length === 0 || at + length > body.length) return null;
    parts.push(body.slice(at, at + length));
    at += length;
  }
  const hash = parts.pop();
  if (hash === undefined || !/^h[0-9a-f]{16}$/.test(hash) || parts.length === 0) return null;
  const out: string[] = [];
  for (const part of parts) {
    const text = unescapeLegacy(part);
    if (text === null) return null;
    out.push(text);
  }
  return out.join("::");
}

/** Thrown when a symbol does not read: one object, as an Error's stack trace costs more than most parses. */
const FAIL = { unreadable: true };
const fail = (): never => {
  throw FAIL;
};

const BASIC_TYPES: Record<string, string> = {
  a: "i8", b: "bool", c: "char", d: "f64", e: "str", f: "f32", h: "u8", i: "isize", j: "usize", l: "i32", m: "u32", n: "i128",
  o: "u128", s: "i16", t: "u16", u: "()", v: "...", x: "i64", y: "u64", z: "!", p: "_",
};

/** A v0 parser that prints as it reads; back-references re-read the symbol from their target. */
class V0Printer {
  pos: number;
  private depth = 0;
  private out = "";
  /** Lifetimes bound by enclosing `for<…>` binders. */
  private boundLifetimes = 0;
  constructor(
    private readonly s: string,
    start: number,
  ) {
    this.pos = start;
  }

  private peek(): string {
    return this.s[this.pos] ?? "";
  }
  private eat(c: string): boolean {
    if (this.s[this.pos] === c) {
      this.pos++;
      return true;
    }
    return false;
  }
  private next(): string {
    if (this.pos >= this.s.length) fail();
    return this.s[this.pos++];
  }
  private print(text: string): void {
    this.out += text;
    if (this.out.length > MAX_OUTPUT) fail();
  }
  /** Every step of the parse, back-references re-read included: bounded, so that none can loop for ever. */
  private steps = 0;
  private enter(): void {
    if (++this.depth > MAX_DEPTH || ++this.steps > MAX_STEPS) fail();
  }

  /** <base-62-number>: `_` is 0, else digits 0-9a-zA-Z then `_`, plus one. */
  private base62(): number {
    if (this.eat("_")) return 0;
    let value = 0;
    for (;;) {
      const c = this.next();
      if (c === "_") return value + 1;
      const digit = c >= "0" && c <= "9" ? c.charCodeAt(0) - 48 : c >= "a" && c <= "z" ? c.charCodeAt(0) - 87 : c >= "A" && c <= "Z" ? c.charCodeAt(0) - 29 : fail();
      // Disambiguators are 64-bit hashes: past 2^53 the value is approximate, and only its presence matters.
      value = value * 62 + (digit as number);
    }
  }

  private disambiguator(): number {
    return this.eat("s") ? this.base62() + 1 : 0;
  }

  private decimal(): number {
    const start = this.pos;
    if (this.peek() === "0") {
      this.pos++;
      return 0;
    }
    while (this.peek() >= "0" && this.peek() <= "9") this.pos++;
    if (this.pos === start) fail();
    return Number(this.s.slice(start, this.pos));
  }

  /** <undisambiguated-identifier>: [u] <decimal> [_] <bytes>; `u` marks Punycode, which is shown as mangled. */
  private identifier(): string {
    const punycode = this.eat("u");
    const length = this.decimal();
    this.eat("_");
    if (this.pos + length > this.s.length) fail();
    const text = this.s.slice(this.pos, this.pos + length);
    this.pos += length;
    return punycode ? `punycode{${text}}` : text;
  }

  private backref(inner: () => void): void {
    const at = this.pos - 1;
    const target = this.base62() + 2; // offsets count from after "_R"
    if (target >= at) fail();
    const resume = this.pos;
    this.pos = target;
    this.enter();
    inner();
    this.depth--;
    this.pos = resume;
  }

  /** <path>; `value` prints generic arguments as `::<…>`. */
  path(value: boolean): void {
    this.enter();
    const tag = this.next();
    switch (tag) {
      case "C": {
        this.disambiguator();
        this.print(this.identifier());
        break;
      }
      case "M": {
        this.disambiguator();
        this.skipPath();
        this.print("<");
        this.type();
        this.print(">");
        break;
      }
      case "X": {
        this.disambiguator();
        this.skipPath();
        this.print("<");
        this.type();
        this.print(" as ");
        this.path(false);
        this.print(">");
        break;
      }
      case "Y": {
        this.print("<");
        this.type();
        this.print(" as ");
        this.path(false);
        this.print(">");
        break;
      }
      case "N": {
        const ns = this.next();
        if (!/[a-zA-Z]/.test(ns)) fail();
        this.path(value);
        const dis = this.disambiguator();
        const name = this.identifier();
        if (ns >= "A" && ns <= "Z") {
          const kind = ns === "C" ? "closure" : ns === "S" ? "shim" : ns;
          this.print(`::{${kind}${name ? `:${name}` : ""}#${dis}}`);
        } else if (name) this.print(`::${name}`);
        break;
      }
      case "I": {
        this.path(value);
        if (value) this.print("::");
        this.print("<");
        for (let i = 0; !this.eat("E"); i++) {
          if (i > 0) this.print(", ");
          this.genericArg();
        }
        this.print(">");
        break;
      }
      case "B":
        this.backref(() => this.path(value));
        break;
      default:
        fail();
    }
    this.depth--;
  }

  /** An impl's path is not printed (c++filt shows only its self type), but must be read past. */
  private skipPath(): void {
    const saved = this.out;
    this.path(false);
    this.out = saved;
  }

  private genericArg(): void {
    if (this.eat("L")) return this.lifetime(this.base62());
    if (this.eat("K")) return this.constant();
    this.type();
  }

  private lifetime(index: number): void {
    if (index === 0) {
      this.print("'_");
      return;
    }
    const depth = this.boundLifetimes - index;
    if (depth < 0) fail();
    this.print(depth < 26 ? `'${String.fromCharCode(97 + depth)}` : `'_${depth}`);
  }

  private binder(): number {
    if (!this.eat("G")) return 0;
    const count = this.base62() + 1;
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const depth = this.boundLifetimes + i;
      names.push(depth < 26 ? `'${String.fromCharCode(97 + depth)}` : `'_${depth}`);
    }
    this.print(`for<${names.join(", ")}> `);
    this.boundLifetimes += count;
    return count;
  }

  type(): void {
    this.enter();
    const c = this.next();
    const basic = BASIC_TYPES[c];
    if (basic) this.print(basic);
    else {
      switch (c) {
        case "R":
        case "Q": {
          this.print("&");
          if (this.eat("L")) {
            const index = this.base62();
            if (index !== 0) {
              this.lifetime(index);
              this.print(" ");
            }
          }
          if (c === "Q") this.print("mut ");
          this.type();
          break;
        }
        case "P":
          this.print("*const ");
          this.type();
          break;
        case "O":
          this.print("*mut ");
          this.type();
          break;
        case "A":
          this.print("[");
          this.type();
          this.print("; ");
          this.constant();
          this.print("]");
          break;
        case "S":
          this.print("[");
          this.type();
          this.print("]");
          break;
        case "T": {
          this.print("(");
          let count = 0;
          while (!this.eat("E")) {
            if (count++ > 0) this.print(", ");
            this.type();
          }
          if (count === 1) this.print(",");
          this.print(")");
          break;
        }
        case "F": {
          const bound = this.binder();
          if (this.eat("U")) this.print("unsafe ");
          if (this.eat("K")) {
            const abi = this.eat("C") ? "C" : this.identifier().replace(/_/g, "-");
            this.print(`extern "${abi}" `);
          }
          this.print("fn(");
          for (let i = 0; !this.eat("E"); i++) {
            if (i > 0) this.print(", ");
            this.type();
          }
          this.print(")");
          if (this.peek() === "u") this.pos++;
          else {
            this.print(" -> ");
            this.type();
          }
          this.boundLifetimes -= bound;
          break;
        }
        case "D": {
          this.print("dyn ");
          const bound = this.binder();
          for (let i = 0; !this.eat("E"); i++) {
            if (i > 0) this.print(" + ");
            this.dynTrait();
          }
          this.boundLifetimes -= bound;
          if (!this.eat("L")) fail();
          const index = this.base62();
          if (index !== 0) {
            this.print(" + ");
            this.lifetime(index);
          }
          break;
        }
        case "B":
          this.backref(() => this.type());
          break;
        default:
          this.pos--;
          this.path(false);
      }
    }
    this.depth--;
  }

  /** A trait of a `dyn` type with its associated type bindings: `Fn<(i32,), Output = i32>`. */
  private dynTrait(): void {
    // Generic arguments and bindings share one <…>: print the path, then fold the bindings in.
    this.path(false);
    let open = this.out.endsWith(">");
    while (this.eat("p")) {
      const name = this.identifier();
      if (open) this.out = this.out.slice(0, -1) + ", ";
      else this.print("<");
      this.print(`${name} = `);
      this.type();
      this.print(">");
      open = true;
    }
  }

  private constant(): void {
    this.enter();
    if (this.eat("B")) {
      this.backref(() => this.constant());
      this.depth--;
      return;
    }
    if (this.eat("p")) {
      this.print("_");
      this.depth--;
      return;
    }
    const type = this.next();
    const negative = this.eat("n");
    const start = this.pos;
    while (/[0-9a-f]/.test(this.peek())) this.pos++;
    const hex = this.s.slice(start, this.pos);
    if (!this.eat("_")) fail();
    const value = hex === "" ? 0n : BigInt(`0x${hex}`);
    if (type === "b") this.print(value === 0n ? "false" : value === 1n ? "true" : fail());
    else if (type === "c") {
      const text = JSON.stringify(String.fromCodePoint(Number(value)));
      this.print(`'${text.slice(1, -1).replace(/'/g, "\\'")}'`);
    } else if (/[ahijlmnostxy]/.test(type)) this.print(`${negative ? "-" : ""}${value.toString()}`);
    else fail();
    this.depth--;
  }

  result(): string {
    return this.out;
  }
}

/** A v0 Rust symbol (`_R…`): its path, without the instantiating crate or vendor suffix. */
export function demangleRustV0(symbol: string): string | null {
  if (!symbol.startsWith("_R")) return null;
  // A vendor suffix (`.llvm.123`) is not part of the name.
  const dot = symbol.indexOf(".");
  const s = dot >= 0 ? symbol.slice(0, dot) : symbol;
  try {
    // A decimal after _R would be an encoding version: only the first (written as none) exists.
    if (s[2] >= "0" && s[2] <= "9") return null;
    const printer = new V0Printer(s, 2);
    printer.path(true);
    // The instantiating crate, if any, is a path too; it is not printed.
    if (printer.pos < s.length) {
      const rest = new V0Printer(s, printer.pos);
      rest.path(false);
      if (rest.pos !== s.length) return null;
    }
    return printer.result();
  } catch (error) {
    if (error === FAIL || error instanceof RangeError || error instanceof SyntaxError) return null;
    throw error;
  }
}
