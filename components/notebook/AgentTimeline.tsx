"use client";

import type { AuditEvent } from "../../server/services/agent-access";

/** The agent calls that touched this investigation (the audit log, newest first), refused ones too. */
export function AgentTimeline({ events }: { events: readonly AuditEvent[] | null }) {
  return (
    <section className="nb-side-section" data-testid="agent-timeline" aria-label="Agent activity">
      <h2>Agent activity</h2>
      {events === null ? <p className="tip-muted">Loading…</p> : null}
      {events?.length === 0 ? <p className="tip-muted">No agent has touched this investigation. Agents reach it over MCP when agent access is on (Settings).</p> : null}
      {events?.length ? (
        <ol className="nb-timeline">
          {events.map((e) => (
            <li key={e.seq} data-refused={e.result_code === "OK" ? undefined : ""}>
              <time dateTime={e.at} title={e.at}>
                {e.at.slice(11, 19)}
              </time>{" "}
              <code>{e.action}</code>{" "}
              <span className={e.result_code === "OK" ? "tip-muted" : "error-inline"}>{e.result_code === "OK" ? "ok" : e.result_code}</span>
              {e.duration_ms !== null ? <span className="tip-muted num"> · {e.duration_ms.toFixed(0)} ms</span> : null}
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
