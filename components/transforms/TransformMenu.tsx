"use client";

import { useEffect, useRef } from "react";
import type { Transform } from "../../analysis/queries/transforms";
import { INVERT_KEY, TRANSFORM_ACTIONS, type FrameRef } from "./actions";
import "./transforms.css";

export interface TransformMenuState {
  frame: FrameRef;
  x: number;
  y: number;
}

/**
 * The right-click menu of a frame: the transforms that apply to it, each with its key, and the
 * inverted tree. Arrows move, Enter applies, Escape or a click elsewhere closes.
 */
export function TransformMenu(props: { menu: TransformMenuState; inverted: boolean; onApply: (t: Transform) => void; onInvert: (on: boolean) => void; onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const { frame } = props.menu;
  useEffect(() => {
    ref.current?.querySelector<HTMLButtonElement>("button:not([disabled])")?.focus();
    const away = (e: MouseEvent) => {
      if (!ref.current?.contains(e.target as Node)) props.onClose();
    };
    window.addEventListener("mousedown", away);
    return () => window.removeEventListener("mousedown", away);
  }, [props.menu]);
  const onKey = (e: React.KeyboardEvent) => {
    const items = [...(ref.current?.querySelectorAll<HTMLButtonElement>("button:not([disabled])") ?? [])];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === "Escape") props.onClose();
    else if (e.key === "ArrowDown") items[(at + 1) % items.length]?.focus();
    else if (e.key === "ArrowUp") items[(at - 1 + items.length) % items.length]?.focus();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };
  const left = Math.max(4, Math.min(props.menu.x, (typeof window === "undefined" ? 1e9 : window.innerWidth) - 380));
  const top = Math.max(4, Math.min(props.menu.y, (typeof window === "undefined" ? 1e9 : window.innerHeight) - 330));
  return (
    <div ref={ref} className="transform-menu" role="menu" aria-label={`Transforms for ${frame.name}`} style={{ left, top }} onKeyDown={onKey} data-testid="transform-menu">
      {TRANSFORM_ACTIONS.map((a) => {
        const t = a.make(frame);
        return (
          <button
            key={a.id}
            type="button"
            role="menuitem"
            disabled={t === null}
            onClick={() => {
              if (t) props.onApply(t);
              props.onClose();
            }}
            data-testid={`transform-action-${a.id}`}
          >
            <span>{a.label(frame)}</span>
            <kbd>{a.key}</kbd>
          </button>
        );
      })}
      <button
        type="button"
        role="menuitemcheckbox"
        aria-checked={props.inverted}
        onClick={() => {
          props.onInvert(!props.inverted);
          props.onClose();
        }}
        data-testid="transform-action-invert"
      >
        <span>{props.inverted ? "Uninvert the call tree" : "Invert the call tree (leaf functions first)"}</span>
        <kbd>{INVERT_KEY}</kbd>
      </button>
    </div>
  );
}
