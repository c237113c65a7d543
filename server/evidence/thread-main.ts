import { runRangeThread } from "./range-thread";
import { threadRole, type ThreadRole } from "./threads";
import { runWriterThread } from "./writer-thread";

/**
 * The entry of the threads an extraction starts (bin/emberscope.js loads it instead of the CLI in
 * a thread): the roles' code only, without the CLI's commands and services, so that a thread loads
 * in about half the time (it is started for every large import).
 */
const THREAD_LOOPS: Record<ThreadRole, () => Promise<void>> = { "parquet-writer": runWriterThread, "range-parser": runRangeThread };

/** Runs this thread's role (workerData.role) until it is done. */
export function runThread(): Promise<void> {
  const role = threadRole();
  if (!role) throw new Error("this thread was started without a known role");
  return THREAD_LOOPS[role]();
}
