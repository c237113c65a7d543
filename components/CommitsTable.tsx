import type { Commit } from "../server/domain/models";

/** Corpus commits (snapshots), newest first. */
export function CommitsTable({ commits }: { commits: Commit[] }) {
  return (
    <table className="data" data-testid="commits-table">
      <thead>
        <tr>
          <th className="num">#</th>
          <th>Commit</th>
          <th className="num">Generations</th>
          <th>Created</th>
          <th>Message</th>
        </tr>
      </thead>
      <tbody>
        {commits.map((c) => (
          <tr key={c.commit_id}>
            <td className="num">{c.seq}</td>
            <td className="mono">{c.commit_id}</td>
            <td className="num">{c.generation_count}</td>
            <td className="num">{c.created_at.replace("T", " ").slice(0, 19)}</td>
            <td className="wide">{c.message}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
