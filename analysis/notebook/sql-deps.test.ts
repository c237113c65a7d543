import { describe, expect, it } from "vitest";
import { RESERVED_CELL_NAMES } from "./cells";
import { downstreamOf, planSqlCells, tableReferences, type SqlCellInput } from "./sql-deps";

const cell = (cell_id: string, name: string | null, sql: string): SqlCellInput => ({ cell_id, name, sql });
const plan = (...cells: SqlCellInput[]) => planSqlCells(cells, RESERVED_CELL_NAMES);
const errorsOf = (p: ReturnType<typeof plan>) => Object.fromEntries(p.errors);

describe("tableReferences: the names a SQL statement reads as tables", () => {
  it("reads the name after FROM and after every kind of JOIN, lower-cased and each once", () => {
    expect(tableReferences("SELECT * FROM hot_frames JOIN frames USING (frame_id)")).toEqual(["hot_frames", "frames"]);
    expect(
      tableReferences(`
        SELECT * FROM a
        LEFT JOIN b ON a.id = b.id
        RIGHT OUTER JOIN c ON true
        FULL JOIN d USING (id)
        INNER JOIN e ON e.id = a.id
        CROSS JOIN f
        NATURAL JOIN g
        ASOF JOIN h ON a.t >= h.t
        SEMI JOIN i USING (id)
        ANTI JOIN j USING (id)
        POSITIONAL JOIN k
        JOIN LATERAL l ON true
        JOIN A ON true`),
    ).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]);
    expect(tableReferences("select * from Hot")).toEqual(["hot"]);
  });

  it("reads each item of a comma-separated FROM list, with or without an alias", () => {
    expect(tableReferences("SELECT * FROM a, b x, c AS y, d")).toEqual(["a", "b", "c", "d"]);
    expect(tableReferences("SELECT * FROM a JOIN b ON a.id = b.id, c WHERE c.id IN (1, 2)")).toEqual(["a", "b", "c"]);
    expect(tableReferences("SELECT * FROM a JOIN b USING (id, t), c")).toEqual(["a", "b", "c"]);
    expect(tableReferences("SELECT * FROM a AS x(p, q), b")).toEqual(["a", "b"]);
  });

  it("does not take commas of the clauses after FROM, nor of lists and calls, as more tables", () => {
    expect(tableReferences("SELECT a, b FROM t WHERE f(a, b) > 0 GROUP BY a, b HAVING count(*) > 1 ORDER BY a, b LIMIT 10")).toEqual(["t"]);
    expect(tableReferences("SELECT * FROM t WHERE x IN [1, 2] AND y = {'k': 1, 'v': 2}")).toEqual(["t"]);
    expect(tableReferences("FROM t SELECT a, b")).toEqual(["t"]);
    expect(tableReferences("SELECT * FROM t QUALIFY row_number() OVER (PARTITION BY a, b ORDER BY c) = 1")).toEqual(["t"]);
  });

  it("reads inside subqueries, parenthesized joins, set operations and DuckDB's FROM-first queries", () => {
    expect(tableReferences("SELECT * FROM (SELECT * FROM inner_cell) s, other")).toEqual(["inner_cell", "other"]);
    expect(tableReferences("SELECT * FROM t WHERE id IN (SELECT id FROM ids) AND EXISTS (FROM marks)")).toEqual(["t", "ids", "marks"]);
    expect(tableReferences("SELECT * FROM (a JOIN b USING (id))")).toEqual(["a", "b"]);
    expect(tableReferences("SELECT x FROM a UNION ALL SELECT x FROM b EXCEPT SELECT x FROM c")).toEqual(["a", "b", "c"]);
    expect(tableReferences("FROM (FROM hot SELECT frame_id) SELECT count(*)")).toEqual(["hot"]);
    expect(tableReferences("SELECT (SELECT max(w) FROM weights), array(SELECT id FROM ids) FROM t")).toEqual(["weights", "ids", "t"]);
    expect(tableReferences("SELECT * FROM a JOIN LATERAL (SELECT * FROM b WHERE b.id = a.id) ON true")).toEqual(["a", "b"]);
  });

  it("does not read the statement's own CTEs, but reads what their bodies read", () => {
    expect(tableReferences("WITH hot AS (SELECT * FROM samples JOIN base USING (stack_id)) SELECT * FROM hot")).toEqual(["samples", "base"]);
    expect(
      tableReferences(`
        WITH RECURSIVE walk(id, depth) AS (
          SELECT stack_id, 0 FROM roots
          UNION ALL SELECT s.stack_id, w.depth + 1 FROM stacks s JOIN walk w ON s.parent_stack_id = w.id
        ),
        deep AS MATERIALIZED (FROM walk WHERE depth > 10),
        shallow AS NOT MATERIALIZED (SELECT * FROM walk WHERE depth < 2)
        SELECT * FROM deep, shallow, extra`),
    ).toEqual(["roots", "stacks", "extra"]);
  });

  it("lets a CTE hide its name only in its own statement", () => {
    expect(tableReferences("WITH hot AS (SELECT 1) SELECT * FROM hot; SELECT * FROM hot")).toEqual(["hot"]);
  });

  it("ignores FROM and JOIN inside strings and comments", () => {
    expect(
      tableReferences(`
        -- SELECT * FROM commented
        /* FROM blocked /* nested FROM deeper */ still FROM comment */
        SELECT 'it''s FROM quoted', E'it\\'s FROM escaped', $$FROM dollar$$, $tag$ JOIN tagged $tag$, "FROM x" AS label
        FROM real -- JOIN trailing`),
    ).toEqual(["real"]);
    expect(tableReferences("SELECT 'unterminated FROM x")).toEqual([]);
    expect(tableReferences("SELECT 1 /* unterminated FROM x")).toEqual([]);
  });

  it("does not take FROM as an argument keyword or in IS DISTINCT FROM as a table read", () => {
    expect(tableReferences("SELECT EXTRACT(year FROM ts), substring(name FROM 2 FOR 3), trim(both 'x' FROM name) FROM spans")).toEqual(["spans"]);
    expect(tableReferences("SELECT * FROM a WHERE x IS DISTINCT FROM y AND z IS NOT DISTINCT FROM w")).toEqual(["a"]);
    expect(tableReferences("SELECT overlay(s PLACING 'ab' FROM 2) FROM t")).toEqual(["t"]);
  });

  it("skips table functions, schema-qualified names, files and subqueries as reads of their own", () => {
    expect(tableReferences("SELECT * FROM range(10) r, read_parquet('x.parquet'), main.frames, db.main.t, 'file.csv', (SELECT 1) s")).toEqual([]);
    expect(tableReferences("SELECT * FROM a CROSS JOIN LATERAL unnest(a.xs) AS u(x) JOIN b ON true")).toEqual(["a", "b"]);
  });

  it("reads a double-quoted name as its text, lower-cased as DuckDB matches it", () => {
    expect(tableReferences('SELECT * FROM "Hot", "cold", "with ""quotes"""')).toEqual(["hot", "cold", 'with "quotes"']);
    expect(tableReferences('SELECT * FROM "main"."frames"')).toEqual([]);
    expect(tableReferences('SELECT * FROM "select"')).toEqual(["select"]);
  });

  it("reads the table of DuckDB's SUMMARIZE, DESCRIBE, PIVOT and TABLE statements", () => {
    expect(tableReferences("SUMMARIZE hot")).toEqual(["hot"]);
    expect(tableReferences("DESCRIBE hot")).toEqual(["hot"]);
    expect(tableReferences("PIVOT hot ON kind USING sum(self)")).toEqual(["hot"]);
    expect(tableReferences("TABLE hot")).toEqual(["hot"]);
    expect(tableReferences("SELECT * FROM (SUMMARIZE hot)")).toEqual(["hot"]);
    expect(tableReferences("SUMMARIZE SELECT * FROM hot")).toEqual(["hot"]);
    expect(tableReferences("SELECT * FROM describe")).toEqual(["describe"]);
  });

  it("costs time linear in the statement's length, up to a megabyte", () => {
    const unit = "SELECT a, 'x''y', \"q\" FROM t1 JOIN t2 USING (id), t3 WHERE f(a FROM b) IN (SELECT c FROM t4) /* c */ -- d\n";
    const of = (bytes: number) => unit.repeat(Math.ceil(bytes / unit.length));
    const cost = (sql: string) => {
      let best = Infinity;
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        tableReferences(sql);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const large = of(1 << 20);
    expect(tableReferences(large)).toEqual(["t1", "t2", "t3", "t4"]);
    const small = cost(of(1 << 17));
    // 8× the text must cost about 8× (linear), not about 64× (quadratic), whatever the machine's load.
    expect(cost(large) / Math.max(small, 0.5)).toBeLessThan(32);
  });
});

describe("planSqlCells: dependencies, run order and errors of a notebook's SQL cells", () => {
  it("runs a chain in dependency order, and an evidence table is a read, not a dependency", () => {
    const p = plan(cell("c1", "hot", "SELECT * FROM samples JOIN stacks USING (stack_id)"), cell("c2", "hotter", "SELECT * FROM hot JOIN frames USING (frame_id)"), cell("c3", null, "FROM hotter"));
    expect(p.order).toEqual(["c1", "c2", "c3"]);
    expect(Object.fromEntries(p.reads)).toEqual({ c1: [], c2: ["c1"], c3: ["c2"] });
    expect(p.errors.size).toBe(0);
  });

  it("runs a diamond once each, breaking ties by notebook order", () => {
    const p = plan(
      cell("top", "base", "FROM samples"),
      cell("right", "r", "FROM base"),
      cell("left", "l", "FROM base"),
      cell("bottom", null, "SELECT * FROM l JOIN r USING (stack_id)"),
    );
    expect(p.order).toEqual(["top", "right", "left", "bottom"]);
    expect(p.reads.get("bottom")).toEqual(["right", "left"]);
  });

  it("allows a cell to read a later cell, and runs it after that cell", () => {
    const p = plan(cell("summary", null, "SELECT count(*) FROM late"), cell("other", "other", "FROM frames"), cell("late", "late", "FROM samples"));
    expect(p.order).toEqual(["other", "late", "summary"]);
  });

  it("reports a two-cell cycle on both cells, naming it from each, and blocks what reads it", () => {
    const p = plan(cell("a", "ping", "FROM pong"), cell("b", "pong", "FROM ping"), cell("c", "after", "FROM pong"), cell("d", null, "FROM after"), cell("e", null, "FROM frames"));
    expect(errorsOf(p)).toEqual({
      a: { kind: "cycle", cycle: ["ping", "pong"] },
      b: { kind: "cycle", cycle: ["pong", "ping"] },
      c: { kind: "blocked", by: "b" },
      d: { kind: "blocked", by: "b" },
    });
    expect(p.order).toEqual(["e"]);
  });

  it("names the shortest cycle through each cell of a larger knot", () => {
    const p = plan(cell("a", "x", "FROM y"), cell("b", "y", "SELECT * FROM z, x"), cell("c", "z", "FROM x"));
    expect(errorsOf(p)).toEqual({
      a: { kind: "cycle", cycle: ["x", "y"] },
      b: { kind: "cycle", cycle: ["y", "x"] },
      c: { kind: "cycle", cycle: ["z", "x", "y"] },
    });
  });

  it("reports a cell reading its own name as a cycle of one", () => {
    const p = plan(cell("m", "me", "SELECT * FROM me"), cell("n", null, "FROM me"));
    expect(errorsOf(p)).toEqual({ m: { kind: "cycle", cycle: ["me"] }, n: { kind: "blocked", by: "m" } });
    expect(p.order).toEqual([]);
  });

  it("reports names that are neither evidence tables, CTEs nor cells as dangling, and blocks what reads the cell", () => {
    const p = plan(cell("a", "typo", "SELECT * FROM frmaes JOIN nowhere USING (id) JOIN frames USING (id)"), cell("b", null, "FROM typo"), cell("c", null, "FROM samples"));
    expect(errorsOf(p)).toEqual({ a: { kind: "dangling", names: ["frmaes", "nowhere"] }, b: { kind: "blocked", by: "a" } });
    expect(p.order).toEqual(["c"]);
  });

  it("reports cells sharing a name, and blocks cells reading that name", () => {
    const p = plan(cell("a", "twin", "FROM frames"), cell("b", "twin", "FROM stacks"), cell("c", null, "FROM twin"), cell("d", null, "FROM samples"));
    expect(errorsOf(p)).toEqual({ a: { kind: "duplicate_name" }, b: { kind: "duplicate_name" }, c: { kind: "blocked", by: "a" } });
    expect(p.order).toEqual(["d"]);
  });

  it("lets a CTE of the same name as a cell hide it: no dependency, no cycle", () => {
    const p = plan(cell("a", "hot", "WITH hot AS (FROM samples) SELECT * FROM hot"), cell("b", "warm", "WITH hot AS (SELECT 1) SELECT * FROM hot"));
    expect(Object.fromEntries(p.reads)).toEqual({ a: [], b: [] });
    expect(p.order).toEqual(["a", "b"]);
    expect(p.errors.size).toBe(0);
  });

  it("matches names case-insensitively and ignores names in comments and strings", () => {
    const p = plan(cell("a", "hot", "FROM samples"), cell("b", null, `SELECT 'FROM nowhere' FROM Hot /* JOIN cold */ JOIN "HOT" h2 USING (stack_id)`));
    expect(p.reads.get("b")).toEqual(["a"]);
    expect(p.errors.size).toBe(0);
  });

  it("plans a chain of thousands of cells without recursion", () => {
    const cells = Array.from({ length: 20_000 }, (_, i) => cell(`c${i}`, `n${i}`, i === 0 ? "FROM frames" : `FROM n${i - 1}`)).reverse();
    const p = planSqlCells(cells, RESERVED_CELL_NAMES);
    expect(p.order.length).toBe(20_000);
    expect(p.order[0]).toBe("c0");
    expect(p.order.at(-1)).toBe("c19999");
    // Each cell of a ring names the whole ring: 1,000 names 1,000 times.
    const ring = Array.from({ length: 1_000 }, (_, i) => cell(`c${i}`, `n${i}`, `FROM n${(i + 1) % 1_000}`));
    const looped = planSqlCells(ring, RESERVED_CELL_NAMES);
    expect(looped.order).toEqual([]);
    expect(looped.errors.get("c5")).toEqual({ kind: "cycle", cycle: [...Array.from({ length: 995 }, (_, i) => `n${i + 5}`), "n0", "n1", "n2", "n3", "n4"] });
  });
});

describe("downstreamOf: what to re-run after a cell changes", () => {
  const p = plan(
    cell("base", "base", "FROM samples"),
    cell("unrelated", "u", "FROM frames"),
    cell("report", null, "SELECT * FROM mid JOIN base USING (stack_id)"),
    cell("mid", "mid", "FROM base"),
    cell("broken", null, "SELECT * FROM base JOIN missing USING (id)"),
    cell("leaf", null, "FROM u"),
  );

  it("is the cell first, then every transitive dependent in run order, without unrelated cells", () => {
    expect(downstreamOf(p, "base")).toEqual(["base", "mid", "report"]);
    expect(downstreamOf(p, "mid")).toEqual(["mid", "report"]);
    expect(downstreamOf(p, "unrelated")).toEqual(["unrelated", "leaf"]);
    expect(downstreamOf(p, "report")).toEqual(["report"]);
  });

  it("leaves out cells that cannot run, and is empty for such a cell or an unknown one", () => {
    expect(p.errors.get("broken")).toEqual({ kind: "dangling", names: ["missing"] });
    expect(downstreamOf(p, "broken")).toEqual([]);
    expect(downstreamOf(p, "nope")).toEqual([]);
  });
});
