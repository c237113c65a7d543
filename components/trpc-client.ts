import { createTRPCUntypedClient, httpLink, TRPCClientError } from "@trpc/client";
import type { z } from "zod";
import type { ErrorDocument } from "../server/domain/errors";
import type { analyzeHotspots, compareRuns, flameTree, frameCallees, frameCallers, summarizeRun } from "../server/services/evidence";

/** The evidence queries the browser calls, by tRPC path (= service name). Types only: nothing server-side is bundled. */
interface EvidenceQueries {
  "evidence.summary": typeof summarizeRun;
  "evidence.hotspots": typeof analyzeHotspots;
  "evidence.callers": typeof frameCallers;
  "evidence.callees": typeof frameCallees;
  "evidence.flame_tree": typeof flameTree;
  "evidence.compare": typeof compareRuns;
}

const client = createTRPCUntypedClient({ links: [httpLink({ url: "/api/trpc" })] });

/** Calls a query service through tRPC, typed by the service's own zod schemas. Client components only. */
export function queryService<K extends keyof EvidenceQueries>(path: K, input: z.input<EvidenceQueries[K]["input"]>): Promise<z.output<EvidenceQueries[K]["output"]>> {
  return client.query(path, input) as Promise<z.output<EvidenceQueries[K]["output"]>>;
}

/** The typed error document of a failed call (or an INTERNAL_ERROR one for transport failures). */
export function errorDocumentOf(thrown: unknown): ErrorDocument {
  if (thrown instanceof TRPCClientError) {
    const doc = (thrown.data as { error?: ErrorDocument } | undefined)?.error;
    if (doc) return doc;
  }
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return { code: "INTERNAL_ERROR", message: `The request failed: ${message}. Reload the page; if it keeps failing, check that emberscope serve is running.`, retryable: true, details: {} };
}
