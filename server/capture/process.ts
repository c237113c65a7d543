import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export interface ProcessRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Bytes of stdout and of stderr kept; the rest is counted and dropped. */
  outputBytes: number;
  /** Aborting kills the whole process group. */
  signal?: AbortSignal;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** Called once the child exists, with its pid (= its process group id). */
  onSpawn?: (pid: number) => void;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  stdout: Buffer;
  stderr: Buffer;
  stdoutDropped: number;
  stderrDropped: number;
  startedAt: number;
  endedAt: number;
  /** Monotonic nanoseconds from spawn to the leader's exit (not to its pipes' close); null when it never ran. */
  elapsedNs: number | null;
  pid: number | null;
  spawnError: string | null;
}

class BoundedBuffer {
  private parts: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    const room = this.max - this.kept;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.parts.push(part);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }
  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** A plain name→value map as a child's environment (Next's types demand NODE_ENV on ProcessEnv). */
export function asProcessEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return env as unknown as NodeJS.ProcessEnv;
}

/** Whether a process group still has members (signal 0 probes without killing). */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The parent pid of every live process (Linux /proc); empty where /proc is not there. */
function parentsOfAll(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return parents;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) is in parentheses and may hold spaces: read after its last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // exited while we looked
    }
  }
  return parents;
}

/**
 * Every live descendant of `pid`. A workload's children normally stay in its process group, but
 * one that calls setsid() (a daemonizing helper) leaves it: the tree is followed by parent pids.
 */
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parentsOfAll()) children.set(parent, [...(children.get(parent) ?? []), child]);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    for (const child of children.get(queue.pop()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Kills a whole process group at once, and its leader's descendants that left it (used when its supervising worker is gone). */
export function killProcessGroup(pgid: number): void {
  const strays = descendantPids(pgid);
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
  signalEach(strays, "SIGKILL");
}

/**
 * Runs one child as the leader of its own process group, so that a timeout or a cancel can kill
 * everything it started (SIGTERM, then SIGKILL after a grace period).
 */
export function runProcess(request: ProcessRequest): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const spawnedAt = process.hrtime.bigint();
    let exitedAt: bigint | null = null;
    const stdout = new BoundedBuffer(request.outputBytes);
    const stderr = new BoundedBuffer(request.outputBytes);
    let timedOut = false;
    let cancelled = false;
    let settled = false;
    const child = spawn(request.argv[0], request.argv.slice(1), {
      cwd: request.cwd,
      env: asProcessEnv(request.env),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const pgid = child.pid ?? null;
    if (pgid !== null) request.onSpawn?.(pgid);
    // Descendants seen while the leader lived: once it has exited, the ones that left its group
    // (setsid) can no longer be found by their parent, so they are remembered at each kill.
    const strays = new Set<number>();
    const killGroup = () => {
      if (pgid === null) return;
      for (const pid of descendantPids(pgid)) strays.add(pid);
      signalEach([...strays], "SIGTERM");
      try {
        process.kill(-pgid, "SIGTERM");
      } catch {
        if (strays.size === 0) return;
      }
      setTimeout(() => {
        try {
          process.kill(-pgid, "SIGKILL");
        } catch {
          // already gone
        }
        signalEach([...strays], "SIGKILL");
      }, request.killGraceMs ?? 2000).unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, request.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      killGroup();
    };
    if (request.signal?.aborted) onAbort();
    request.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (d: Buffer) => stdout.push(d));
    child.stderr!.on("data", (d: Buffer) => stderr.push(d));
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      // Whatever the leader did, leave no member of its group behind.
      if (pgid !== null && processGroupAlive(pgid)) killGroup();
      resolve({
        exitCode,
        signal,
        timedOut,
        cancelled,
        stdout: stdout.bytes(),
        stderr: stderr.bytes(),
        stdoutDropped: stdout.dropped,
        stderrDropped: stderr.dropped,
        startedAt,
        endedAt: Date.now(),
        elapsedNs: exitedAt === null ? null : Number(exitedAt - spawnedAt),
        pid: pgid,
        spawnError,
      });
    };
    child.on("error", (error: NodeJS.ErrnoException) => finish(null, null, error.code ?? "spawn failed"));
    child.on("exit", () => (exitedAt ??= process.hrtime.bigint()));
    child.on("close", (code, signal) => finish(code, signal, null));
  });
}
