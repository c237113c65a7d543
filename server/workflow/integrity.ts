import { createHash } from "node:crypto";
import { promises as fsp, statSync } from "node:fs";
import { canonicalJson, sha256Digest } from "../../analysis/notebook/digest";
import { templateReferences } from "../../analysis/workflow/arguments";
import { WORKFLOW_FORMAT, type Workflow } from "../../analysis/workflow/compile";
import { EmberscopeError } from "../domain/errors";
import type { ObjectId } from "../store/object-store";
import type { Workspace } from "../store/workspace";

/**
 * A stored workflow verified before anything of it runs: the document's content hash is its
 * address, every reference names a node it depends on (directly or through others) or a runtime
 * input it has, and its edges form a DAG. Returns each node's dependencies (by index).
 */
export async function verifyWorkflow(doc: Workflow, expectedDigest: string, workflowId: string): Promise<number[][]> {
  const fail = (reason: string, extra: Record<string, unknown> = {}) =>
    new EmberscopeError("WORKFLOW_INTEGRITY_FAILED", `The workflow ${workflowId} does not verify: ${reason}. Nothing ran.`, {
      details: { workflow_id: workflowId, reason, ...extra },
      recovery: { operation: "workflows.compile", arguments: { run_id: doc.source?.run_id ?? "" }, safe_to_repeat: true },
    });
  if (doc.format !== WORKFLOW_FORMAT || doc.version !== 1) throw fail("it is not a version 1 workflow document");
  const digest = await sha256Digest(canonicalJson(doc));
  if (digest !== expectedDigest) throw fail("its content hash differs from its address", { expected: expectedDigest, actual: digest });
  const index = new Map<string, number>();
  doc.nodes.forEach((node, i) => {
    if (index.has(node.id)) throw fail(`two nodes are named ${node.id}`);
    index.set(node.id, i);
  });
  const deps: number[][] = doc.nodes.map(() => []);
  for (const edge of doc.edges) {
    const from = index.get(edge.from);
    const to = index.get(edge.to);
    if (from === undefined || to === undefined) throw fail("an edge names a node that is not in the workflow", { edge: { from: edge.from.slice(0, 64), to: edge.to.slice(0, 64) } });
    deps[to].push(from);
  }
  // Acyclic (Kahn), and each node's ancestors for the reference check.
  const order: number[] = [];
  const waiting = deps.map((d) => d.length);
  const out: number[][] = doc.nodes.map(() => []);
  deps.forEach((list, to) => list.forEach((from) => out[from].push(to)));
  for (let i = 0; i < waiting.length; i++) if (waiting[i] === 0) order.push(i);
  for (let h = 0; h < order.length; h++) for (const d of out[order[h]]) if (--waiting[d] === 0) order.push(d);
  if (order.length !== doc.nodes.length) {
    throw new EmberscopeError("CYCLE_DETECTED", `The workflow ${workflowId}'s edges form a cycle. Nothing ran.`, {
      details: { workflow_id: workflowId, cycle: doc.nodes.filter((_, i) => waiting[i] > 0).slice(0, 50).map((n) => ({ node: n.id, tool: n.tool })) },
    });
  }
  const ancestors: Set<number>[] = doc.nodes.map(() => new Set());
  for (const i of order) for (const d of deps[i]) {
    ancestors[i].add(d);
    for (const a of ancestors[d]) ancestors[i].add(a);
  }
  doc.nodes.forEach((node, i) => {
    const refs = templateReferences(node.arguments);
    for (const name of refs.inputs) if (!Object.prototype.hasOwnProperty.call(doc.inputs, name)) throw fail(`node ${node.id} refers to a runtime input the workflow does not have`, { node: node.id });
    for (const ref of refs.nodes) {
      const from = index.get(ref);
      if (from === undefined) throw fail(`node ${node.id} refers to a node that is not in the workflow`, { node: node.id });
      if (!ancestors[i].has(from)) throw fail(`node ${node.id} refers to ${ref}, which it does not depend on`, { node: node.id, reference: ref });
    }
  });
  return deps;
}

/**
 * A file's identity and state: what changes when its bytes are rewritten or replaced (ctime cannot
 * be set back by a process). Synchronous: a stat of a local file costs a few µs, where a promise
 * stat's trip through libuv's thread pool cost about 250 µs per call on a loaded machine.
 */
function fileState(file: string): string | null {
  const st = statSync(file, { bigint: true, throwIfNoEntry: false });
  return st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : null;
}

/**
 * The integrity check made before every call of a run (and of an exposed workflow tool), after
 * `verifyWorkflow` passed once at the start: the workflow's record still addresses the verified
 * content (one indexed SQLite read), and its stored document is still the file that was verified
 * (one stat: device, inode, size, mtime, ctime). Only a file whose state changed is read and
 * hashed again. A workflow tampered with mid-run is refused at its next call
 * (WORKFLOW_INTEGRITY_FAILED, `details.reason`), and nothing more of it runs.
 */
export async function integrityGuard(ws: Workspace, workflowId: string, digest: string): Promise<() => Promise<void>> {
  const file = ws.objects.pathOf(digest as ObjectId);
  const fail = (reason: string) =>
    new EmberscopeError("WORKFLOW_INTEGRITY_FAILED", `The workflow ${workflowId} does not verify any more: ${reason}. The call did not run.`, {
      details: { workflow_id: workflowId, reason, expected: digest },
    });
  const hashNow = async () => {
    const bytes = await fsp.readFile(file).catch(() => null);
    return bytes ? `sha256:${createHash("sha256").update(bytes).digest("hex")}` : null;
  };
  let verified = fileState(file);
  if ((await hashNow()) !== digest) throw fail("its stored document's hash differs from its address");
  const record = ws.db.prepare("SELECT object_id FROM workflows WHERE id = ?");
  return async () => {
    const row = record.get(workflowId) as { object_id: string } | undefined;
    if (!row || row.object_id !== digest) throw fail("its record now addresses other content");
    const state = fileState(file);
    if (state !== null && state === verified) return;
    if ((await hashNow()) !== digest) throw fail("its stored document changed during the run");
    verified = state;
  };
}
