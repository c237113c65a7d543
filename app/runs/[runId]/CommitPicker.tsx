"use client";

export interface CommitOption {
  commit_id: string;
  seq: number;
  message: string;
}

/** Pins another commit (one that holds the run, each labelled with its own message): reloads the page with `commit=` changed and everything else kept. */
export function CommitPicker(props: { commits: CommitOption[]; current: string; headId: string | null }) {
  return (
    <label className="field commit-picker">
      <span>Commit</span>
      <select
        value={props.current}
        data-testid="commit-picker"
        onChange={(e) => {
          const url = new URL(window.location.href);
          if (e.target.value === props.headId) url.searchParams.delete("commit");
          else url.searchParams.set("commit", e.target.value);
          url.searchParams.delete("zoom");
          window.location.assign(url.toString());
        }}
      >
        {props.commits.map((c) => (
          <option key={c.commit_id} value={c.commit_id} title={c.commit_id}>
            #{c.seq}
            {c.commit_id === props.headId ? " HEAD" : ""} · {c.message ? (c.message.length > 48 ? `${c.message.slice(0, 47)}…` : c.message) : c.commit_id}
          </option>
        ))}
      </select>
    </label>
  );
}
