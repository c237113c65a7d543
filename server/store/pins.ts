import type { SqliteDatabase } from "./control-store";

/**
 * What a pinned commit holds, for the checks of notebook pins and evidence references: a run is
 * visible in a commit when one of the commit's generations is of an artifact registered for it
 * (as the evidence services find a run's generations).
 */
export function runVisibleInCommit(db: SqliteDatabase, runId: string, commitId: string): boolean {
  return (
    db
      .prepare(
        `SELECT 1 FROM commit_generations cg JOIN generations g ON g.id = cg.generation_id
           JOIN registrations r ON r.artifact_id = g.artifact_id
         WHERE cg.commit_id = ? AND r.run_id = ? LIMIT 1`,
      )
      .get(commitId, runId) !== undefined
  );
}

/** Which of these commit ids this workspace holds (an imported notebook may name others). */
export function knownCommits(db: SqliteDatabase, commitIds: readonly string[]): Set<string> {
  const known = new Set<string>();
  const stmt = db.prepare("SELECT 1 FROM commits WHERE id = ?");
  for (const id of new Set(commitIds)) if (stmt.get(id)) known.add(id);
  return known;
}
