import type { ReactNode } from "react";
import { ShellControls } from "./ShellControls";

export interface RailLink {
  href: string;
  label: string;
  current?: boolean;
}

/** The rail every page shows, in this order; a page marks where it is and may add its own links after Runs. */
const MAIN_RAIL = [
  { section: "workspace", href: "/", label: "Workspace" },
  { section: "runs", href: "/runs", label: "Runs" },
  { section: "commits", href: "/#commits", label: "Commits" },
  { section: "compare", href: "/compare", label: "Compare" },
  { section: "sql", href: "/sql", label: "SQL" },
  { section: "investigations", href: "/investigations", label: "Investigations" },
  { section: "settings", href: "/settings", label: "Settings" },
] as const;

export type RailSection = (typeof MAIN_RAIL)[number]["section"];

export function mainRail(current: RailSection | null, afterRuns: RailLink[] = []): RailLink[] {
  return MAIN_RAIL.flatMap(({ section, href, label }) => {
    const link = { href, label, current: section === current };
    return section === "runs" ? [link, ...afterRuns] : [link];
  });
}

/** The page frame: top bar with the pinned commit, left rail, the view filling the rest. */
export function AppShell(props: { pinnedCommitId: string | null; pinnedSeq?: number; isHead?: boolean; rail: RailLink[]; children: ReactNode }) {
  return (
    <div className="shell">
      <header className="topbar">
        <ShellControls part="rail" />
        <a className="brand" href="/">
          <span className="brand-mark" aria-hidden="true" />
          Emberscope
        </a>
        <span className="spacer" />
        <span className="pin" data-testid="pinned-commit">
          pinned commit
          {props.pinnedCommitId ? (
            <code title={props.pinnedCommitId}>
              {props.isHead === false ? "" : "HEAD · "}
              {props.pinnedCommitId}
              {props.pinnedSeq !== undefined ? ` · #${props.pinnedSeq}` : ""}
            </code>
          ) : (
            <code>none</code>
          )}
        </span>
        <ShellControls part="theme" />
      </header>
      <aside className="rail">
        <nav aria-label="Main">
          {props.rail.map((link) => (
            <a key={link.href} href={link.href} aria-current={link.current ? "page" : undefined}>
              {link.label}
            </a>
          ))}
        </nav>
      </aside>
      <main>{props.children}</main>
    </div>
  );
}
