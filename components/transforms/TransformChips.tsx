"use client";

import { describeTransform } from "./actions";
import type { TransformStack } from "./use-transforms";
import "./transforms.css";

/**
 * The transform stack as chips above a view, in the order they apply: each removable (×), the
 * last one undone with "Undo" or Backspace, and the inversion as a chip of its own.
 */
export function TransformChips(props: { stack: TransformStack; nameOf: (frameKey: string) => string | undefined; applying?: boolean }) {
  const { transforms, inverted } = props.stack;
  if (transforms.length === 0 && !inverted) return props.applying ? <p className="tip-muted transform-chips" data-testid="transforms-applying">Removing the transforms…</p> : null;
  return (
    <div className="transform-chips" role="list" aria-label="Transforms, in the order they apply" data-testid="transform-chips">
      <span className="tip-muted">Transforms:</span>
      {transforms.map((t, i) => {
        const text = describeTransform(t, props.nameOf);
        return (
          <span className="transform-chip" role="listitem" key={`${i}-${text}`} data-testid="transform-chip" data-transform={t.type}>
            <span className="transform-chip-text">{text}</span>
            <button type="button" className="transform-chip-remove" aria-label={`Remove ${text}`} title="Remove this transform" onClick={() => props.stack.removeAt(i)} data-testid="transform-chip-remove">
              ×
            </button>
          </span>
        );
      })}
      {inverted ? (
        <span className="transform-chip" role="listitem" data-testid="transform-chip" data-transform="inverted">
          <span className="transform-chip-text">Inverted</span>
          <button type="button" className="transform-chip-remove" aria-label="Remove the inversion" onClick={() => props.stack.setInverted(false)} data-testid="transform-chip-remove">
            ×
          </button>
        </span>
      ) : null}
      {props.applying ? (
        <span className="tip-muted" data-testid="transforms-applying">
          Applying…
        </span>
      ) : null}
      <button type="button" className="plain-button" onClick={props.stack.pop} title="Remove the last transform (Backspace)" data-testid="transform-undo">
        Undo (⌫)
      </button>
    </div>
  );
}
