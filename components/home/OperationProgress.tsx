import type { Operation } from "../../server/store/operations";

/** One operation's state, phase and progress (a bar when the total is known, else the phase name). */
export function OperationProgress({ op }: { op: Operation }) {
  const { completed, total } = op.progress;
  return (
    <span className="op-progress" data-testid="operation-progress" data-state={op.state}>
      <span className={`status status-${op.state}`}>{op.state}</span> {op.phase && op.phase !== op.state ? <span>{op.phase}</span> : null}
      {total ? (
        <>
          {" "}
          <progress max={total} value={completed ?? 0} /> <span className="num">{completed ?? 0}/{total}</span>
        </>
      ) : completed !== null ? (
        <span className="num"> {completed}</span>
      ) : null}
    </span>
  );
}
