import type { FirstSqlAnswer } from "../../components/sql/first-answer";
import { buildPresets, presetContext, STARTER_SQL } from "../../components/sql/presets";
import { EmberscopeError } from "../../server/domain/errors";
import { callService, runSql, type ServiceContext } from "../../server/services";
import { SERVER_SQL_MAX_CHARS } from "../../analysis/evidence/sql-console";

/**
 * The SQL console's first answer, asked of the server engine while the page renders (the /sql page
 * and the run page's SQL tab): the presets' context, then the URL's query, else the named preset's,
 * else the starter. Null when the server engine cannot answer at all: the console then asks
 * DuckDB-WASM as before.
 */
export async function firstSqlAnswer(ctx: ServiceContext, commitId: string, runId: string | null, sql: string | null, presetName: string | null): Promise<FirstSqlAnswer | null> {
  const ask = (text: string) => callService(runSql, ctx, { commit_id: commitId, sql: text, ...(runId ? { run_id: runId } : {}) });
  try {
    const probe = await ask("SELECT 1 AS ok");
    const context = await presetContext(probe.generations, async (q) => (await ask(q)).rows);
    const preset = !sql && presetName ? buildPresets(context).find((p) => p.name === presetName && p.sql) : undefined;
    const text = sql || preset?.sql || STARTER_SQL;
    const base = { commit_id: probe.commit_id, seq: probe.seq, generations: probe.generations, context, sql: text, preset: preset?.name ?? null };
    if (text.length > SERVER_SQL_MAX_CHARS) return null;
    try {
      const { columns, rows, truncated, ms, engine, engine_version } = await ask(text);
      return { ...base, answer: { columns, rows, truncated, ms, engine, engine_version } };
    } catch (thrown) {
      if (thrown instanceof EmberscopeError && thrown.code === "QUERY_INVALID") return { ...base, answer: { error: thrown.message, code: thrown.code } };
      throw thrown;
    }
  } catch {
    return null;
  }
}
