import { z } from "zod";
import { EmberscopeError, toEmberscopeError } from "../domain/errors";
import type { WorkspaceLocator } from "../store/layout";
import { openWorkspace, type Workspace } from "../store/workspace";

/** Who is calling: recorded in the audit log and used by policy (agents get redacted views later). */
export type Actor = "cli" | "web" | "agent" | "test";

export interface ServiceContext {
  locator: WorkspaceLocator;
  actor: Actor;
  /**
   * For actor "web": the request carried the person's session cookie of this server launch
   * (server/http/session.ts). What only a person may do asks for it (`requirePerson`); the CLI
   * is the person by definition, an agent never is.
   */
  person?: boolean;
  /**
   * An agent's MCP client name, from its handshake (`clientInfo.name`): recorded as who wrote
   * what it creates. Self-declared, so a label only; policy goes by `actor`.
   */
  client?: string | null;
  /**
   * A workspace handle the caller keeps open for its whole life (a long-lived server), used
   * instead of opening and closing one per call; null when there is no workspace (yet).
   */
  heldWorkspace?: () => Workspace | null;
  /** Aborted when the caller gives up (an MCP client's cancellation): long calls stop their work. */
  signal?: AbortSignal;
  /** Told the id of the operation a long call started (MCP reports its progress and cancels it). */
  operationStarted?: (operationId: string) => void;
}

interface HandlerEnv {
  ctx: ServiceContext;
}

/**
 * One operation of a service: the behaviour contract every transport shares.
 * tRPC procedures, CLI commands and MCP tools are generated from or call these definitions,
 * and none of them adds behaviour of its own.
 */
export interface ServiceDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  summary: string;
  kind: "query" | "mutation";
  input: I;
  output: O;
  /** With a workspace the handler gets it open and it is closed afterwards. */
  handler: (input: z.output<I>, env: HandlerEnv & { ws: Workspace }) => Promise<z.output<O>> | z.output<O>;
  /** Operations that must run without a workspace (init) set this. */
  withoutWorkspace?: boolean;
}

export function defineService<I extends z.ZodType, O extends z.ZodType>(def: ServiceDef<I, O>): ServiceDef<I, O> {
  return def;
}

export interface WorkspacelessDef<I extends z.ZodType, O extends z.ZodType>
  extends Omit<ServiceDef<I, O>, "handler" | "withoutWorkspace"> {
  handler: (input: z.output<I>, env: HandlerEnv) => Promise<z.output<O>> | z.output<O>;
}

export function defineWorkspacelessService<I extends z.ZodType, O extends z.ZodType>(
  def: WorkspacelessDef<I, O>,
): ServiceDef<I, O> {
  return { ...def, withoutWorkspace: true, handler: (input, env) => def.handler(input, { ctx: env.ctx }) };
}

/** Validates raw input with the service's schema; failures name the offending argument. */
export function parseServiceInput<I extends z.ZodType>(def: ServiceDef<I>, raw: unknown): z.output<I> {
  const parsed = def.input.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const argument =
    issue.code === "unrecognized_keys" ? issue.keys.join(", ") : issue.path.map(String).join(".") || "(input)";
  throw new EmberscopeError("INVALID_ARGUMENTS", `Invalid argument ${argument}: ${issue.message}.`, {
    details: {
      argument,
      issues: parsed.error.issues.slice(0, 10).map((i) => ({ path: i.path.map(String).join("."), message: i.message })),
    },
  });
}

export async function callService<I extends z.ZodType, O extends z.ZodType>(
  def: ServiceDef<I, O>,
  ctx: ServiceContext,
  raw: unknown,
): Promise<z.output<O>> {
  try {
    const input = parseServiceInput(def, raw);
    if (def.withoutWorkspace) {
      return await (def.handler as WorkspacelessDef<I, O>["handler"])(input, { ctx });
    }
    const held = ctx.heldWorkspace?.() ?? null;
    const ws = held ?? openWorkspace(ctx.locator);
    try {
      return await def.handler(input, { ctx, ws });
    } finally {
      if (ws !== held) ws.close();
    }
  } catch (error) {
    throw toEmberscopeError(error);
  }
}
