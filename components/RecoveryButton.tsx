"use client";

import { useState } from "react";
import { workbenchTrpcClient } from "./trpc-client";

/**
 * Runs a typed error's recovery operation through tRPC (recovery operations are named by their
 * service name, which is also their tRPC path) and reloads the page when it succeeds.
 */
export function RecoveryButton(props: { operation: string; arguments: Record<string, unknown>; kind: "query" | "mutation"; label: string }) {
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const run = async () => {
    setState({ busy: true });
    const client = workbenchTrpcClient();
    try {
      if (props.kind === "mutation") await client.mutation(props.operation, props.arguments);
      else await client.query(props.operation, props.arguments);
      window.location.reload();
    } catch (error) {
      setState({ busy: false, error: error instanceof Error ? error.message : String(error) });
    }
  };
  return (
    <p>
      <button type="button" className="button" onClick={run} disabled={state.busy} data-testid="recovery-button">
        {state.busy ? "Working…" : props.label}
      </button>
      {state.error ? <span className="error-inline"> {state.error}</span> : null}
    </p>
  );
}
