/**
 * A demangler for C++ symbols of the Itanium C++ ABI (what GCC and Clang emit on Linux, macOS
 * and most Unix systems), written from the ABI's mangling grammar: nested and local names,
 * templates and their arguments (packs, literals, expressions), substitutions (S_, St, Sa, …),
 * template parameters, function, array, pointer-to-member and qualified types, lambdas and
 * unnamed types, ABI tags, special names (vtables, thunks, guard variables) and GCC's clone
 * suffixes. Output follows GNU c++filt's spelling (`char const*`, `> >`). Returns null for
 * anything it cannot read whole: a caller then keeps the mangled text.
 */

/** A parsed piece of a symbol, printed as C++ declarators are: a left part and a right part. */
type Node =
  | { k: "name"; text: string }
  | { k: "nested"; scope: Node; name: Node }
  | { k: "template"; name: Node; args: Node[] }
  | { k: "qual"; of: Node; quals: string }
  | { k: "ptr"; of: Node }
  | { k: "ref"; of: Node; sigil: "&" | "&&" }
  | { k: "array"; of: Node; dim: string }
  | { k: "func"; ret: Node | null; params: Node[]; quals: string; ref: string; spec: string }
  | { k: "member"; cls: Node; of: Node }
  | { k: "pack"; items: Node[] }
  | { k: "expansion"; of: Node }
  | { k: "vector"; of: Node; dim: string }
  | { k: "cdtor"; base: Node; dtor: boolean }
  | { k: "conversion"; to: Node }
  | { k: "encoding"; name: Node; fn: { ret: Node | null; params: Node[]; quals: string; ref: string } | null; inner: boolean }
  | { k: "special"; text: string; of: Node }
  | { k: "local"; encoding: Node; entity: Node };

const name = (text: string): Node => ({ k: "name", text });

/** Thrown when a symbol does not read: one object, as an Error's stack trace costs more than most parses. */
const FAIL = { unreadable: true };
const fail = (): never => {
  throw FAIL;
};

const BUILTINS: Record<string, string> = {
  v: "void", w: "wchar_t", b: "bool", c: "char", a: "signed char", h: "unsigned char", s: "short", t: "unsigned short",
  i: "int", j: "unsigned int", l: "long", m: "unsigned long", x: "long long", y: "unsigned long long", n: "__int128",
  o: "unsigned __int128", f: "float", d: "double", e: "long double", g: "__float128", z: "...",
};
const D_BUILTINS: Record<string, string> = {
  d: "decimal64", e: "decimal128", f: "decimal32", h: "half", i: "char32_t", s: "char16_t", u: "char8_t", a: "auto", c: "decltype(auto)", n: "decltype(nullptr)",
};
/** Literal suffixes c++filt prints after an integer of these types. */
const LITERAL_SUFFIX: Record<string, string> = { i: "", j: "u", l: "l", m: "ul", x: "ll", y: "ull" };

/** Operators: code → [spelling, arity]. */
const OPERATORS: Record<string, [string, number]> = {
  nw: ["new", 1], na: ["new[]", 1], dl: ["delete", 1], da: ["delete[]", 1], ps: ["+", 1], ng: ["-", 1], ad: ["&", 1], de: ["*", 1],
  co: ["~", 1], pl: ["+", 2], mi: ["-", 2], ml: ["*", 2], dv: ["/", 2], rm: ["%", 2], an: ["&", 2], or: ["|", 2], eo: ["^", 2],
  aS: ["=", 2], pL: ["+=", 2], mI: ["-=", 2], mL: ["*=", 2], dV: ["/=", 2], rM: ["%=", 2], aN: ["&=", 2], oR: ["|=", 2], eO: ["^=", 2],
  ls: ["<<", 2], rs: [">>", 2], lS: ["<<=", 2], rS: [">>=", 2], eq: ["==", 2], ne: ["!=", 2], lt: ["<", 2], gt: [">", 2], le: ["<=", 2],
  ge: [">=", 2], ss: ["<=>", 2], nt: ["!", 1], aa: ["&&", 2], oo: ["||", 2], pp: ["++", 1], mm: ["--", 1], cm: [",", 2], pm: ["->*", 2],
  pt: ["->", 2], cl: ["()", 2], ix: ["[]", 2], qu: ["?", 3], st: ["sizeof ", 1], sz: ["sizeof ", 1], at: ["alignof ", 1], az: ["alignof ", 1],
  aw: ["co_await", 1],
};

/** Sa, Sb, Ss, Si, So, Sd, spelled out in full as c++filt does (it demangles verbosely: not `std::string`). */
const STD_SUBSTITUTIONS: Record<string, string> = {
  a: "std::allocator",
  b: "std::basic_string",
  s: "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
  i: "std::basic_istream<char, std::char_traits<char> >",
  o: "std::basic_ostream<char, std::char_traits<char> >",
  d: "std::basic_iostream<char, std::char_traits<char> >",
};

const MAX_DEPTH = 256;
const MAX_OUTPUT = 16384;
/**
 * Printing steps one symbol may take: substitutions let a short symbol name a type many times
 * over (each S_ can stand for everything before it), so a hostile one could print for ever.
 */
const PRINT_STEPS = 200_000;
let printSteps = 0;
function step(): void {
  if (++printSteps > PRINT_STEPS) fail();
}

class Parser {
  pos = 0;
  private subs: Node[] = [];
  /** The template arguments T_ refers to: those of the encoding's (innermost) name. */
  private templateArgs: Node[] | null = null;
  private depth = 0;
  constructor(private readonly s: string) {}

  private peek(offset = 0): string {
    return this.s[this.pos + offset] ?? "";
  }
  private eat(text: string): boolean {
    if (this.s.startsWith(text, this.pos)) {
      this.pos += text.length;
      return true;
    }
    return false;
  }
  private expect(text: string): void {
    if (!this.eat(text)) fail();
  }
  private enter(): void {
    if (++this.depth > MAX_DEPTH) fail();
  }

  private number(): number {
    const negative = this.eat("n");
    const start = this.pos;
    while (this.peek() >= "0" && this.peek() <= "9") this.pos++;
    if (this.pos === start) fail();
    const value = Number(this.s.slice(start, this.pos));
    return negative ? -value : value;
  }

  /** <seq-id>: base 36, digits then upper-case letters, ended by `_`; absent means -1. */
  private seqId(): number {
    if (this.eat("_")) return -1;
    let value = 0;
    const start = this.pos;
    while (/[0-9A-Z]/.test(this.peek())) {
      const c = this.peek();
      value = value * 36 + (c <= "9" ? c.charCodeAt(0) - 48 : c.charCodeAt(0) - 55);
      this.pos++;
    }
    if (this.pos === start) fail();
    this.expect("_");
    return value;
  }

  // <mangled-name> ::= _Z <encoding> [. <vendor suffix>]*
  symbol(): string {
    this.expect("_Z");
    const encoding = this.encoding(true);
    let out = print(encoding);
    // GCC's clones (.constprop.0, .isra.0, .part.1, .cold) and other dotted suffixes.
    while (this.pos < this.s.length) {
      const m = /^\.[A-Za-z_][A-Za-z0-9_]*(\.\d+)*/.exec(this.s.slice(this.pos));
      if (!m) return fail();
      out += ` [clone ${m[0]}]`;
      this.pos += m[0].length;
    }
    if (out.length > MAX_OUTPUT) fail();
    return out;
  }

  // <encoding> ::= <name> <bare-function-type> | <name> | <special-name>
  private encoding(top: boolean, whole = top): Node {
    this.enter();
    const special = this.specialName();
    if (special) {
      this.depth--;
      return special;
    }
    const saved = this.templateArgs;
    const wasRecording = this.recording;
    this.templateArgs = null;
    this.recording = true;
    const nameNode = this.name();
    this.recording = wasRecording;
    let fn: { ret: Node | null; params: Node[]; quals: string; ref: string } | null = null;
    const atEnd = this.pos >= this.s.length || this.peek() === "E" || this.peek() === ".";
    if (!atEnd) {
      // A template function (not a constructor, destructor or conversion) spells its return type first.
      const ret = isTemplate(nameNode) && !isCdtorOrConversion(nameNode) ? this.type() : null;
      const params = this.parameters();
      const { quals, ref } = nameQualifiers(nameNode);
      fn = { ret, params, quals, ref };
    }
    if (!top) this.templateArgs = saved;
    this.depth--;
    return { k: "encoding", name: stripNameQualifiers(nameNode), fn, inner: !whole };
  }

  private parameters(): Node[] {
    const params: Node[] = [];
    while (this.pos < this.s.length && this.peek() !== "E" && this.peek() !== ".") params.push(this.type());
    if (params.length === 1 && params[0].k === "name" && params[0].text === "void") return [];
    return params;
  }
  /** While the encoding's own name is read: its template arguments are what T_ refers to. */
  private recording = false;

  private specialName(): Node | null {
    const at = this.pos;
    const two = this.s.slice(at, at + 2);
    const typed: Record<string, string> = { TV: "vtable for ", TT: "VTT for ", TI: "typeinfo for ", TS: "typeinfo name for " };
    if (typed[two]) {
      this.pos += 2;
      return { k: "special", text: typed[two], of: this.type() };
    }
    if (two === "Th" || two === "Tv" || two === "Tc") {
      this.pos += 1;
      const kind = this.peek();
      if (kind === "c") {
        this.pos++;
        this.callOffset();
        this.callOffset();
        return { k: "special", text: "covariant return thunk to ", of: this.encoding(false) };
      }
      this.callOffset();
      return { k: "special", text: kind === "h" ? "non-virtual thunk to " : "virtual thunk to ", of: this.encoding(false) };
    }
    if (two === "GV") {
      this.pos += 2;
      return { k: "special", text: "guard variable for ", of: this.name() };
    }
    if (two === "GR") {
      this.pos += 2;
      const of = this.name();
      const id = this.pos < this.s.length && this.peek() !== "_" ? this.seqId() + 1 : (this.eat("_"), 0);
      return { k: "special", text: `reference temporary #${id} for `, of };
    }
    if (two === "TH" || two === "TW") {
      this.pos += 2;
      return { k: "special", text: two === "TH" ? "TLS init function for " : "TLS wrapper function for ", of: this.name() };
    }
    if (this.s.startsWith("GTt", at)) {
      this.pos += 3;
      return { k: "special", text: "transaction clone for ", of: this.encoding(false) };
    }
    if (two === "GA") {
      this.pos += 2;
      return { k: "special", text: "hidden alias for ", of: this.encoding(false) };
    }
    return null;
  }

  // <call-offset> ::= h <nv-offset> _ | v <v-offset> _
  private callOffset(): void {
    const kind = this.peek();
    this.pos++;
    this.number();
    if (kind === "v") {
      this.expect("_");
      this.number();
    } else if (kind !== "h") fail();
    this.expect("_");
  }

  // <name> ::= <nested-name> | <unscoped-name> | <unscoped-template-name> <template-args> | <local-name>
  private name(): Node {
    this.enter();
    let result: Node;
    const c = this.peek();
    if (c === "N") result = this.nestedName();
    else if (c === "Z") result = this.localName();
    else {
      let unscoped: Node;
      const substituted = c === "S" && this.peek(1) !== "t";
      if (substituted) {
        unscoped = this.substitution();
        if (this.peek() !== "I") fail();
      } else {
        const std = this.eat("St");
        // L: a name of internal linkage (static), which c++filt does not mark.
        this.eat("L");
        const part = this.unqualifiedName(null);
        unscoped = std ? { k: "nested", scope: name("std"), name: part } : part;
      }
      result = unscoped;
      if (this.peek() === "I") {
        if (!substituted) this.subs.push(unscoped);
        result = { k: "template", name: unscoped, args: this.templateArgsList() };
      }
    }
    this.depth--;
    return result;
  }

  // <nested-name> ::= N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E
  private nestedName(): Node {
    this.expect("N");
    const quals = this.cvQualifiers();
    const ref = this.eat("R") ? " &" : this.eat("O") ? " &&" : "";
    let soFar: Node | null = null;
    const depth = this.depth;
    while (!this.eat("E")) {
      // Each component nests the name one level deeper.
      this.enter();
      this.eat("L");
      const c = this.peek();
      if (c === "I") {
        if (!soFar) fail();
        soFar = { k: "template", name: soFar!, args: this.templateArgsList() };
      } else if (c === "T") {
        if (soFar) fail();
        soFar = this.templateParam();
      } else if (c === "D" && (this.peek(1) === "t" || this.peek(1) === "T")) {
        if (soFar) fail();
        soFar = this.type();
      } else if (c === "S" && this.peek(1) === "t") {
        if (soFar) fail();
        this.pos += 2;
        soFar = name("std");
        continue;
      } else if (c === "S") {
        if (soFar) fail();
        soFar = this.substitution();
        if (this.peek() === "E") fail();
        continue;
      } else {
        const part = this.unqualifiedName(soFar);
        soFar = soFar ? { k: "nested", scope: soFar, name: part } : part;
      }
      if (this.peek() === "E") continue;
      this.subs.push(soFar!);
    }
    this.depth = depth;
    if (!soFar) fail();
    const out = soFar!;
    return quals || ref ? { k: "qual", of: out, quals: `${quals}${ref}` } : out;
  }

  // <local-name> ::= Z <encoding> E <entity name> [<discriminator>] | Z <encoding> E s [<discriminator>]
  private localName(): Node {
    this.expect("Z");
    const encoding = this.encoding(false);
    this.expect("E");
    if (this.eat("s")) {
      this.discriminator();
      return { k: "local", encoding, entity: name("string literal") };
    }
    if (this.eat("d")) {
      // A default argument's scope: Z <encoding> E d [<number>] _ <name>
      if (this.peek() !== "_") this.number();
      this.expect("_");
    }
    const entity = this.name();
    this.discriminator();
    return { k: "local", encoding, entity };
  }

  private discriminator(): void {
    if (this.peek() !== "_") return;
    if (this.peek(1) === "_") {
      this.pos += 2;
      this.number();
      this.expect("_");
    } else if (this.peek(1) >= "0" && this.peek(1) <= "9") this.pos += 2;
  }

  private unqualifiedName(scope: Node | null): Node {
    const c = this.peek();
    let result: Node;
    if (c >= "0" && c <= "9") result = this.sourceName();
    else if (c === "C" || (c === "D" && /[0-5]/.test(this.peek(1)))) {
      if (!scope) fail();
      const dtor = c === "D";
      this.pos++;
      let base = print(lastComponent(scope!));
      if (!dtor && this.eat("I")) {
        // An inheriting constructor is named after the base class it inherits from.
        if (!/[1-5]/.test(this.peek())) fail();
        this.pos++;
        base = print(this.type());
      } else {
        if (!/[0-5]/.test(this.peek())) fail();
        this.pos++;
      }
      result = { k: "cdtor", base: name(baseName(base)), dtor };
    } else if (c === "U") {
      result = this.unnamedType();
    } else if (c === "D" && this.peek(1) === "C") {
      this.pos += 2;
      const names: string[] = [];
      while (!this.eat("E")) names.push(print(this.sourceName()));
      result = name(`[${names.join(", ")}]`);
    } else result = this.operatorName();
    while (this.eat("B")) {
      const tag = this.sourceName();
      result = name(`${print(result)}[abi:${print(tag)}]`);
    }
    return result;
  }

  private sourceName(): Node {
    const length = this.number();
    if (length <= 0 || this.pos + length > this.s.length) fail();
    const text = this.s.slice(this.pos, this.pos + length);
    this.pos += length;
    if (/^_GLOBAL__N/.test(text)) return name("(anonymous namespace)");
    return name(text);
  }

  private unnamedType(): Node {
    if (this.eat("Ut")) {
      const n = this.peek() === "_" ? 0 : this.number() + 1;
      this.expect("_");
      return name(`{unnamed type#${n + 1}}`);
    }
    if (this.eat("Ul")) {
      // Template parameter declarations of a generic lambda come first (Ty, Tn…); c++filt prints only the signature.
      while (this.peek() === "T" && /[ynt]/.test(this.peek(1))) {
        this.pos += 2;
        if (this.s[this.pos - 1] === "n") this.type();
      }
      const params = this.parameters();
      this.expect("E");
      const n = this.peek() === "_" ? 0 : this.number() + 1;
      this.expect("_");
      return name(`{lambda(${params.map(print).join(", ")})#${n + 1}}`);
    }
    return fail();
  }

  private operatorName(): Node {
    const code = this.s.slice(this.pos, this.pos + 2);
    if (code === "cv") {
      this.pos += 2;
      return { k: "conversion", to: this.type() };
    }
    if (code === "li") {
      this.pos += 2;
      return name(`operator"" ${print(this.sourceName())}`);
    }
    if (code[0] === "v" && /[0-9]/.test(code[1] ?? "")) {
      this.pos += 2;
      return name(`operator ${print(this.sourceName())}`);
    }
    const op = OPERATORS[code];
    if (!op) fail();
    this.pos += 2;
    const spelling = op[0].trim();
    return name(/^[a-z]/.test(spelling) ? `operator ${spelling}` : `operator${spelling}`);
  }

  /** r V K as mangled; c++filt spells them the other way round (`char const volatile`). */
  private cvQualifiers(): string {
    const restrict = this.eat("r");
    const volatile = this.eat("V");
    const constant = this.eat("K");
    return `${constant ? " const" : ""}${volatile ? " volatile" : ""}${restrict ? " restrict" : ""}`;
  }

  private substitution(): Node {
    this.expect("S");
    const c = this.peek();
    if (/[a-z]/.test(c)) {
      const known = STD_SUBSTITUTIONS[c];
      if (!known) fail();
      this.pos++;
      return name(known);
    }
    const id = this.seqId() + 1;
    if (id >= this.subs.length) fail();
    return this.subs[id];
  }

  private templateParam(): Node {
    this.expect("T");
    const index = this.seqId() + 1;
    if (!this.templateArgs || index >= this.templateArgs.length) {
      // A reference the ABI allows before its arguments are known (conversion operators): spell it.
      return name(index === 0 ? "T" : `T${index}`);
    }
    return this.templateArgs[index];
  }

  private templateArgsList(): Node[] {
    this.expect("I");
    const record = this.recording;
    this.recording = false;
    const args: Node[] = [];
    while (!this.eat("E")) args.push(this.templateArg());
    this.recording = record;
    if (record) this.templateArgs = args;
    return args;
  }

  private templateArg(): Node {
    this.enter();
    let out: Node;
    const c = this.peek();
    if (c === "X") {
      this.pos++;
      out = name(this.expression());
      this.expect("E");
    } else if (c === "L") out = name(this.exprPrimary());
    else if (c === "J") {
      this.pos++;
      const items: Node[] = [];
      while (!this.eat("E")) items.push(this.templateArg());
      out = { k: "pack", items };
    } else out = this.type();
    this.depth--;
    return out;
  }

  // <expr-primary> ::= L <type> <value number> E | L <type> <float> E | L <mangled-name> E
  private exprPrimary(): string {
    this.expect("L");
    if (this.eat("_Z")) {
      const encoding = this.encoding(false);
      this.expect("E");
      return print(encoding);
    }
    if (this.peek() === "Z") {
      const encoding = this.encoding(false);
      this.expect("E");
      return print(encoding);
    }
    const c = this.peek();
    if (c === "b" && (this.peek(1) === "0" || this.peek(1) === "1") && this.peek(2) === "E") {
      this.pos += 3;
      return this.s[this.pos - 2] === "1" ? "true" : "false";
    }
    if (this.eat("DnE")) return "(decltype(nullptr))0";
    if (this.eat("Dn0E")) return "(decltype(nullptr))0";
    const type = this.type();
    const start = this.pos;
    while (this.peek() !== "E" && this.pos < this.s.length) this.pos++;
    const raw = this.s.slice(start, this.pos);
    this.expect("E");
    const value = raw.startsWith("n") ? `-${raw.slice(1)}` : raw;
    if (type.k === "name" && /^\d+$/.test(raw.replace(/^n/, ""))) {
      const code = Object.keys(BUILTINS).find((k) => BUILTINS[k] === type.text);
      if (code !== undefined && code in LITERAL_SUFFIX) return `${value}${LITERAL_SUFFIX[code]}`;
      if (type.text === "bool") return value === "0" ? "false" : value === "1" ? "true" : `(bool)${value}`;
    }
    return `(${print(type)})${value}`;
  }

  /** An expression in a template argument or decltype, spelled as c++filt spells it. */
  private expression(): string {
    this.enter();
    this.simple = false;
    const out = this.expressionInner();
    this.depth--;
    return out;
  }

  /** Whether the expression just read is a name or function parameter: c++filt puts other operands in parentheses. */
  private simple = false;

  private operand(): string {
    const text = this.expression();
    return this.simple ? text : `(${text})`;
  }

  private expressionInner(): string {
    const c = this.peek();
    if (c === "L") return this.exprPrimary();
    if (c === "T") return print(this.templateParam());
    if (this.eat("fp")) {
      this.cvQualifiers();
      const n = this.peek() === "_" ? 0 : this.number() + 1;
      this.expect("_");
      this.simple = true;
      return `{parm#${n + 1}}`;
    }
    if (this.eat("fL")) {
      this.number();
      this.expect("p");
      this.cvQualifiers();
      const n = this.peek() === "_" ? 0 : this.number() + 1;
      this.expect("_");
      this.simple = true;
      return `{parm#${n + 1}}`;
    }
    if (this.s.startsWith("adL_Z", this.pos)) {
      // The address of a function: c++filt spells its name alone.
      this.pos += 5;
      const encoding = this.encoding(false, true);
      this.expect("E");
      this.simple = false;
      // c++filt spells a plain function's name alone, a template or qualified member function whole.
      if (encoding.k === "encoding" && (!encoding.fn || (!isTemplate(encoding.name) && encoding.fn.quals === "" && encoding.fn.ref === ""))) return `&${print(encoding.name)}`;
      return `&(${print(encoding)})`;
    }
    if (this.eat("sr")) {
      // sr <unresolved-type> <base-unresolved-name> | srN <unresolved-type> <qualifier levels> E <base>
      if (this.eat("N")) {
        let scope = print(this.peek() === "T" ? this.templateParam() : this.unresolvedType());
        if (this.peek() === "I") scope += templateArgsText(this.templateArgsList());
        while (!this.eat("E")) scope += `::${this.simpleId()}`;
        const text = `${scope}::${this.simpleId()}`;
        this.simple = true;
        return text;
      }
      const scope = /[0-9]/.test(this.peek()) ? this.simpleId() : print(this.unresolvedType());
      const text = `${scope}::${this.baseUnresolvedName()}`;
      this.simple = true;
      return text;
    }
    if (this.eat("st")) return `sizeof (${print(this.type())})`;
    if (this.eat("at")) return `alignof (${print(this.type())})`;
    if (this.eat("sZ")) {
      if (this.peek() === "T") {
        // Of a known pack, c++filt says how many it holds.
        const param = this.templateParam();
        return param.k === "pack" ? String(param.items.length) : `sizeof...(${print(param)})`;
      }
      return `sizeof...(${this.expression()})`;
    }
    if (this.eat("sp")) return `${this.expression()}...`;
    if (this.eat("cv")) {
      const type = print(this.type());
      if (this.eat("_")) {
        const items: string[] = [];
        while (!this.eat("E")) items.push(this.expression());
        return `(${type})(${items.join(", ")})`;
      }
      return `(${type})(${this.expression()})`;
    }
    if (this.eat("cl")) {
      const callee = this.expression();
      const args: string[] = [];
      while (!this.eat("E")) args.push(this.expression());
      return `${callee}(${args.join(", ")})`;
    }
    if (this.eat("dt") || this.eat("pt")) {
      const arrow = this.s.slice(this.pos - 2, this.pos) === "pt" ? "->" : ".";
      const object = this.expression();
      return `${object}${arrow}${this.unresolvedName()}`;
    }
    if (/^(sc|dc|rc|cc)/.test(this.s.slice(this.pos))) {
      const cast = { sc: "static_cast", dc: "dynamic_cast", rc: "reinterpret_cast", cc: "const_cast" }[this.s.slice(this.pos, this.pos + 2) as "sc"];
      this.pos += 2;
      const type = print(this.type());
      return `${cast}<${type}>(${this.expression()})`;
    }
    if (this.eat("tw")) return `throw ${this.expression()}`;
    if (this.eat("tr")) return "throw";
    if (this.eat("nx")) return `noexcept (${this.expression()})`;
    if (/[0-9]/.test(c) || this.s.startsWith("on", this.pos)) {
      const text = this.unresolvedName();
      this.simple = true;
      return text;
    }
    const code = this.s.slice(this.pos, this.pos + 2);
    const op = OPERATORS[code];
    if (op) {
      this.pos += 2;
      const [spelling, arity] = op;
      if (code === "sz" || code === "az") return `${spelling.trim()} (${this.expression()})`;
      let text: string;
      if (arity === 1) {
        const postfix = (code === "pp" || code === "mm") && this.eat("_");
        const operand = this.operand();
        text = postfix ? `${operand}${spelling}` : `${spelling}${operand}`;
      } else if (arity === 2) {
        const left = this.operand();
        const right = this.operand();
        text = code === "ix" ? `${left}[${right}]` : `${left}${spelling}${right}`;
      } else {
        const a = this.operand();
        const b = this.operand();
        text = `${a} ? ${b} : ${this.operand()}`;
      }
      this.simple = false;
      return text;
    }
    return fail();
  }

  private simpleId(): string {
    let text = print(this.sourceName());
    if (this.peek() === "I") text += templateArgsText(this.templateArgsList());
    return text;
  }

  private baseUnresolvedName(): string {
    if (this.eat("on")) {
      let text = print(this.operatorName());
      if (this.peek() === "I") text += templateArgsText(this.templateArgsList());
      return text;
    }
    if (this.eat("dn")) return `~${print(/[0-9]/.test(this.peek()) ? this.sourceName() : this.unresolvedType())}`;
    return this.simpleId();
  }

  private unresolvedName(): string {
    this.eat("gs");
    if (this.peek() === "s" && this.peek(1) === "r") {
      this.pos -= 0;
      return this.expression();
    }
    return this.baseUnresolvedName();
  }

  private unresolvedType(): Node {
    if (this.peek() === "T") return this.templateParam();
    if (this.peek() === "D") return this.type();
    if (this.peek() === "S" && this.peek(1) !== "t") return this.substitution();
    const type = this.type();
    return type;
  }

  // <type>
  type(): Node {
    this.enter();
    const record = this.recording;
    this.recording = false;
    const out = this.typeInner();
    this.recording = record;
    this.depth--;
    return out;
  }

  private typeInner(): Node {
    const c = this.peek();
    const builtin = BUILTINS[c];
    if (builtin) {
      this.pos++;
      return name(builtin);
    }
    let result: Node;
    switch (c) {
      case "r":
      case "V":
      case "K": {
        const quals = this.cvQualifiers();
        result = qualified(this.type(), quals);
        break;
      }
      case "P":
        this.pos++;
        result = { k: "ptr", of: this.type() };
        break;
      case "R":
      case "O": {
        this.pos++;
        const of = this.type();
        // References to references collapse (&& only when both are &&).
        if (of.k === "ref") result = { k: "ref", of: of.of, sigil: of.sigil === "&&" && c === "O" ? "&&" : "&" };
        else result = { k: "ref", of, sigil: c === "R" ? "&" : "&&" };
        break;
      }
      case "u": {
        this.pos++;
        result = this.sourceName();
        break;
      }
      case "U": {
        // <vendor-qualifier> ::= U <source-name> [<template-args>] <type>
        this.pos++;
        const qual = print(this.sourceName());
        const of = this.type();
        result = { k: "qual", of, quals: ` ${qual}` };
        break;
      }
      case "F":
        result = this.functionType("");
        break;
      case "A":
        result = this.arrayType();
        break;
      case "M": {
        this.pos++;
        const cls = this.type();
        const of = this.type();
        result = { k: "member", cls, of };
        break;
      }
      case "T": {
        result = this.templateParam();
        if (this.peek() === "I") {
          this.subs.push(result);
          result = { k: "template", name: result, args: this.templateArgsList() };
        }
        break;
      }
      case "S": {
        if (this.peek(1) === "t") {
          result = this.name();
          break;
        }
        const sub = this.substitution();
        if (this.peek() === "I") {
          result = { k: "template", name: sub, args: this.templateArgsList() };
          break;
        }
        return sub;
      }
      case "D": {
        const d = this.peek(1);
        if (D_BUILTINS[d]) {
          this.pos += 2;
          return name(D_BUILTINS[d]);
        }
        if (d === "F") {
          this.pos += 2;
          const bits = this.number();
          const x = this.eat("x");
          this.expect("_");
          return name(`_Float${bits}${x ? "x" : ""}`);
        }
        if (d === "p") {
          this.pos += 2;
          result = { k: "expansion", of: this.type() };
          break;
        }
        if (d === "t" || d === "T") {
          this.pos += 2;
          const expr = this.expression();
          this.expect("E");
          result = name(`decltype (${expr})`);
          break;
        }
        if (d === "v") {
          this.pos += 2;
          let dim = "";
          if (this.peek() === "_") {
            this.pos++;
            dim = this.expression();
          } else dim = String(this.number());
          this.expect("_");
          result = { k: "vector", of: this.type(), dim };
          break;
        }
        if (d === "o" || d === "O" || d === "w" || d === "x") {
          result = this.functionType("");
          break;
        }
        return fail();
      }
      default:
        if (/[0-9NZ]/.test(c)) {
          result = this.name();
          break;
        }
        return fail();
    }
    this.subs.push(result);
    return result;
  }

  // <function-type> ::= [<CV-qualifiers>] [Dx] [<exception-spec>] F [Y] <bare-function-type> [<ref-qualifier>] E
  private functionType(quals: string): Node {
    let spec = "";
    for (;;) {
      if (this.eat("Do")) spec = " noexcept";
      else if (this.eat("DO")) {
        spec = ` noexcept(${this.expression()})`;
        this.expect("E");
      } else if (this.eat("Dw")) {
        const types: string[] = [];
        while (!this.eat("E")) types.push(print(this.type()));
        spec = ` throw(${types.join(", ")})`;
      } else if (this.eat("Dx")) spec += " transaction_safe";
      else break;
    }
    this.expect("F");
    this.eat("Y");
    const ret = this.type();
    const params: Node[] = [];
    let ref = "";
    for (;;) {
      if (this.eat("E")) break;
      if (this.peek() === "R" && this.peek(1) === "E") {
        this.pos += 2;
        ref = " &";
        break;
      }
      if (this.peek() === "O" && this.peek(1) === "E") {
        this.pos += 2;
        ref = " &&";
        break;
      }
      if (this.pos >= this.s.length) fail();
      params.push(this.type());
    }
    const list = params.length === 1 && params[0].k === "name" && params[0].text === "void" ? [] : params;
    return { k: "func", ret, params: list, quals, ref, spec };
  }

  private arrayType(): Node {
    this.expect("A");
    let dim = "";
    if (/[0-9]/.test(this.peek())) dim = String(this.number());
    else if (this.peek() !== "_") dim = this.expression();
    this.expect("_");
    return { k: "array", of: this.type(), dim };
  }
}

/** A type with cv-qualifiers: on a function they are its own; an array's go to its elements; none is said twice. */
function qualified(of: Node, quals: string): Node {
  if (of.k === "func") return { ...of, quals: of.quals + quals };
  if (of.k === "array") return { ...of, of: qualified(of.of, quals) };
  if (of.k === "qual") {
    const extra = quals.split(" ").filter((q) => q && !of.quals.split(" ").includes(q));
    return extra.length === 0 ? of : { ...of, quals: of.quals + extra.map((q) => ` ${q}`).join("") };
  }
  return { k: "qual", of, quals };
}

function isTemplate(node: Node): boolean {
  if (node.k === "template") return true;
  if (node.k === "qual") return isTemplate(node.of);
  if (node.k === "local") return isTemplate(node.entity);
  return false;
}

function isCdtorOrConversion(node: Node): boolean {
  let last = node;
  for (;;) {
    if (last.k === "qual") last = last.of;
    else if (last.k === "template") last = last.name;
    else if (last.k === "nested") last = last.name;
    else if (last.k === "local") last = last.entity;
    else break;
  }
  return last.k === "cdtor" || last.k === "conversion";
}

function nameQualifiers(node: Node): { quals: string; ref: string } {
  if (node.k === "local") return nameQualifiers(node.entity);
  if (node.k !== "qual") return { quals: "", ref: "" };
  const ref = /( &&| &)$/.exec(node.quals)?.[0] ?? "";
  return { quals: node.quals.slice(0, node.quals.length - ref.length), ref };
}

function stripNameQualifiers(node: Node): Node {
  if (node.k === "local") return { ...node, entity: stripNameQualifiers(node.entity) };
  return node.k === "qual" ? node.of : node;
}

function lastComponent(node: Node): Node {
  if (node.k === "nested") return lastComponent(node.name);
  if (node.k === "template") return lastComponent(node.name);
  if (node.k === "qual") return lastComponent(node.of);
  return node;
}

/** `std::basic_string<char, …>` → `basic_string`: a constructor is named by its class's bare name. */
function baseName(text: string): string {
  let end = text.length;
  if (text.endsWith(">")) {
    let depth = 0;
    for (let i = text.length - 1; i >= 0; i--) {
      if (text[i] === ">") depth++;
      else if (text[i] === "<" && --depth === 0) {
        end = i;
        break;
      }
    }
  }
  const bare = text.slice(0, end).replace(/\[abi:[^\]]*\]/g, "");
  return bare.slice(bare.lastIndexOf("::") + 1 === 0 ? 0 : bare.lastIndexOf("::") + 2);
}

function templateArgsText(args: Node[]): string {
  const parts = args.flatMap(printedList);
  const inner = parts.join(", ");
  // c++filt writes `> >`, but not after an empty pack at the end (it takes back the ", " it wrote before it).
  const flat = (list: Node[]): Node[] => list.flatMap((a) => (a.k === "pack" && a.items.length > 0 ? flat(a.items) : [a]));
  const last = flat(args).pop();
  const emptyLast = last !== undefined && printedList(last).length === 0;
  return `<${inner}${inner.endsWith(">") && !emptyLast ? " " : ""}>`;
}

/** A parameter or argument as the items it prints: a pack or an expansion over one may print several, or none. */
function printedList(node: Node): string[] {
  if (node.k === "pack") return node.items.flatMap(printedList);
  if (node.k === "expansion") {
    const pack = findPack(node.of);
    if (!pack) return [`${print(node.of)}...`];
    return pack.items.map((item) => print(replacePack(node.of, pack, item)));
  }
  return [print(node)];
}

function paramsText(params: Node[]): string {
  return params.flatMap(printedList).join(", ");
}

/** The first argument pack inside a type (what a pack expansion expands over). */
function findPack(node: Node): Extract<Node, { k: "pack" }> | null {
  step();
  switch (node.k) {
    case "pack":
      return node;
    case "qual":
    case "ptr":
    case "ref":
    case "array":
    case "vector":
      return findPack(node.of);
    case "template":
      for (const arg of node.args) {
        const found = findPack(arg);
        if (found) return found;
      }
      return findPack(node.name);
    case "nested":
      return findPack(node.scope) ?? findPack(node.name);
    case "func":
      for (const p of [node.ret, ...node.params]) {
        const found = p && findPack(p);
        if (found) return found;
      }
      return null;
    case "member":
      return findPack(node.cls) ?? findPack(node.of);
    default:
      return null;
  }
}

function replacePack(node: Node, pack: Node, item: Node): Node {
  step();
  if (node === pack) return item;
  switch (node.k) {
    case "qual":
      return qualified(replacePack(node.of, pack, item), node.quals);
    case "ptr":
    case "array":
    case "vector":
      return { ...node, of: replacePack(node.of, pack, item) } as Node;
    case "ref": {
      const of = replacePack(node.of, pack, item);
      // Reference collapsing: & & is &, && && is &&, mixed is &.
      if (of.k === "ref") return { k: "ref", of: of.of, sigil: of.sigil === "&&" && node.sigil === "&&" ? "&&" : "&" };
      return { ...node, of };
    }
    case "template":
      return { ...node, name: replacePack(node.name, pack, item), args: node.args.map((a) => replacePack(a, pack, item)) };
    case "nested":
      return { ...node, scope: replacePack(node.scope, pack, item), name: replacePack(node.name, pack, item) };
    case "func":
      return { ...node, ret: node.ret && replacePack(node.ret, pack, item), params: node.params.map((p) => replacePack(p, pack, item)) };
    case "member":
      return { ...node, cls: replacePack(node.cls, pack, item), of: replacePack(node.of, pack, item) };
    default:
      return node;
  }
}

function hasFunctionOrArray(node: Node): boolean {
  if (node.k === "func" || node.k === "array") return true;
  if (node.k === "qual") return hasFunctionOrArray(node.of);
  return false;
}

function left(node: Node): string {
  step();
  switch (node.k) {
    case "name":
      return node.text;
    case "nested":
      return `${left(node.scope)}::${left(node.name)}`;
    case "template": {
      const base = left(node.name);
      // `operator<` then its arguments: c++filt parts the two `<`.
      return `${base}${base.endsWith("<") ? " " : ""}${templateArgsText(node.args)}`;
    }
    case "qual":
      return `${left(node.of)}${right(node.of) === "" ? node.quals : ""}`;
    case "ptr":
      return `${left(node.of)}${hasFunctionOrArray(node.of) ? " (" : ""}*`;
    case "ref":
      return `${left(node.of)}${hasFunctionOrArray(node.of) ? " (" : ""}${node.sigil}`;
    case "array":
      return left(node.of);
    case "func":
      return node.ret ? left(node.ret) : "";
    case "member":
      return `${left(node.of)}${hasFunctionOrArray(node.of) ? " (" : " "}${print(node.cls)}::*`;
    case "pack":
    case "expansion":
      return printedList(node).join(", ");
    case "vector":
      return `${print(node.of)} __vector(${node.dim})`;
    case "cdtor":
      return `${node.dtor ? "~" : ""}${left(node.base)}`;
    case "conversion":
      return `operator ${print(node.to)}`;
    case "special":
      return `${node.text}${print(node.of)}`;
    case "local":
      return `${print(node.encoding)}::${print(node.entity)}`;
    case "encoding": {
      const fn = node.fn;
      if (!fn) return print(node.name);
      const params = paramsText(fn.params);
      // The function a local name is in is spelled without its return type.
      const ret = fn.ret && !node.inner ? print(fn.ret) : "";
      if (!ret) return `${print(node.name)}(${params})${fn.quals}${fn.ref}`;
      // A return type that is itself a function or array pointer wraps the whole declaration.
      if (fn.ret && hasDeclaratorRight(fn.ret)) return `${left(fn.ret)}${print(node.name)}(${params})${fn.quals}${fn.ref}${right(fn.ret)}`;
      return `${ret} ${print(node.name)}(${params})${fn.quals}${fn.ref}`;
    }
  }
}

function hasDeclaratorRight(node: Node): boolean {
  return right(node) !== "";
}

function right(node: Node): string {
  step();
  switch (node.k) {
    case "qual":
      return right(node.of) === "" ? "" : `${right(node.of)}${node.quals}`;
    case "ptr":
    case "ref":
      return `${hasFunctionOrArray(node.of) ? ")" : ""}${right(node.of)}`;
    case "array":
      // int [12][8]: only the first dimension is set apart.
      return ` [${node.dim}]${right(node.of).replace(/^ \[/, "[")}`;
    case "func":
      return `(${paramsText(node.params)})${node.quals}${node.ref}${node.spec}${node.ret ? right(node.ret) : ""}`;
    case "member":
      return `${hasFunctionOrArray(node.of) ? ")" : ""}${right(node.of)}`;
    default:
      return "";
  }
}

function print(node: Node): string {
  if (node.k === "func") {
    const l = left(node);
    return `${l}${l ? " " : ""}${right(node)}`;
  }
  return left(node) + right(node);
}

/** The demangled text of an Itanium C++ symbol (`_Z…`), or null when it is not one this reads. */
export function demangleItanium(symbol: string): string | null {
  printSteps = 0;
  try {
    return new Parser(symbol).symbol();
  } catch (error) {
    if (error === FAIL || error instanceof RangeError) return null;
    throw error;
  }
}
