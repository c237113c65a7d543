import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import { EmberscopeError, type ErrorDocument } from "../domain/errors";
import { writeTransaction } from "../store/control-store";
import {
  attachRun,
  createOperation,
  finishOperation,
  heartbeatOperation,
  leaseStatus,
  liveClaimHolder,
  reportProgress,
  type WorkerIdentity,
} from "../store/operations";
import { createRun, getRun, patchRun, type RunDraft } from "../store/runs";
import { operationStagingDir, stagingWorkspace } from "../store/staging";
import { registerWorker, stopWorker } from "../store/workers";
import type { Workspace } from "../store/workspace";
import { reconcileOperations } from "./operations";

/*
 * Long work done in the process that asked for it (an import), held as an operation with a lease
 * like a pool worker's capture: the lease is what lets every other process tell a live import from
 * a dead one (reconciliation, gc of its staging, waiting for its claim).
 */

/** How often a leased operation in this process renews its lease (it lives LEASE_MS) and looks for a cancel. */
const HEARTBEAT_MS = 1000;

/** Work done in this process under an operation's lease that makes no run (an export): see startLeasedJob. */
export type LeasedJob = Omit<LeasedOperation, "runId">;

/** Work done in this process under an operation's lease (an import): see startLeasedOperation. */
export interface LeasedOperation {
  readonly operationId: string;
  readonly runId: string;
  /** The workspace with its staging in the operation's own directory, `tmp/<operation id>/`. */
  readonly ws: Workspace;
  /** Aborted, with the typed error as its reason, once a cancel is requested or the lease is lost. */
  readonly signal: AbortSignal;
  /** Moves to a named phase (shown by operations.get), with completed/total where known. */
  phase(name: string, completed?: number | null, total?: number | null): void;
  /** Progress within the phase; written with the next heartbeat. */
  progress(completed: number, total: number | null): void;
  /** Throws unless this process still holds the lease (CANCELLED, INTERRUPTED); inside a transaction it fences what it commits. */
  assertHeld(): void;
  /** Resolves once no live operation holds `claim` (holders that died are reconciled meanwhile). */
  waitForClaim(claim: string): Promise<void>;
  /** Ends the operation (inside the caller's transaction, if any: with what it commits). */
  finish(outcome: { state: "succeeded" | "failed" | "cancelled"; result?: Record<string, unknown>; error?: ErrorDocument }): void;
  /** Stops renewing the lease and removes the staging directory; an operation not yet finished fails. */
  close(): Promise<void>;
}

function leaseLost(operationId: string): EmberscopeError {
  return new EmberscopeError("INTERRUPTED", "This process lost the operation's lease (it was silent past its expiry and was reconciled); nothing was published.", {
    details: { operation_id: operationId, reason: "lease lost" },
  });
}

function cancelledError(kind: string, operationId: string): EmberscopeError {
  return new EmberscopeError("CANCELLED", `The ${kind} was cancelled.`, { details: { operation_id: operationId } });
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

class InlineLease implements LeasedJob {
  readonly ws: Workspace;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private current: { phase: string; completed: number | null; total: number | null; written: boolean } = { phase: "planning", completed: null, total: null, written: true };
  private finished = false;

  constructor(
    private readonly base: Workspace,
    readonly kind: string,
    readonly operationId: string,
    readonly runId: string | null,
    private readonly worker: WorkerIdentity,
  ) {
    this.ws = stagingWorkspace(base, operationId);
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private beat(): void {
    if (this.finished) return;
    try {
      const status = heartbeatOperation(this.base.db, this.operationId, this.worker);
      if (!status.held) this.controller.abort(leaseLost(this.operationId));
      else if (status.cancelRequested) this.controller.abort(cancelledError(this.kind, this.operationId));
      if (!this.current.written) {
        reportProgress(this.base.db, this.operationId, this.current.phase, this.current.completed, this.current.total);
        this.current.written = true;
      }
    } catch {
      // a busy store delays one heartbeat; the lease outlives several
    }
  }

  phase(name: string, completed: number | null = null, total: number | null = null): void {
    this.current = { phase: name, completed, total, written: true };
    reportProgress(this.base.db, this.operationId, name, completed, total);
  }

  progress(completed: number, total: number | null): void {
    this.current = { ...this.current, completed, total, written: false };
  }

  assertHeld(): void {
    this.signal.throwIfAborted();
    const status = leaseStatus(this.base.db, this.operationId, this.worker);
    if (!status.held) throw leaseLost(this.operationId);
    if (status.cancelRequested) throw cancelledError(this.kind, this.operationId);
  }

  async waitForClaim(claim: string): Promise<void> {
    this.phase("waiting");
    for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
      await sleep(delay, this.signal);
      this.assertHeld();
      reconcileOperations(this.base);
      if (liveClaimHolder(this.base.db, claim) === null) return;
    }
  }

  finish(outcome: { state: "succeeded" | "failed" | "cancelled"; result?: Record<string, unknown>; error?: ErrorDocument }): void {
    finishOperation(this.base.db, this.operationId, outcome);
    this.finished = true;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    try {
      if (!this.finished) {
        const error = new EmberscopeError("INTERNAL_ERROR", `The ${this.kind} ended without recording an outcome.`, { details: { operation_id: this.operationId } }).toDocument();
        writeTransaction(this.base.db, () => {
          this.finish({ state: "failed", error });
          if (this.runId === null) return;
          const run = getRun(this.base.db, this.runId);
          if (run.status === "running" || run.status === "pending") patchRun(this.base.db, this.runId, { status: "failed", details: { ...run.details, error } });
        });
      }
    } finally {
      await fsp.rm(operationStagingDir(this.base, this.operationId), { recursive: true, force: true });
      stopWorker(this.base.db, this.worker);
    }
  }
}

/**
 * Starts work in this process as an operation holding a lease, with its run, in one transaction
 * (so a process killed at any point leaves either neither or both, and reconciliation ends them).
 * The lease is renewed every second until `close`; a holder that dies is reconciled (INTERRUPTED).
 */
export function startLeasedOperation(ws: Workspace, draft: { kind: string; intent: Record<string, unknown>; run: RunDraft }): LeasedOperation {
  const worker = registerWorker(ws.db, "inline");
  const intentDigest = createHash("sha256").update(JSON.stringify(draft.intent)).digest("hex");
  const { operationId, runId } = writeTransaction(ws.db, () => {
    const { operation } = createOperation(ws.db, { kind: draft.kind, intent: draft.intent, intentDigest, runId: null, state: "running", lease: worker });
    const run = createRun(ws.db, { ...draft.run, details: { ...draft.run.details, operation_id: operation.operation_id } });
    attachRun(ws.db, operation.operation_id, run.run_id);
    return { operationId: operation.operation_id, runId: run.run_id };
  });
  return new InlineLease(ws, draft.kind, operationId, runId, worker) as LeasedOperation;
}

/**
 * Starts work in this process as an operation holding a lease, without a run (an export reads
 * evidence and writes a file: it makes none). Progress, cancel and reconciliation as for
 * startLeasedOperation.
 */
export function startLeasedJob(ws: Workspace, draft: { kind: string; intent: Record<string, unknown> }): LeasedJob {
  const worker = registerWorker(ws.db, "inline");
  const intentDigest = createHash("sha256").update(JSON.stringify(draft.intent)).digest("hex");
  const { operation } = createOperation(ws.db, { kind: draft.kind, intent: draft.intent, intentDigest, runId: null, state: "running", lease: worker });
  return new InlineLease(ws, draft.kind, operation.operation_id, null, worker);
}
