import { initTRPC, TRPCError } from "@trpc/server";
import type { z } from "zod";
import { EmberscopeError, toEmberscopeError, type ErrorFamily } from "../domain/errors";
import { callService, type ServiceContext, type ServiceDef } from "../services/service";

export interface TrpcContext {
  service: ServiceContext;
}

const TRPC_CODE: Record<ErrorFamily, TRPCError["code"]> = {
  usage: "BAD_REQUEST",
  workspace: "PRECONDITION_FAILED",
  not_found: "NOT_FOUND",
  input: "UNPROCESSABLE_CONTENT",
  conflict: "CONFLICT",
  process: "UNPROCESSABLE_CONTENT",
  access: "FORBIDDEN",
  resource: "TOO_MANY_REQUESTS",
  internal: "INTERNAL_SERVER_ERROR",
};

function trpcCodeFor(error: EmberscopeError): TRPCError["code"] {
  if (error.code === "UNAUTHORIZED") return "UNAUTHORIZED";
  return TRPC_CODE[error.family];
}

/** The one mapping from a typed error to tRPC: HTTP status by family, the error document in `data.error`. */
export function toTrpcError(thrown: unknown): TRPCError {
  const error = toEmberscopeError(thrown);
  return new TRPCError({ code: trpcCodeFor(error), message: error.message, cause: error });
}

/**
 * tRPC's own refusals (no such procedure, a mutation asked by GET, a body that is not JSON) as
 * typed errors: the caller's mistake, not an INTERNAL_ERROR. Anything else keeps its typed cause.
 */
function typedErrorOf(error: TRPCError): EmberscopeError {
  if (error.cause instanceof EmberscopeError) return error.cause;
  const invalid = (message: string, argument: string) => new EmberscopeError("INVALID_ARGUMENTS", message, { details: { argument } });
  switch (error.code) {
    case "PARSE_ERROR":
    case "BAD_REQUEST":
      return invalid("The request could not be parsed.", "(input)");
    case "UNSUPPORTED_MEDIA_TYPE":
      return new EmberscopeError("INVALID_ARGUMENTS", "tRPC bodies must be JSON (Content-Type: application/json).", { details: { argument: "content-type", expected: "application/json" } });
    case "METHOD_NOT_SUPPORTED":
      return invalid("Queries are called with GET and mutations with POST.", "method");
    case "NOT_FOUND":
      return invalid("No operation has that path.", "path");
    case "PAYLOAD_TOO_LARGE":
      return new EmberscopeError("REQUEST_TOO_LARGE", "The request body is too large.", { details: {} });
    default:
      return toEmberscopeError(error.cause ?? error);
  }
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    const typed = typedErrorOf(error);
    return {
      ...shape,
      message: typed.message,
      data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, error: typed.toDocument() },
    };
  },
});

export const router = t.router;

/** A tRPC procedure that parses with the service's own schema and calls it: no behaviour of its own. */
export function procedureFor<I extends z.ZodType, O extends z.ZodType>(def: ServiceDef<I, O>) {
  const base = t.procedure.input((raw: unknown) => raw as z.input<I>);
  const resolve = async ({ ctx, input }: { ctx: TrpcContext; input: unknown }): Promise<z.output<O>> => {
    try {
      return await callService(def, ctx.service, input);
    } catch (error) {
      throw toTrpcError(error);
    }
  };
  return def.kind === "query" ? base.query(resolve) : base.mutation(resolve);
}
