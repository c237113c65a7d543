/**
 * The state of `serve`'s start-up warm-up (server/services/warm-up.ts), apart from its work: the
 * route that answers it (GET /api/imports/warm-up) loads this alone, not the services the warm-up
 * runs. One per process, seen by every bundle of the app (each has its own copy of this module).
 */

export interface WarmUpState {
  /** "off": this server does not warm up (not started by `serve`, or EMBERSCOPE_WARM_UP=0). */
  state: "off" | "idle" | "running" | "done" | "failed";
  /** How long it took, once it ended. */
  ms: number | null;
  /** Why it failed (a message, never a path of the person's). */
  error: string | null;
}

const STATE = Symbol.for("emberscope.warm-up.state");
const holder = globalThis as { [STATE]?: WarmUpSlot };
export interface WarmUpSlot {
  state: WarmUpState;
  done: Promise<WarmUpState> | null;
}

/** The process's one warm-up slot (made on first use). */
export function warmUpSlot(): WarmUpSlot {
  return (holder[STATE] ??= { state: { state: "idle", ms: null, error: null }, done: null });
}

/** The warm-up's state: idle until the upload route starts it, off when it never will. */
export function warmUpState(): WarmUpState {
  const { state } = warmUpSlot();
  if (state.state === "idle" && process.env.EMBERSCOPE_WARM_UP !== "1") return { ...state, state: "off" };
  return { ...state };
}

