"use client";

import { NOTEBOOK_KEYS } from "../../analysis/notebook/keys";
import { KeysTable } from "../KeysTable";

/** The `?` overlay: every command-mode key. */
export function NotebookKeys(props: { onClose: () => void }) {
  return (
    <div className="nb-overlay" role="dialog" aria-label="Keyboard shortcuts" data-testid="notebook-keys" onClick={props.onClose}>
      <div className="nb-overlay-card" onClick={(e) => e.stopPropagation()}>
        <h2>Keys (command mode)</h2>
        <KeysTable keys={NOTEBOOK_KEYS} />
        <p className="tip-muted">Esc or a click outside closes this.</p>
      </div>
    </div>
  );
}
