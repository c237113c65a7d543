import type { ErrorDocument } from "../../server/domain/errors";
import type { Run } from "../../server/domain/models";
import { ErrorPanel } from "../ErrorPanel";
import "./run-failure.css";

interface StderrTail {
  text: string;
  lines: number;
  omitted_lines: number;
  redactions: number;
}

const isErrorDocument = (value: unknown): value is ErrorDocument =>
  typeof value === "object" && value !== null && typeof (value as ErrorDocument).code === "string" && typeof (value as ErrorDocument).message === "string";

const isTail = (value: unknown): value is StderrTail => typeof value === "object" && value !== null && typeof (value as StderrTail).text === "string";

/** The shell spelling of a failed run's recovery: capture again, or import again with a chosen format. */
function recoveryCommand(run: Run): string | undefined {
  const details = run.details;
  if (run.kind === "capture" && typeof details.workload === "string") return `npx emberscope capture run ${run.source} --workload ${details.workload}`;
  if (run.kind === "import") return "npx emberscope import FILE --format FORMAT";
  return undefined;
}

/** Where the home page's capture panel opens with this run's workload and adapter chosen. */
function captureAgainHref(run: Run): string | null {
  const workload = run.details.workload;
  if (run.kind !== "capture" || typeof workload !== "string") return null;
  return `/?${new URLSearchParams({ workload, adapter: run.source }).toString()}#capture-heading`;
}

/**
 * Why a run failed, timed out or was cancelled, on its own page: the typed error with its recovery
 * (a link that opens the capture again, and the command), and for captures the last lines of the
 * workload's stderr as kept with the run — redacted with the workspace's redactor.
 */
export function RunFailure({ run }: { run: Run }) {
  if (run.status !== "failed" && run.status !== "cancelled") return null;
  const error = isErrorDocument(run.details.error) ? run.details.error : null;
  const tail = isTail(run.details.stderr_tail) ? run.details.stderr_tail : null;
  const again = captureAgainHref(run);
  const exit = typeof run.details.exit_code === "number" ? `exit code ${run.details.exit_code}` : typeof run.details.signal === "string" ? `signal ${run.details.signal}` : null;
  return (
    <section className="run-failure" data-testid="run-failure" aria-labelledby="run-failure-heading">
      <h2 id="run-failure-heading">{run.status === "cancelled" ? "This run was cancelled" : error?.code === "PROCESS_TIMEOUT" ? "This run timed out" : "This run failed"}</h2>
      {error ? (
        <ErrorPanel error={error} command={recoveryCommand(run)} />
      ) : (
        <p className="tip-muted">No error was recorded with the run (it ended before it could say why).</p>
      )}
      {again ? (
        <p>
          <a className="button" href={again} data-testid="run-failure-capture-again">
            Capture {String(run.details.workload)} again
          </a>{" "}
          <span className="tip-muted">opens the capture panel with this workload and adapter; the plan is shown for review first.</span>
        </p>
      ) : null}
      {tail ? (
        <div className="stderr-tail" data-testid="run-failure-stderr">
          <h3>
            The end of the workload&apos;s stderr{exit ? <span className="tip-muted"> · {exit}</span> : null}
          </h3>
          <p className="tip-muted">
            The last {tail.lines} line{tail.lines === 1 ? "" : "s"}
            {tail.omitted_lines ? ` (${tail.omitted_lines} earlier not shown)` : ""}; paths outside the project, user and host names and secret-looking values are replaced by tokens
            {tail.redactions ? ` (${tail.redactions} here)` : ""}.
          </p>
          <pre className="mono">{tail.text}</pre>
        </div>
      ) : run.kind === "capture" ? (
        <p className="tip-muted" data-testid="run-failure-no-stderr">
          The workload wrote nothing to stderr.
        </p>
      ) : null}
    </section>
  );
}

/** An importer's limitation as a sentence: its message, with its code kept for search. */
export function LimitationLine({ limitation }: { limitation: { code: string; message: string } }) {
  const sentence = limitation.message.trim();
  return (
    <li data-code={limitation.code}>
      {/[.!?]$/.test(sentence) ? sentence : `${sentence}.`} <span className="tip-muted mono">{limitation.code}</span>
    </li>
  );
}
