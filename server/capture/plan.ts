import { createHash, randomBytes } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { canonicalJson } from "../domain/cursor";
import { EmberscopeError, type Recovery } from "../domain/errors";
import { newId, nowIso } from "../domain/ids";
import { writeTransaction } from "../store/control-store";
import type { Workspace } from "../store/workspace";
import { adapterNamed, probeAdapter } from "./adapters";
import type { AdapterOptions } from "./adapters/types";
import { whichExecutable } from "./adapters/tools";
import { buildChildEnv } from "./child-env";
import { getWorkload, loadProjectConfig, type ParameterSpec, type WorkloadSpec } from "./project-config";

export const PLAN_TTL_MS = 10 * 60 * 1000;

/** Everything a capture will do, resolved and reviewable; its digest is what a plan binds. */
export interface CaptureIntent {
  adapter: { name: string; version: string | null; options: AdapterOptions };
  workload: { name: string; declaration: WorkloadSpec; parameters: Record<string, string | number | boolean> };
  argv: string[];
  executable: { path: string; sha256: string; size_bytes: number };
  cwd: string;
  environment: ReturnType<typeof buildChildEnv>["review"] & { inherited_digest: string };
  timeout_s: number;
  output_bytes: number;
}

const hashCache = new Map<string, string>();

async function sha256File(file: string): Promise<{ sha256: string; size: number }> {
  const stat = statSync(file);
  const key = `${file}:${stat.size}:${stat.mtimeMs}`;
  let digest = hashCache.get(key);
  if (!digest) {
    const hash = createHash("sha256");
    await pipeline(createReadStream(file), hash);
    digest = hash.digest("hex");
    hashCache.set(key, digest);
  }
  return { sha256: digest, size: stat.size };
}

function coerceParameter(name: string, spec: ParameterSpec, raw: string | number | boolean): string | number | boolean {
  const invalid = () => new EmberscopeError("INVALID_ARGUMENTS", `Parameter ${name} must be ${spec.type === "integer" ? "an integer" : `a ${spec.type}`}.`, { details: { argument: `param.${name}` } });
  switch (spec.type) {
    case "integer": {
      const n = typeof raw === "number" ? raw : Number(raw);
      if (!Number.isSafeInteger(n)) throw invalid();
      return n;
    }
    case "number": {
      const n = typeof raw === "number" ? raw : Number(raw);
      if (!Number.isFinite(n)) throw invalid();
      return n;
    }
    case "boolean":
      if (raw === true || raw === "true") return true;
      if (raw === false || raw === "false") return false;
      throw invalid();
    default:
      return String(raw);
  }
}

/** Fills `{name}` placeholders in argv with parameter values (unknown placeholders are an error). */
function substitute(argv: string[], values: Record<string, string | number | boolean>): string[] {
  return argv.map((arg) =>
    arg.replace(/\{([a-z][a-z0-9_]*)\}/g, (_m, name: string) => {
      if (!(name in values)) throw new EmberscopeError("CONFIG_INVALID", `argv names an undeclared parameter {${name}}.`, { details: { path: `argv`, parameter: name } });
      return String(values[name]);
    }),
  );
}

/** Resolves a capture request against the current declaration and machine into an intent. */
export async function resolveIntent(
  ws: Workspace,
  request: { adapter: string; workload: string; parameters: Record<string, string | number | boolean>; options: AdapterOptions },
): Promise<{ intent: CaptureIntent; digest: string }> {
  const adapter = adapterNamed(request.adapter);
  const config = loadProjectConfig(ws.layout.projectRoot);
  if (config.policy.adapters && !config.policy.adapters.includes(adapter.name)) {
    throw new EmberscopeError("POLICY_DENIED", `Policy in emberscope.toml does not allow the ${adapter.name} adapter.`, { details: { adapter: adapter.name, allowed: config.policy.adapters } });
  }
  const workload = getWorkload(config, request.workload);
  const probe = await probeAdapter(adapter);
  if (!probe.available) {
    throw new EmberscopeError("CAPABILITY_UNAVAILABLE", `The ${adapter.name} adapter is unavailable: ${probe.reason ?? "unknown reason"}`, {
      details: { adapter: adapter.name, reason: probe.reason },
      recovery: { operation: "captures.capabilities", arguments: {}, safe_to_repeat: true },
    });
  }
  for (const name of Object.keys(request.parameters)) {
    if (!(name in workload.parameters)) throw new EmberscopeError("INVALID_ARGUMENTS", `Workload ${request.workload} has no parameter ${name}.`, { details: { argument: `param.${name}`, declared: Object.keys(workload.parameters) } });
  }
  const parameters = Object.fromEntries(Object.entries(workload.parameters).map(([name, spec]) => [name, coerceParameter(name, spec, request.parameters[name] ?? spec.default)]));
  for (const name of Object.keys(request.options)) {
    if (!(name in adapter.options)) throw new EmberscopeError("INVALID_ARGUMENTS", `The ${adapter.name} adapter has no option ${name}.`, { details: { argument: `option.${name}`, options: Object.keys(adapter.options) } });
  }
  const options = Object.fromEntries(Object.entries(adapter.options).map(([name, spec]) => [name, request.options[name] ?? spec.default]));
  const repeat = adapter.repetitions(options);
  if (repeat.runs > config.limits.measure_repeat_max + (options.warmup ? Number(options.warmup) : 0)) {
    throw new EmberscopeError("POLICY_DENIED", `At most ${config.limits.measure_repeat_max} measured runs are allowed.`, { details: { argument: "option.repeat" } });
  }

  const cwd = path.resolve(ws.layout.projectRoot, workload.cwd);
  const relCwd = path.relative(ws.layout.projectRoot, cwd);
  if (relCwd.startsWith("..") || path.isAbsolute(relCwd)) {
    throw new EmberscopeError("POLICY_DENIED", "A workload's cwd must stay inside the project root.", { details: { path: `workloads.${request.workload}.cwd` } });
  }
  const environment = buildChildEnv(workload);
  const argv = substitute(workload.argv, parameters);
  const executable = whichExecutable(argv[0], environment.env.PATH ?? "", cwd);
  if (!executable) {
    throw new EmberscopeError("CAPABILITY_UNAVAILABLE", `The workload's program ${argv[0]} was not found on its PATH.`, { details: { program: argv[0] } });
  }
  const unsuitable = adapter.unsuitableFor(executable);
  if (unsuitable) throw new EmberscopeError("CAPABILITY_UNAVAILABLE", unsuitable, { details: { adapter: adapter.name } });
  const { sha256, size } = await sha256File(executable);
  const intent: CaptureIntent = {
    adapter: { name: adapter.name, version: probe.version, options },
    workload: { name: request.workload, declaration: workload, parameters },
    argv,
    executable: { path: executable, sha256, size_bytes: size },
    cwd: relCwd === "" ? "." : relCwd,
    environment: { ...environment.review, inherited_digest: environment.inheritedDigest },
    timeout_s: Math.min(workload.timeout, config.limits.capture_timeout),
    output_bytes: config.limits.output_bytes,
  };
  return { intent, digest: createHash("sha256").update(canonicalJson(intent)).digest("hex") };
}

/** Plans store only this digest of their token. */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export interface StoredPlan {
  plan_id: string;
  plan_token: string;
  expires_at: string;
  intent: CaptureIntent;
  intent_digest: string;
}

export function storePlan(ws: Workspace, intent: CaptureIntent, digest: string, now = Date.now()): StoredPlan {
  return { ...storePlanOf(ws, "capture", intent, digest, now), intent, intent_digest: digest };
}

/** Stores a plan of any kind (capture, experiment): only the digest of its secret token is kept. */
export function storePlanOf(ws: Workspace, kind: string, intent: unknown, digest: string, now = Date.now()): { plan_id: string; plan_token: string; expires_at: string } {
  const planId = newId("plan");
  const token = `ept_${randomBytes(24).toString("base64url")}`;
  const expiresAt = nowIso(now + PLAN_TTL_MS);
  ws.db.prepare("INSERT INTO plans (id, token_hash, kind, intent, intent_digest, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(planId, tokenHash(token), kind, JSON.stringify(intent), digest, expiresAt, nowIso(now));
  return { plan_id: planId, plan_token: token, expires_at: expiresAt };
}

/**
 * Consumes a plan token atomically (before any process starts): unknown → PLAN_NOT_FOUND, used →
 * PLAN_CONSUMED, expired → PLAN_EXPIRED, another plan than expected → PLAN_MISMATCH.
 */
export function consumePlan(ws: Workspace, token: string, expectedPlanId?: string): { planId: string; intent: CaptureIntent; digest: string } {
  return consumePlanOf<CaptureIntent>(ws, "capture", token, expectedPlanId, (intent) => ({ operation: "captures.plan", arguments: { adapter: intent.adapter.name, workload: intent.workload.name }, safe_to_repeat: true }));
}

/** consumePlan for plans of `kind`; `replan` is the recovery a used or expired token points at. */
/** The operation that makes a plan of each kind (a lost token is planned again there). */
const PLANNED_BY: Record<string, string> = { capture: "captures.plan", experiment: "experiments.plan", workflow_run: "workflows.run" };

export function consumePlanOf<T>(ws: Workspace, kind: string, token: string, expectedPlanId: string | undefined, replan: (intent: T) => Recovery): { planId: string; intent: T; digest: string } {
  return writeTransaction(ws.db, () => {
    const plan = ws.db.prepare("SELECT id, intent, intent_digest, expires_at, consumed_at FROM plans WHERE token_hash = ? AND kind = ?").get(tokenHash(token), kind) as
      | { id: string; intent: string; intent_digest: string; expires_at: string; consumed_at: string | null }
      | undefined;
    if (!plan) throw new EmberscopeError("PLAN_NOT_FOUND", `No ${kind} plan has that token.`, { details: { argument: "plan_token" }, recovery: { operation: PLANNED_BY[kind] ?? "captures.plan", arguments: {}, safe_to_repeat: true } });
    if (expectedPlanId !== undefined && plan.id !== expectedPlanId) {
      throw new EmberscopeError("PLAN_MISMATCH", "The token belongs to another plan than the one expected.", { details: { argument: "expected_plan_id", expected_plan_id: expectedPlanId } });
    }
    const intent = JSON.parse(plan.intent) as T;
    if (plan.consumed_at) throw new EmberscopeError("PLAN_CONSUMED", "That plan token was already used; plan again.", { details: { plan_id: plan.id, consumed_at: plan.consumed_at }, recovery: replan(intent) });
    if (Date.parse(plan.expires_at) <= Date.now()) throw new EmberscopeError("PLAN_EXPIRED", "That plan token expired; plan again.", { details: { plan_id: plan.id, expired_at: plan.expires_at }, recovery: replan(intent) });
    ws.db.prepare("UPDATE plans SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL").run(nowIso(), plan.id);
    return { planId: plan.id, intent, digest: plan.intent_digest };
  });
}

/** The plan a token belongs to, without consuming it (to reconnect a repeated request). */
export function peekPlan(ws: Workspace, kind: string, token: string): { planId: string; digest: string; operationId: string | null } | null {
  const plan = ws.db.prepare("SELECT id, intent_digest, operation_id FROM plans WHERE token_hash = ? AND kind = ?").get(tokenHash(token), kind) as { id: string; intent_digest: string; operation_id: string | null } | undefined;
  return plan ? { planId: plan.id, digest: plan.intent_digest, operationId: plan.operation_id } : null;
}

export function linkPlanOperation(ws: Workspace, planId: string, operationId: string): void {
  ws.db.prepare("UPDATE plans SET operation_id = ? WHERE id = ?").run(operationId, planId);
}
