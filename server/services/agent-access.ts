import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { EmberscopeError } from "../domain/errors";
import { CursorArg, Limit, pageOf } from "../domain/models";
import { nowIso } from "../domain/ids";
import { recordAudit } from "../store/audit";
import { writeTransaction } from "../store/control-store";
import { liveServers, offerSignInCode, pruneDeadServers, takeSignInCode, type ServerRegistration } from "../store/servers";
import type { Workspace } from "../store/workspace";
import { SIGN_IN_PATH } from "../http/header-names";
import { keysetPage } from "./pagination";
import { defineService, type ServiceContext } from "./service";

/**
 * Agent access to one workspace, decided by a person: whether agents may call tools on the
 * running server, how much detail they see, and the bearer token of the HTTP endpoint.
 * The state is kept in `workspace_meta`; nothing here is reachable by an agent, and from the web
 * only with the person's session cookie (`requirePerson`).
 */

export const AgentDetail = z.enum(["redacted", "full"]);
export type AgentDetail = z.infer<typeof AgentDetail>;

const META = {
  enabledAt: "agent_access_enabled_at",
  detail: "agent_detail",
  tokenHash: "mcp_token_hash",
  tokenGeneration: "mcp_token_generation",
  tokenCreatedAt: "mcp_token_created_at",
} as const;

function readMeta(ws: Workspace, key: string): string | undefined {
  return (ws.db.prepare("SELECT value FROM workspace_meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
}

function writeMeta(ws: Workspace, key: string, value: string): void {
  accessRead.delete(ws.db);
  ws.db.prepare("INSERT INTO workspace_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
}

/**
 * When this process started. Access switched on before it does not count: agent access is
 * OFF at every server launch until a person switches it on again.
 */
export const PROCESS_STARTED_AT = new Date(Date.now() - process.uptime() * 1000).toISOString();

function detailOf(stored: string | undefined): AgentDetail {
  return stored === "full" ? "full" : "redacted";
}

function enabledSince(enabledAt: string | undefined, launchedAt: string): boolean {
  return !!enabledAt && enabledAt >= launchedAt;
}

/** Whether a person switched agent access on since this server process started. */
export function agentAccessEnabled(ws: Workspace, launchedAt = PROCESS_STARTED_AT): boolean {
  return enabledSince(readMeta(ws, META.enabledAt), launchedAt);
}

/** What agents may do, as the person last decided. */
export interface AgentAccess {
  enabled: boolean;
  detail: AgentDetail;
  /** The stored hash of the bearer token, or null before one was made. */
  tokenHash: string | null;
}

/**
 * The access state last read on a connection, with the connection's `PRAGMA data_version` then.
 * SQLite changes that number when another connection commits (the CLI, the web UI's requests,
 * another process), and `writeMeta` forgets the entry when this one writes: an unchanged number
 * means the state read then is the state now.
 */
const accessRead = new WeakMap<Workspace["db"], { version: number; launchedAt: string; access: AgentAccess }>();

/**
 * The access switch, detail level and token hash as the store holds them now. Read from the store
 * (one statement) only when something committed since this connection last read them; otherwise
 * one `PRAGMA data_version`.
 */
export function agentAccess(ws: Workspace, launchedAt = PROCESS_STARTED_AT): AgentAccess {
  const version = (ws.db.prepare("PRAGMA data_version").get() as { data_version: number }).data_version;
  const kept = accessRead.get(ws.db);
  if (kept && kept.version === version && kept.launchedAt === launchedAt) return kept.access;
  const access = readAgentAccess(ws, launchedAt);
  accessRead.set(ws.db, { version, launchedAt, access });
  return access;
}

function readAgentAccess(ws: Workspace, launchedAt: string): AgentAccess {
  // Three scalar subqueries: one statement and one row, cheaper than `key IN (…)` (which sorts).
  const row = ws.db
    .prepare(
      `SELECT (SELECT value FROM workspace_meta WHERE key = ?) AS enabled_at, (SELECT value FROM workspace_meta WHERE key = ?) AS detail,
              (SELECT value FROM workspace_meta WHERE key = ?) AS token_hash`,
    )
    .get(META.enabledAt, META.detail, META.tokenHash) as { enabled_at: string | null; detail: string | null; token_hash: string | null };
  return { enabled: enabledSince(row.enabled_at ?? undefined, launchedAt), detail: detailOf(row.detail ?? undefined), tokenHash: row.token_hash || null };
}

/**
 * What only the person may do (agent access, detail level, the token; later approvals and
 * reviews): the CLI is the person at this machine; a web request must carry the person's session
 * cookie of this launch; an agent never may, whatever token it holds.
 */
export function requirePerson(ctx: ServiceContext, what: string): void {
  if (ctx.actor === "agent") {
    throw new EmberscopeError("POLICY_DENIED", `Only a person can ${what}; agents cannot widen their own access.`, { details: { actor: ctx.actor } });
  }
  if (ctx.actor === "web" && ctx.person !== true) {
    throw new EmberscopeError("PERSON_SESSION_REQUIRED", `Only the person can ${what}: sign this browser in with the link \`emberscope serve\` printed (or a new one from \`emberscope serve link\`), or use the CLI.`, {
      details: { reason: "person_session_missing", sign_in: "emberscope serve link" },
    });
  }
}

/** The usable token is derived from the workspace secret and a generation; only its hash is stored. */
function tokenFor(ws: Workspace, generation: number): string {
  return `es_${createHmac("sha256", ws.secret).update(`emberscope-mcp-token\0${generation}`).digest("base64url")}`;
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Checks a presented bearer token against the stored hash (constant time). */
export function verifyAgentToken(ws: Workspace, presented: string): boolean {
  const stored = agentAccess(ws).tokenHash;
  if (!stored) return false;
  const a = Buffer.from(hashToken(presented), "hex");
  const b = Buffer.from(stored, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

const RunningServer = z.object({
  pid: z.number().int(),
  url: z.string(),
  started_at: z.string(),
  agent_access: z.boolean().describe("Whether this server answers agents' tool calls now (access switched on since it started)."),
});

const AccessState = z.object({
  enabled: z.boolean().describe("Whether agents are answered now: on a server, by this server; elsewhere (the CLI), by any server running for this workspace."),
  enabled_at: z.string().nullable().describe("When a person last switched access on (servers launched later start OFF)."),
  detail: AgentDetail.describe("redacted (default): paths, names, addresses and secrets become typed tokens; full: only instruction-like text is neutralized."),
  token_created_at: z.string().nullable(),
  token_generation: z.number().int(),
  servers: z.array(RunningServer).describe("The `emberscope serve` processes running for this workspace now (registrations of dead processes are left out)."),
});

function stateOf(ws: Workspace, ctx: ServiceContext): z.infer<typeof AccessState> {
  const enabledAt = readMeta(ws, META.enabledAt) || null;
  const servers = liveServers(ws.db).map((s: ServerRegistration) => ({ pid: s.pid, url: s.url, started_at: s.started_at, agent_access: agentAccessEnabled(ws, s.started_at) }));
  return {
    // A server process answers for itself; any other process reports what the running servers do.
    enabled: ctx.actor === "web" || ctx.actor === "agent" ? agentAccessEnabled(ws) : servers.some((s) => s.agent_access),
    enabled_at: enabledAt,
    detail: agentAccess(ws).detail,
    token_created_at: readMeta(ws, META.tokenCreatedAt) ?? null,
    token_generation: Number(readMeta(ws, META.tokenGeneration) ?? 0),
    servers,
  };
}

export const agentAccessStatus = defineService({
  name: "agent.status",
  summary: "Show whether agents may use this workspace now, the detail they see, and the token's age.",
  kind: "query",
  input: z.object({}).strict(),
  output: AccessState,
  handler: (_input, { ws, ctx }) => stateOf(ws, ctx),
});

export const setAgentAccess = defineService({
  name: "agent.set_access",
  summary: "Switch agent access on or off for the servers running now (a person's decision; recorded in the audit log).",
  kind: "mutation",
  input: z.object({ enabled: z.boolean() }).strict(),
  output: AccessState,
  handler: (input, { ws, ctx }) => {
    requirePerson(ctx, "switch agent access");
    writeTransaction(ws.db, () => {
      writeMeta(ws, META.enabledAt, input.enabled ? nowIso() : "");
      pruneDeadServers(ws.db);
      recordAudit(ws.db, { actor: ctx.actor, action: input.enabled ? "agent.access_on" : "agent.access_off", resultCode: "OK" });
    });
    return stateOf(ws, ctx);
  },
});

export const setAgentDetail = defineService({
  name: "agent.set_detail",
  summary: "Choose what agents see: redacted (default) or full detail.",
  kind: "mutation",
  input: z.object({ detail: AgentDetail }).strict(),
  output: AccessState,
  handler: (input, { ws, ctx }) => {
    requirePerson(ctx, "change the detail agents see");
    writeTransaction(ws.db, () => {
      writeMeta(ws, META.detail, input.detail);
      recordAudit(ws.db, { actor: ctx.actor, action: "agent.set_detail", target: input.detail, resultCode: "OK" });
    });
    return stateOf(ws, ctx);
  },
});

export const agentToken = defineService({
  name: "agent.token",
  summary: "Show the workspace's MCP bearer token (created on first use), or rotate it so the old one stops working.",
  kind: "mutation",
  input: z.object({ rotate: z.boolean().default(false) }).strict(),
  output: z.object({ token: z.string(), generation: z.number().int(), created_at: z.string(), rotated: z.boolean() }),
  handler: (input, { ws, ctx }) => {
    requirePerson(ctx, "read or rotate the agent token");
    return writeTransaction(ws.db, () => {
      const current = Number(readMeta(ws, META.tokenGeneration) ?? 0);
      const rotate = input.rotate || current === 0;
      const generation = rotate ? current + 1 : current;
      const token = tokenFor(ws, generation);
      if (rotate) {
        writeMeta(ws, META.tokenGeneration, String(generation));
        writeMeta(ws, META.tokenHash, hashToken(token));
        writeMeta(ws, META.tokenCreatedAt, nowIso());
        recordAudit(ws.db, { actor: ctx.actor, action: current === 0 ? "agent.token_created" : "agent.token_rotated", resultCode: "OK" });
      }
      return { token, generation, created_at: readMeta(ws, META.tokenCreatedAt)!, rotated: input.rotate && current > 0 };
    });
  },
});

/** How long a sign-in link made by `agent.sign_in_link` stays usable (the one `serve` announces lasts until used). */
export const SIGN_IN_LINK_TTL_MS = 15 * 60 * 1000;

export const signInLink = defineService({
  name: "agent.sign_in_link",
  summary: "Make a one-time sign-in link for each server running for this workspace: opened in a browser, it gives that browser the person's session (Settings' switches).",
  kind: "mutation",
  input: z.object({}).strict(),
  output: z.object({
    servers: z.array(z.object({ pid: z.number().int(), url: z.string(), sign_in_url: z.string(), expires_at: z.string() })),
  }),
  handler: (_input, { ws, ctx }) => {
    requirePerson(ctx, "make a sign-in link");
    const expiresAt = nowIso(Date.now() + SIGN_IN_LINK_TTL_MS);
    return writeTransaction(ws.db, () => {
      pruneDeadServers(ws.db);
      const servers = liveServers(ws.db).map((s) => {
        const code = randomBytes(32).toString("base64url");
        offerSignInCode(ws.db, s.launch_id, hashToken(code), expiresAt);
        return { pid: s.pid, url: s.url, sign_in_url: `${s.url}${SIGN_IN_PATH}?code=${code}`, expires_at: expiresAt };
      });
      recordAudit(ws.db, { actor: ctx.actor, action: "agent.sign_in_link", resultCode: "OK", details: { servers: servers.length } });
      return { servers };
    });
  },
});

/**
 * Takes a sign-in code a person's CLI left with this server (`agent.sign_in_link`), once, and
 * records the sign-in. The code the server announced itself is held in memory (server/http/session.ts).
 */
export function redeemStoredSignInCode(ws: Workspace, launchId: string, code: string): boolean {
  return writeTransaction(ws.db, () => takeSignInCode(ws.db, launchId, hashToken(code)));
}

/** Records a browser's sign-in as the person (either kind of code) in the audit log. */
export function recordSignIn(ws: Workspace): void {
  recordAudit(ws.db, { actor: "web", action: "session.sign_in", resultCode: "OK" });
}

export const AuditEvent = z.object({
  seq: z.number().int(),
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  target: z.string().nullable(),
  arguments_digest: z.string().nullable(),
  result_code: z.string(),
  duration_ms: z.number().nullable(),
  details: z.record(z.string(), z.unknown()),
});
export type AuditEvent = z.infer<typeof AuditEvent>;

export const listAuditEvents = defineService({
  name: "agent.audit",
  summary: "List audit events, newest first (every agent tool call, access changes, workspace changes).",
  kind: "query",
  input: z.object({ limit: Limit, cursor: CursorArg, actor: z.string().min(1).max(32).optional() }).strict(),
  output: pageOf(AuditEvent),
  handler: (input, { ws }) => {
    const filters = { actor: input.actor };
    return keysetPage({
      ws,
      binding: { query: "agent.audit", filters, order: "seq desc", commit: null },
      cursor: input.cursor,
      limit: input.limit,
      restart: { operation: "agent.audit", arguments: { ...filters, limit: input.limit } },
      fetch: (after: [number] | null, limit) => {
        const rows = ws.db
          .prepare(
            `SELECT seq, at, actor, action, target, arguments_digest, result_code, duration_ms, details FROM audit_events
             WHERE (? IS NULL OR actor = ?) AND (? IS NULL OR seq < ?) ORDER BY seq DESC LIMIT ?`,
          )
          .all(filters.actor ?? null, filters.actor ?? null, after?.[0] ?? null, after?.[0] ?? null, limit) as (Omit<AuditEvent, "details"> & { details: string })[];
        return rows.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> }));
      },
      keyOf: (e): [number] => [e.seq],
    });
  },
});
