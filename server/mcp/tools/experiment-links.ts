import type { AuditedCall, ResourceLink } from "../tools";

/** Links and audit targets the experiment tools share (kept here: tools.ts imports these tools). */

export const experimentLinks = (experiment: { investigation_id: string; commit_id: string | null } | undefined, operationId: string | null | undefined): ResourceLink[] => [
  ...(experiment ? [{ uri: `emberscope://investigations/${experiment.investigation_id}`, name: `investigation ${experiment.investigation_id}` }] : []),
  ...(operationId ? [{ uri: `emberscope://operations/${operationId}`, name: `operation ${operationId}` }] : []),
  ...(experiment?.commit_id ? [{ uri: `emberscope://commits/${experiment.commit_id}`, name: `commit ${experiment.commit_id}` }] : []),
];

/** The investigation an experiment call touched: from its answer, a refusal's details or its arguments. */
export function experimentTarget(call: AuditedCall): string | null {
  type WithExperiment = { experiment?: { investigation_id?: unknown } };
  const r = call.result as (WithExperiment & { planned?: WithExperiment | null }) | undefined;
  const found = (r?.experiment ?? r?.planned?.experiment)?.investigation_id ?? call.error?.details.investigation_id ?? call.args.investigation_id;
  return typeof found === "string" && /^inv_[0-9a-z]{1,120}$/.test(found) ? found : null;
}
