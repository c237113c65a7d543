import { createTRPCUntypedClient, httpLink, TRPCClientError } from "@trpc/client";
import type { z } from "zod";
import type { ErrorDocument } from "../server/domain/errors";
import { CSRF_HEADER, SESSION_PATH } from "../server/http/header-names";
import type { analyzeHotspots, compareRuns, flameTree, frameCallees, frameCallers, summarizeRun } from "../server/services/evidence";
import type { showExperiment } from "../server/services/experiments";
import type { getCriticalPath } from "../server/services/workflows";

/** The evidence queries the browser calls, by tRPC path (= service name). Types only: nothing server-side is bundled. */
interface EvidenceQueries {
  "evidence.summary": typeof summarizeRun;
  "evidence.hotspots": typeof analyzeHotspots;
  "evidence.callers": typeof frameCallers;
  "evidence.callees": typeof frameCallees;
  "evidence.flame_tree": typeof flameTree;
  "evidence.compare": typeof compareRuns;
  "critical_path.get": typeof getCriticalPath;
  "experiments.get": typeof showExperiment;
}

let csrf: Promise<string> | null = null;

/** This server's CSRF token (GET /api/session, asked once per page; again when `refresh`). */
export function csrfToken(refresh = false): Promise<string> {
  if (!csrf || refresh) {
    const asked = fetch(SESSION_PATH, { cache: "no-store", credentials: "same-origin" }).then(async (r) => {
      if (!r.ok) throw new Error(`The server answered ${r.status} for its session.`);
      return ((await r.json()) as { csrf_token: string }).csrf_token;
    });
    asked.catch(() => (csrf === asked ? (csrf = null) : undefined));
    csrf = asked;
  }
  return csrf;
}

function refusalReason(body: unknown): unknown {
  const error = (body as { error?: { details?: { reason?: unknown }; data?: { error?: { details?: { reason?: unknown } } } } } | null)?.error;
  return error?.data?.error?.details?.reason ?? error?.details?.reason;
}

/**
 * `fetch` for the workbench's own API: a state-changing request carries the CSRF token, and one
 * refused for a stale token (the server restarted since the page loaded) is sent once more with a
 * fresh one. Every tRPC client of the UI uses it.
 */
export const workbenchFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const method = (init?.method ?? "GET").toUpperCase();
  if (method === "GET" || method === "HEAD") return fetch(input, init);
  const send = async (refresh: boolean) => {
    const headers = new Headers(init?.headers);
    headers.set(CSRF_HEADER, await csrfToken(refresh));
    return fetch(input, { ...init, headers });
  };
  const first = await send(false);
  if (first.status !== 403) return first;
  const reason = await first.clone().json().then(refusalReason, () => null);
  return reason === "csrf_token_invalid" ? send(true) : first;
};

/** The UI's tRPC client: the API's path, through `workbenchFetch`. */
export function workbenchTrpcClient() {
  return createTRPCUntypedClient({ links: [httpLink({ url: "/api/trpc", fetch: workbenchFetch })] });
}

const client = workbenchTrpcClient();

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
