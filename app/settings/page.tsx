import { headers } from "next/headers";
import { TypedErrorPanel } from "../../components/TypedErrorPanel";
import { AppShell, mainRail } from "../../components/AppShell";
import { agentAccessStatus, callService, listAuditEvents, workspaceStatus } from "../../server/services";
import { webServiceContext } from "../../server/trpc/context";
import { AgentAccessControls } from "./AgentAccessControls";
import styles from "./settings.module.css";

export const dynamic = "force-dynamic";

const RAIL = mainRail("settings");

function resultClass(code: string): string {
  return code === "OK" ? "status status-succeeded" : "status status-failed";
}

/** Why the switches are locked in this browser, and the three ways to unlock them. */
function SignInHelp(props: { refused: boolean }) {
  return (
    <div className="empty" data-testid="sign-in-help">
      <strong>{props.refused ? "That sign-in link was used already or has expired." : "This browser is not signed in as you."}</strong> Only the person at this
      machine may change agent access and what agents see — not a web page, not an agent, whatever token it holds. To change them here:
      <ol>
        <li>
          open the one-time sign-in link <span className="command mono">emberscope serve</span> printed when it started (…<span className="mono">/sign-in?code=…</span>),
        </li>
        <li>
          or make a new one: <span className="command mono">npx emberscope serve link</span>,
        </li>
        <li>
          or use the CLI instead: <span className="command mono">npx emberscope agent-access on</span> (<span className="mono">off</span>,{" "}
          <span className="mono">--detail full</span>).
        </li>
      </ol>
    </div>
  );
}

/** Settings: agent access (a person's decision, off at every launch), detail level, and the audit log. */
export default async function SettingsPage(props: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const ctx = webServiceContext(await headers());
  const signInRefused = (await props.searchParams).sign_in === "refused";
  try {
    const status = await callService(workspaceStatus, ctx, {});
    const access = await callService(agentAccessStatus, ctx, {});
    const audit = await callService(listAuditEvents, ctx, { limit: 100 });
    return (
      <AppShell pinnedCommitId={status.head_commit_id} pinnedSeq={status.head.seq} rail={RAIL}>
        <h1>Settings</h1>
        <h2 id="agents">Agent access</h2>
        <p className={styles.lead}>
          Agents reach this workspace over MCP at <code>/api/mcp</code> with the workspace token, which{" "}
          <span className="command mono">npx emberscope mcp token</span> prints. Access is off each time the server starts; switch it
          on here or with <span className="command mono">npx emberscope agent-access on</span>. An agent cannot change these settings.
        </p>
        {ctx.person ? null : <SignInHelp refused={signInRefused} />}
        <AgentAccessControls enabled={access.enabled} detail={access.detail} person={ctx.person === true} />
        <dl className="facts">
          <div className="fact">
            <dt>Access</dt>
            <dd data-testid="agent-access-state">{access.enabled ? "on" : "off"}</dd>
          </div>
          <div className="fact">
            <dt>Agents see</dt>
            <dd>{access.detail === "full" ? "full detail" : "redacted"}</dd>
          </div>
          <div className="fact">
            <dt>Token</dt>
            <dd className="mono">{access.token_generation ? `generation ${access.token_generation}` : "none yet"}</dd>
          </div>
          <div className="fact">
            <dt>On since</dt>
            <dd className="mono">{access.enabled && access.enabled_at ? access.enabled_at : "—"}</dd>
          </div>
          <div className="fact">
            <dt>This browser</dt>
            <dd data-testid="person-session">{ctx.person ? "signed in as you" : "not signed in"}</dd>
          </div>
        </dl>
        {access.servers.length > 1 ? (
          <p className={styles.lead}>
            {access.servers.length} servers run for this workspace:{" "}
            {access.servers.map((s) => `${s.url} (pid ${s.pid}, agents ${s.agent_access ? "answered" : "refused"})`).join(", ")}.
          </p>
        ) : null}
        <h2 id="audit">Audit log</h2>
        {audit.items.length === 0 ? (
          <div className="empty" data-testid="audit-empty">
            <strong>No audited calls yet.</strong> Every agent tool call and every change of agent access is listed here.
          </div>
        ) : (
          <table className="data" data-testid="audit-table">
            <thead>
              <tr>
                <th>When</th>
                <th>Actor</th>
                <th>Action</th>
                <th>Via</th>
                <th>Result</th>
                <th className="num">Duration</th>
                <th>Arguments digest</th>
              </tr>
            </thead>
            <tbody>
              {audit.items.map((e) => (
                <tr key={e.seq}>
                  <td className="mono">{e.at.replace("T", " ").replace(/\.\d+Z$/, "Z")}</td>
                  <td>{e.actor}</td>
                  <td className="mono">{e.action}</td>
                  <td>{typeof e.details.transport === "string" ? e.details.transport : "—"}</td>
                  <td>
                    <span className={resultClass(e.result_code)}>{e.result_code}</span>
                  </td>
                  <td className="num">{e.duration_ms === null ? "—" : `${e.duration_ms.toFixed(1)} ms`}</td>
                  <td className="mono">{e.arguments_digest ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {audit.truncated ? <p className={styles.lead}>Showing the newest {audit.items.length} events.</p> : null}
      </AppShell>
    );
  } catch (thrown) {
    return (
      <AppShell pinnedCommitId={null} rail={RAIL}>
        <h1>Settings</h1>
        <TypedErrorPanel thrown={thrown} />
      </AppShell>
    );
  }
}
