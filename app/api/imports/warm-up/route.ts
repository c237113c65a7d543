import { warmUpState } from "../../../../server/services/warm-up-state";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/**
 * Whether the server's start-up warm-up of the drop's path (server/services/warm-up.ts) has ended:
 * `{ state: "off" | "idle" | "running" | "done" | "failed", ms, error }`. Benchmarks wait for it before
 * they drop, as a person takes seconds to drag a file.
 */
export function GET(): Response {
  return Response.json(warmUpState(), { headers: { "Cache-Control": "no-store" } });
}
