"use client";

import { KeysTable } from "../KeysTable";

export const FLAME_KEYS: [string, string][] = [
  ["/", "Search frames (name, file or module; /regex/ works)"],
  ["Esc", "Clear the search, or reset the zoom"],
  ["Click / Enter", "Zoom into a frame (the breadcrumb walks back)"],
  ["↑ ↓", "Walk the stack: parent and heaviest child"],
  ["← →", "Previous / next frame in the same row"],
  ["+ −", "Zoom in / out around the centre (Ctrl + wheel at the pointer)"],
  ["Shift + ← →", "Pan (or drag, or Shift + wheel)"],
  ["i", "Flame ↔ icicle orientation"],
  ["Right-click", "A frame's transforms (run page): merge, focus, drop, collapse, invert"],
  ["m F f d", "Merge function · focus on function · focus on subtree · drop its samples (hovered or selected frame)"],
  ["r R C", "Collapse recursion · direct recursion only · the frame's module"],
  ["I  ⌫", "Invert the call tree · undo the last transform"],
  ["?", "Show or hide this list"],
];

/** The `?` overlay: every key the flame graph understands. */
export function KeyboardHelp(props: { onClose: () => void }) {
  return (
    <div className="flame-help" role="dialog" aria-modal="false" aria-label="Keyboard shortcuts" data-testid="flame-help">
      <div className="flame-help-head">
        <strong>Keyboard shortcuts</strong>
        <button type="button" className="link-button" onClick={props.onClose} autoFocus>
          Close (Esc)
        </button>
      </div>
      <KeysTable keys={FLAME_KEYS} />
    </div>
  );
}
