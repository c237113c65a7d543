/// <reference lib="webworker" />
import { runLayoutJob, transferablesOf, type LayoutJob } from "../../analysis/flame/prepare";

/** Lays out flame graphs off the main thread: a packed job in, typed arrays out (transferred, not copied). */
self.onmessage = (event: MessageEvent<{ id: number; job: LayoutJob }>) => {
  const { id, job } = event.data;
  try {
    const out = runLayoutJob(job);
    (self as unknown as Worker).postMessage({ id, out }, transferablesOf(out));
  } catch (error) {
    (self as unknown as Worker).postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
