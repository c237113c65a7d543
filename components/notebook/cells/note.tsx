"use client";

import Markdown from "react-markdown";
import type { CellViewProps } from "../context";

/** Elements that would fetch from another host just by being shown (a note may be an agent's observed text). */
const NO_REMOTE_LOADS = ["img"];

/**
 * A markdown note. Rendered without raw HTML (react-markdown escapes it and drops unsafe link
 * schemes), since an agent's note is observed text to everyone else.
 */
export function NoteCellView({ content, editing, onContent }: CellViewProps<"note">) {
  if (editing) {
    return (
      <textarea
        className="nb-editor"
        data-testid="note-editor"
        aria-label="Markdown"
        autoFocus
        value={content.markdown}
        rows={Math.min(20, Math.max(3, content.markdown.split("\n").length + 1))}
        onChange={(e) => onContent({ markdown: e.target.value })}
      />
    );
  }
  if (!content.markdown.trim()) return <p className="tip-muted nb-placeholder">Empty note — press Enter to write.</p>;
  return (
    <div className="nb-markdown" data-testid="note-body">
      <Markdown disallowedElements={NO_REMOTE_LOADS} unwrapDisallowed>
        {content.markdown}
      </Markdown>
    </div>
  );
}
