import { createRedactor } from "../../analysis/redaction";
import { redactionContext } from "../store/redaction-context";
import type { Workspace } from "../store/workspace";

/** Lines and characters of a failed workload's stderr kept with its run for the run page. */
export const STDERR_TAIL_LINES = 30;
export const STDERR_TAIL_CHARS = 4000;

export interface StderrTail {
  /** The last lines, redacted (paths outside the project, names, secrets → typed tokens). */
  text: string;
  lines: number;
  /** Lines before these that are not shown (the whole output is the run's `stderr` artifact, when kept). */
  omitted_lines: number;
  redactions: number;
}

/**
 * The end of a workload's stderr as a person reads it on a failed run's page: the last lines,
 * bounded, redacted with the workspace's redactor. The whole bounded output stays the run's
 * `internal` stderr artifact; this tail is what the page and `runs get` show.
 */
export function stderrTail(ws: Workspace, bytes: Buffer): StderrTail | null {
  const all = bytes.toString("utf8").replace(/\r\n/g, "\n").replace(/\n+$/, "");
  if (all.trim() === "") return null;
  const lines = all.split("\n");
  let kept = lines.slice(-STDERR_TAIL_LINES);
  while (kept.length > 1 && kept.join("\n").length > STDERR_TAIL_CHARS) kept = kept.slice(1);
  let text = kept.join("\n");
  if (text.length > STDERR_TAIL_CHARS) text = text.slice(-STDERR_TAIL_CHARS);
  const redacted = createRedactor(redactionContext(ws.secret, ws.layout.projectRoot))(text);
  const redactions = Object.values(redacted.counts).reduce((sum, n) => sum + n, 0);
  return { text: redacted.text, lines: kept.length, omitted_lines: lines.length - kept.length, redactions };
}
