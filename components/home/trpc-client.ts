"use client";

import { TRPCClientError } from "@trpc/client";
import type { z } from "zod";
import type { ErrorDocument } from "../../server/domain/errors";
import type { ServiceDef } from "../../server/services/service";
import { workbenchTrpcClient } from "../trpc-client";

const client = workbenchTrpcClient();

/**
 * Calls a service operation through tRPC (its path is the service name), typed by the service's
 * own output schema. Only the type of the definition is imported: no server code reaches the browser.
 */
export function callQuery<D extends ServiceDef>(name: D["name"], input: z.input<D["input"]>): Promise<z.output<D["output"]>> {
  return client.query(name, input) as Promise<z.output<D["output"]>>;
}

export function callMutation<D extends ServiceDef>(name: D["name"], input: z.input<D["input"]>): Promise<z.output<D["output"]>> {
  return client.mutation(name, input) as Promise<z.output<D["output"]>>;
}

/** The typed error document inside a failed call, or a generic one for network failures. */
export function errorDocumentOf(thrown: unknown): ErrorDocument {
  if (thrown instanceof TRPCClientError) {
    const doc = (thrown.data as { error?: ErrorDocument } | undefined)?.error;
    if (doc) return doc;
  }
  const maybe = thrown as { error?: ErrorDocument };
  if (maybe && typeof maybe === "object" && maybe.error?.code) return maybe.error;
  return { code: "INTERNAL_ERROR", message: thrown instanceof Error ? thrown.message : String(thrown), retryable: true, details: {} };
}
