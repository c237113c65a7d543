"use client";

import { useState } from "react";
import "./share.css";

/** The page's address with the commit it reads pinned, so the link shows the same evidence later. */
export function pinnedLink(href: string, commitId: string): string {
  const url = new URL(href);
  url.searchParams.set("commit", commitId);
  return url.toString();
}

/**
 * Export and share one run: its samples as a speedscope file, its original artifact, and a link
 * that reproduces the view (view, zoom, search, metric from the URL) pinned to its commit.
 */
export function RunShareMenu(props: { runId: string; commitId: string; metric: string | null; hasSamples: boolean; hasArtifact: boolean }) {
  const [copied, setCopied] = useState<{ link: string; clipboard: boolean } | null>(null);
  const run = encodeURIComponent(props.runId);
  const speedscope = `/api/runs/${run}/speedscope?${new URLSearchParams({ commit: props.commitId, ...(props.metric ? { metric: props.metric } : {}) }).toString()}`;
  const copy = async () => {
    const link = pinnedLink(window.location.href, props.commitId);
    let clipboard = false;
    try {
      await navigator.clipboard.writeText(link);
      clipboard = true;
    } catch {
      // No clipboard permission (an embedded or headless page): the link is shown to copy by hand.
    }
    setCopied({ link, clipboard });
  };
  return (
    <div className="run-share" data-testid="run-share">
      {props.hasSamples ? (
        <a className="plain-button" href={speedscope} download data-testid="export-speedscope" title="The run's samples as a speedscope file: opens in speedscope.app and the tools that read its format">
          speedscope JSON
        </a>
      ) : null}
      {props.hasArtifact ? (
        <a className="plain-button" href={`/api/runs/${run}/artifact`} download data-testid="export-artifact" title="The original file: as imported, or as the capture's profiler wrote it">
          Original file
        </a>
      ) : null}
      <button type="button" className="plain-button" onClick={() => void copy()} data-testid="copy-link" title="A link to this view (view, zoom, search, metric) pinned to its commit">
        Copy link
      </button>
      {copied ? (
        <span className="copied-link" data-testid="copied-link" role="status">
          {copied.clipboard ? "Copied" : "Copy this link"}: <input readOnly value={copied.link} onFocus={(e) => e.currentTarget.select()} data-testid="copied-link-text" size={48} />{" "}
          <span className="tip-muted">opens on this machine only (the server listens on 127.0.0.1); it pins commit {props.commitId}.</span>
        </span>
      ) : null}
    </div>
  );
}
