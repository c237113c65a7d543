/**
 * Which cells a SQL cell reads, and the order reactive SQL cells run in. A named SQL cell is a
 * table to the cells after it changes; `planSqlCells` turns the names each cell's SQL reads into
 * dependencies, a run order, and one error per cell that cannot run (a cycle, a dangling name, a
 * shared name, or a dependency with one of those).
 *
 * `tableReferences` is a tokenizer and a small state machine, not a SQL parser: one pass, linear
 * in the text, and wrong only on SQL that DuckDB would not run either (or on the rare forms
 * listed at the function).
 */

/** One error per cell that cannot run, the first that applies in this order. */
export type SqlCellError =
  /** The cell is in a cycle: the names from this cell's, each read by the one before, the last reading the first. */
  | { kind: "cycle"; cycle: string[] }
  /** Another cell has this cell's name. */
  | { kind: "duplicate_name" }
  /** Table names that are neither an evidence table, a CTE of the statement, nor any cell's name. */
  | { kind: "dangling"; names: string[] }
  /** The cell reads, directly or not, the cell `by`, which has one of the errors above. */
  | { kind: "blocked"; by: string };

export interface SqlPlan {
  /** Per cell_id, the cells its SQL reads directly, in notebook order. */
  reads: ReadonlyMap<string, readonly string[]>;
  /** Every cell that can run, each after the cells it reads; otherwise in notebook order. */
  order: readonly string[];
  /** Per cell_id, why that cell cannot run; such cells are not in `order`. */
  errors: ReadonlyMap<string, SqlCellError>;
}

export interface SqlCellInput {
  cell_id: string;
  name: string | null;
  sql: string;
}

// ---------------------------------------------------------------------------------------------
// Tokens

type Token =
  /** An unquoted identifier or keyword, lower-cased. */
  | { kind: "word"; text: string }
  /** A double-quoted identifier's text, lower-cased, `""` read as `"`. */
  | { kind: "quoted"; text: string }
  | { kind: "punct"; text: "(" | ")" | "[" | "]" | "{" | "}" | "," | "." | ";" }
  /** A string, number, operator or parameter: never a name. */
  | { kind: "other" };

const OTHER: Token = { kind: "other" };
const PUNCT = "()[]{},.;";
const DOLLAR_TAG = /\$([A-Za-z_][A-Za-z0-9_]*)?\$/y;

const isSpace = (c: number) =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff || (c >= 0x2000 && c <= 0x200b) || c === 0x2028 || c === 0x2029 || c === 0x3000;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isWordStart = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (c >= 128 && !isSpace(c));
const isWordPart = (c: number) => isWordStart(c) || isDigit(c) || c === 36;

/** The index just past the string literal whose opening quote is at `start`. */
function endOfString(sql: string, start: number, backslashEscapes: boolean): number {
  if (backslashEscapes) {
    for (let i = start + 1; i < sql.length; i++) {
      const c = sql[i];
      if (c === "\\") i++;
      else if (c === "'") {
        if (sql[i + 1] !== "'") return i + 1;
        i++;
      }
    }
    return sql.length;
  }
  let i = start + 1;
  for (;;) {
    const close = sql.indexOf("'", i);
    if (close < 0) return sql.length;
    if (sql[close + 1] !== "'") return close + 1;
    i = close + 2;
  }
}

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql.charCodeAt(i);
    const next = sql.charCodeAt(i + 1);
    if (isSpace(c)) {
      i++;
    } else if (c === 45 /* - */ && next === 45) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? n : end + 1;
    } else if (c === 47 /* / */ && next === 42 /* * */) {
      // Block comments nest, as in DuckDB's (PostgreSQL's) grammar.
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (sql[i] === "/" && sql[i + 1] === "*") {
          depth++;
          i += 2;
        } else if (sql[i] === "*" && sql[i + 1] === "/") {
          depth--;
          i += 2;
        } else {
          i++;
        }
      }
    } else if (c === 39 /* ' */) {
      i = endOfString(sql, i, false);
      tokens.push(OTHER);
    } else if (c === 34 /* " */) {
      let text = "";
      let from = i + 1;
      for (;;) {
        const close = sql.indexOf('"', from);
        if (close < 0) {
          text += sql.slice(from);
          i = n;
          break;
        }
        text += sql.slice(from, close);
        if (sql[close + 1] !== '"') {
          i = close + 1;
          break;
        }
        text += '"';
        from = close + 2;
      }
      tokens.push({ kind: "quoted", text: text.toLowerCase() });
    } else if (c === 36 /* $ */) {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(sql)?.[0];
      if (tag) {
        const close = sql.indexOf(tag, i + tag.length);
        i = close < 0 ? n : close + tag.length;
      } else {
        i++; // a parameter: $1, $name
        while (i < n && isWordPart(sql.charCodeAt(i))) i++;
      }
      tokens.push(OTHER);
    } else if (isWordStart(c)) {
      let end = i + 1;
      while (end < n && isWordPart(sql.charCodeAt(end))) end++;
      const text = sql.slice(i, end).toLowerCase();
      if (text === "e" && sql[end] === "'") {
        i = endOfString(sql, end, true); // E'it\'s': backslash escapes
        tokens.push(OTHER);
      } else {
        i = end;
        tokens.push({ kind: "word", text });
      }
    } else if (isDigit(c)) {
      i++;
      while (i < n && (isWordPart(sql.charCodeAt(i)) || sql[i] === ".")) i++;
      tokens.push(OTHER);
    } else {
      const ch = sql[i];
      tokens.push(PUNCT.includes(ch) ? ({ kind: "punct", text: ch } as Token) : OTHER);
      i++;
    }
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Table references

/** Words that are never a table's name (unquoted) nor a function's: SQL's reserved words. */
const RESERVED = new Set([
  "all", "and", "any", "as", "between", "both", "by", "case", "cross", "distinct", "else", "end", "except", "exists", "fetch", "from", "full", "group", "having",
  "ilike", "in", "inner", "intersect", "into", "is", "join", "lateral", "leading", "left", "like", "limit", "natural", "not", "offset", "on", "only", "or",
  "order", "outer", "qualify", "returning", "right", "select", "similar", "some", "table", "then", "trailing", "union", "using", "values", "when", "where",
  "window", "with",
]);
/** Words after which a FROM clause's commas no longer separate tables. */
const ENDS_FROM_LIST = new Set(["where", "group", "having", "qualify", "window", "order", "limit", "offset", "union", "except", "intersect", "values", "returning", "fetch", "select", "set"]);
/** DuckDB statements that start with the table they read: `SUMMARIZE hot`, `PIVOT hot ON …`, `TABLE hot`. */
const READS_NEXT_AT_START = new Set(["summarize", "describe", "pivot", "unpivot", "pivot_wider", "pivot_longer", "table"]);

/** The parsing state of one bracket level (the statement itself is the outermost). */
interface Level {
  /** Opened by `name(`: a FROM here is an argument keyword (`EXTRACT(year FROM ts)`) unless a SELECT came first. */
  call: boolean;
  selected: boolean;
  /** In a FROM clause: a comma starts another table. */
  fromList: boolean;
  expectTable: boolean;
  /** A table name read, kept until the next token shows it is not `schema.name` nor `function(...)`. */
  pending: string | null;
  /** Where in `WITH name [(columns)] AS [NOT] [MATERIALIZED] (body), …` this level is. */
  cte: "none" | "name" | "after_name" | "after_as" | "in_body" | "after_body";
  cteName: string;
  atStart: boolean;
}

const level = (call: boolean, inFrom = false): Level => ({
  call,
  selected: false,
  fromList: inFrom,
  expectTable: inFrom,
  pending: null,
  cte: "none",
  cteName: "",
  atStart: true,
});

const isName = (t: Token | undefined): t is Extract<Token, { kind: "word" | "quoted" }> =>
  t !== undefined && (t.kind === "quoted" || (t.kind === "word" && !RESERVED.has(t.text)));
const isWord = (t: Token | undefined, ...texts: string[]) => t !== undefined && t.kind === "word" && texts.includes(t.text);
const isPunct = (t: Token | undefined, text: string) => t !== undefined && t.kind === "punct" && t.text === text;

/**
 * The distinct names `sql` reads as tables, lower-cased, in order of first appearance: the name
 * after FROM, after every kind of JOIN (and LATERAL), each item of a comma-separated FROM list,
 * and the table of DuckDB's `SUMMARIZE`, `DESCRIBE`, `PIVOT`, `UNPIVOT` and `TABLE`, at any depth.
 *
 * Not reads: names in strings (`'…'`, `E'…'`, `$$…$$`) and comments (`--`, nested block
 * comments); names a `WITH` of the same statement defines (its bodies' reads do count);
 * table functions (`range(10)`), schema-qualified names (`main.x`), files (`FROM 'x.csv'`),
 * subqueries; FROM as an argument keyword (`EXTRACT(year FROM ts)`, `substring(s FROM 2)`,
 * `trim(both FROM s)`) or in `IS [NOT] DISTINCT FROM`.
 *
 * A double-quoted identifier reads its text lower-cased (`"Hot"` reads `hot`), because DuckDB
 * matches identifiers case-insensitively even when quoted.
 *
 * Simplifications: a CTE hides its name everywhere in its statement (SQL scopes it to its own
 * query); FROM-first subqueries (`IN (FROM t)`) count only after a reserved word, not after a
 * function name.
 */
export function tableReferences(sql: string): string[] {
  const tokens = tokenize(sql);
  const found = new Set<string>();
  let statementReads: string[] = [];
  let ctes = new Set<string>();
  let stack: Level[] = [level(false)];

  const endStatement = () => {
    for (const l of stack) if (l.pending !== null) statementReads.push(l.pending);
    for (const name of statementReads) if (!ctes.has(name)) found.add(name);
    statementReads = [];
    ctes = new Set();
    stack = [level(false)];
  };

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const top = stack[stack.length - 1];
    const atStart = top.atStart;
    top.atStart = false;

    if (top.pending !== null) {
      if (isPunct(t, ".")) {
        top.pending = null; // schema-qualified: not a cell
        continue;
      }
      if (isPunct(t, "(")) {
        top.pending = null; // a table function
        stack.push(level(true));
        continue;
      }
      statementReads.push(top.pending);
      top.pending = null;
    }

    if (top.expectTable) {
      top.expectTable = false;
      if (isWord(t, "lateral")) {
        top.expectTable = true;
        continue;
      }
      if (isName(t) && !(atStart && t.kind === "word" && READS_NEXT_AT_START.has(t.text))) {
        top.pending = t.text;
        continue;
      }
      if (isPunct(t, "(")) {
        stack.push(level(false, true)); // a subquery, or a parenthesized join
        continue;
      }
    }

    if (top.cte !== "none") {
      const state = top.cte;
      top.cte = "none";
      if (state === "name") {
        if (isWord(t, "recursive")) top.cte = "name";
        else if (isName(t)) {
          top.cte = "after_name";
          top.cteName = t.text;
        }
      } else if (state === "after_name") {
        if (isWord(t, "as")) {
          ctes.add(top.cteName);
          top.cte = "after_as";
        } else if (isPunct(t, "(")) top.cte = "after_name"; // the column list
      } else if (state === "after_as") {
        if (isWord(t, "not", "materialized")) top.cte = "after_as";
        else if (isPunct(t, "(")) top.cte = "in_body";
      } else if (state === "after_body") {
        if (isPunct(t, ",")) {
          top.cte = "name";
          continue;
        }
      }
      if (top.cte !== "none" && !isPunct(t, "(")) continue;
    }

    if (t.kind === "punct") {
      if (t.text === "(" || t.text === "[" || t.text === "{") {
        const before = tokens[i - 1];
        const call = t.text !== "(" || (isName(before) && !isWord(before, "materialized"));
        stack.push(level(call));
      } else if (t.text === ")" || t.text === "]" || t.text === "}") {
        if (stack.length > 1) {
          const closed = stack.pop()!;
          if (closed.pending !== null) statementReads.push(closed.pending);
          const parent = stack[stack.length - 1];
          if (parent.cte === "in_body") parent.cte = "after_body";
        }
      } else if (t.text === ",") {
        if (top.fromList) top.expectTable = true;
      } else if (t.text === ";") {
        endStatement();
      }
      continue;
    }

    if (t.kind !== "word") continue;
    switch (t.text) {
      case "from": {
        const distinctFrom = isWord(tokens[i - 1], "distinct") && isWord(tokens[i - 2], "is", "not");
        if (!distinctFrom && (!top.call || top.selected)) top.fromList = top.expectTable = true;
        break;
      }
      case "join":
        top.fromList = top.expectTable = true;
        break;
      case "with":
        top.cte = "name";
        break;
      default:
        if (t.text === "select") top.selected = true;
        if (ENDS_FROM_LIST.has(t.text)) top.fromList = false;
        if (atStart && READS_NEXT_AT_START.has(t.text)) top.expectTable = true;
    }
  }
  endStatement();
  return [...found];
}

// ---------------------------------------------------------------------------------------------
// Plan

/** A binary min-heap of notebook positions: the ready cell that comes first in the notebook runs first. */
class PositionHeap {
  private items: number[] = [];
  get size() {
    return this.items.length;
  }
  push(value: number) {
    const a = this.items;
    a.push(value);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent] <= value) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = value;
  }
  pop(): number {
    const a = this.items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= a.length) break;
        const child = left + 1 < a.length && a[left + 1] < a[left] ? left + 1 : left;
        if (a[child] >= last) break;
        a[i] = a[child];
        i = child;
      }
      a[i] = last;
    }
    return top;
  }
}

/** Strongly connected components (Tarjan, with an explicit stack), each emitted after every component it reaches. */
function components(adjacent: readonly number[][]): number[][] {
  const n = adjacent.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const result: number[][] = [];
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] >= 0) continue;
    const walk: { node: number; edge: number }[] = [{ node: root, edge: 0 }];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (walk.length > 0) {
      const frame = walk[walk.length - 1];
      const v = frame.node;
      if (frame.edge < adjacent[v].length) {
        const w = adjacent[v][frame.edge++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          walk.push({ node: w, edge: 0 });
        } else if (onStack[w]) {
          low[v] = Math.min(low[v], index[w]);
        }
        continue;
      }
      walk.pop();
      if (walk.length > 0) {
        const parent = walk[walk.length - 1].node;
        low[parent] = Math.min(low[parent], low[v]);
      }
      if (low[v] === index[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          component.push(w);
        } while (w !== v);
        result.push(component.sort((a, b) => a - b));
      }
    }
  }
  return result;
}

/**
 * The shortest cycle from `start` back to itself within `members`, as positions from `start`.
 * One search per cell of a knot: quadratic in the knot's size, as the errors' text is anyway.
 */
function shortestCycle(start: number, adjacent: readonly number[][], members: ReadonlySet<number>): number[] {
  const cameFrom = new Map<number, number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const u = queue[head];
    for (const w of adjacent[u]) {
      if (w === start) {
        const path = [u];
        while (path[path.length - 1] !== start) path.push(cameFrom.get(path[path.length - 1])!);
        return path.reverse();
      }
      if (members.has(w) && !cameFrom.has(w)) {
        cameFrom.set(w, u);
        queue.push(w);
      }
    }
  }
  return [start]; // unreachable for a member of a cycle
}

/**
 * The dependencies, run order and errors of a notebook's SQL cells, given in notebook order.
 * A name a cell reads is an evidence table if it is one of `evidenceTables`, else the cell of
 * that name, else dangling. Deterministic: the order is the topological order that keeps
 * notebook order wherever dependencies allow.
 */
export function planSqlCells(cells: readonly SqlCellInput[], evidenceTables: readonly string[]): SqlPlan {
  const evidence = new Set(evidenceTables.map((t) => t.toLowerCase()));
  const byName = new Map<string, number[]>();
  cells.forEach((cell, i) => {
    if (cell.name === null) return;
    const named = byName.get(cell.name);
    if (named) named.push(i);
    else byName.set(cell.name, [i]);
  });

  const adjacent: number[][] = [];
  const dangling: string[][] = [];
  for (const cell of cells) {
    const read = new Set<number>();
    const unknown: string[] = [];
    for (const name of tableReferences(cell.sql)) {
      if (evidence.has(name)) continue;
      const named = byName.get(name);
      if (named) for (const j of named) read.add(j);
      else unknown.push(name);
    }
    adjacent.push([...read].sort((a, b) => a - b));
    dangling.push(unknown);
  }

  const errors: (SqlCellError | undefined)[] = new Array(cells.length).fill(undefined);
  const sccs = components(adjacent);
  for (const component of sccs) {
    const cyclic = component.length > 1 || adjacent[component[0]].includes(component[0]);
    if (!cyclic) continue;
    const members = new Set(component);
    for (const i of component) errors[i] = { kind: "cycle", cycle: shortestCycle(i, adjacent, members).map((j) => cells[j].name!) };
  }
  for (const [, named] of byName) if (named.length > 1) for (const i of named) errors[i] ??= { kind: "duplicate_name" };
  dangling.forEach((names, i) => {
    if (names.length > 0) errors[i] ??= { kind: "dangling", names };
  });
  // Components come dependencies first, so a cell's dependencies are settled before it.
  for (const component of sccs) {
    const i = component[0];
    if (component.length > 1 || errors[i] !== undefined) continue;
    for (const j of adjacent[i]) {
      const error = errors[j];
      if (error === undefined) continue;
      errors[i] = { kind: "blocked", by: error.kind === "blocked" ? error.by : cells[j].cell_id };
      break;
    }
  }

  // Kahn's algorithm over the runnable cells (whose dependencies are all runnable).
  const readers: number[][] = cells.map(() => []);
  const waiting = new Int32Array(cells.length);
  const ready = new PositionHeap();
  cells.forEach((_, i) => {
    if (errors[i] !== undefined) return;
    for (const j of adjacent[i]) readers[j].push(i);
    waiting[i] = adjacent[i].length;
    if (waiting[i] === 0) ready.push(i);
  });
  const order: string[] = [];
  while (ready.size > 0) {
    const i = ready.pop();
    order.push(cells[i].cell_id);
    for (const r of readers[i]) if (--waiting[r] === 0) ready.push(r);
  }

  return {
    reads: new Map(cells.map((cell, i) => [cell.cell_id, adjacent[i].map((j) => cells[j].cell_id)])),
    order,
    errors: new Map(cells.flatMap((cell, i) => (errors[i] ? [[cell.cell_id, errors[i]!] as const] : []))),
  };
}

/**
 * The cells to run after `cellId` changes, in run order: the cell itself, then every cell that
 * reads it directly or not. None if the cell cannot run; dependents that cannot run are left out.
 */
export function downstreamOf(plan: SqlPlan, cellId: string): string[] {
  if (plan.errors.has(cellId) || !plan.reads.has(cellId)) return [];
  const readers = new Map<string, string[]>();
  for (const [reader, reads] of plan.reads) {
    for (const read of reads) {
      const list = readers.get(read);
      if (list) list.push(reader);
      else readers.set(read, [reader]);
    }
  }
  const affected = new Set([cellId]);
  const queue = [cellId];
  for (let head = 0; head < queue.length; head++) {
    for (const reader of readers.get(queue[head]) ?? []) {
      if (!affected.has(reader)) {
        affected.add(reader);
        queue.push(reader);
      }
    }
  }
  return plan.order.filter((id) => affected.has(id));
}
