"use client";

import { useState } from "react";
import { workbenchTrpcClient } from "../../components/trpc-client";

/**
 * The person's switches: agent access on/off and the detail agents see (tRPC agent.set_access /
 * agent.set_detail). Locked unless this browser holds the person's session cookie; the services
 * refuse the change without it anyway.
 */
export function AgentAccessControls(props: { enabled: boolean; detail: "redacted" | "full"; person: boolean }) {
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const locked = state.busy || !props.person;
  const call = async (path: string, input: Record<string, unknown>) => {
    setState({ busy: true });
    try {
      await workbenchTrpcClient().mutation(path, input);
      window.location.reload();
    } catch (error) {
      setState({ busy: false, error: error instanceof Error ? error.message : String(error) });
    }
  };
  return (
    <div style={{ display: "flex", gap: 16, alignItems: "center", flexWrap: "wrap", margin: "8px 0 16px" }}>
      <button type="button" className="button" disabled={locked} data-testid="agent-access-toggle" onClick={() => call("agent.set_access", { enabled: !props.enabled })}>
        {props.enabled ? "Switch agent access off" : "Switch agent access on"}
      </button>
      <label>
        Agents see{" "}
        <select value={props.detail} disabled={locked} data-testid="agent-detail" onChange={(e) => call("agent.set_detail", { detail: e.target.value })}>
          <option value="redacted">redacted (paths, names, addresses, secrets as tokens)</option>
          <option value="full">full detail (instruction-like text still suppressed)</option>
        </select>
      </label>
      {state.error ? <span className="error-inline">{state.error}</span> : null}
    </div>
  );
}
