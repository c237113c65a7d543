import type { ReactNode } from "react";
import type { Json } from "../../analysis/workflow/compile";

/** Deeper values, and more entries than this in all, are shown as "…" (the template is bounded). */
const MAX_DEPTH = 48;
const MAX_ENTRIES = 2000;

/**
 * A node's arguments template as indented JSON: `{$ref, path|line}` becomes a button that selects
 * the node whose result it reads, `{$input, path}` names the runtime input, `{$literal}` is marked.
 * Every string is observed data and rendered as text (JSON-quoted), never as HTML or markdown.
 */
export function ArgumentsTemplate(props: { value: Json; onSelect: (node: string) => void }) {
  let budget = MAX_ENTRIES;
  const render = (value: Json, depth: number, indent: string): ReactNode => {
    if (--budget < 0) return "…";
    if (value === null || typeof value !== "object") return JSON.stringify(value);
    if (depth >= MAX_DEPTH) return "…";
    if (!Array.isArray(value)) {
      const ref = referenceOf(value);
      if (ref) {
        return (
          <button type="button" className="ref" data-testid="template-ref" data-ref={ref.node} onClick={() => props.onSelect(ref.node)} title={`The result of ${ref.node}${ref.where ? `, at ${ref.where}` : ""}: select it`}>
            ↳ {ref.node}
            {ref.where ? ` ${ref.where}` : ""}
          </button>
        );
      }
      if (typeof value.$input === "string" && Object.keys(value).every((k) => k === "$input" || k === "path")) {
        return (
          <span className="input" data-testid="template-input" title="A runtime input of the trace">
            input {value.$input}
            {typeof value.path === "string" && value.path ? ` ${value.path}` : ""}
          </span>
        );
      }
      if ("$literal" in value && Object.keys(value).length === 1) {
        return (
          <>
            <span className="literal">literal </span>
            {render(value.$literal, depth + 1, indent)}
          </>
        );
      }
    }
    const entries: [string | null, Json][] = Array.isArray(value) ? value.map((v) => [null, v]) : Object.entries(value);
    if (entries.length === 0) return Array.isArray(value) ? "[]" : "{}";
    const inner = `${indent}  `;
    return (
      <>
        {Array.isArray(value) ? "[" : "{"}
        {entries.map(([key, v], i) => (
          <span key={i}>
            {"\n"}
            {inner}
            {key !== null ? `${JSON.stringify(key)}: ` : null}
            {render(v, depth + 1, inner)}
            {i < entries.length - 1 ? "," : null}
          </span>
        ))}
        {"\n"}
        {indent}
        {Array.isArray(value) ? "]" : "}"}
      </>
    );
  };
  return (
    <pre className="mono cp-template" data-testid="node-arguments">
      {render(props.value, 0, "")}
    </pre>
  );
}

function referenceOf(value: { [key: string]: Json }): { node: string; where: string } | null {
  if (typeof value.$ref !== "string" || !Object.keys(value).every((k) => k === "$ref" || k === "path" || k === "line")) return null;
  const where = typeof value.line === "number" ? `line ${value.line}` : typeof value.path === "string" ? value.path : "";
  return { node: value.$ref, where };
}
