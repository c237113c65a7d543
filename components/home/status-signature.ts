/** What must change for the page to re-render: counts and HEAD. */
export function statusSignature(status: { head_commit_id: string; counts: { runs: number; operations_active: number; commits: number } }): string {
  return `${status.head_commit_id}|${status.counts.runs}|${status.counts.operations_active}|${status.counts.commits}`;
}
