/**
 * A workflow node's arguments template filled in: `{"$ref": node, "path": pointer}` with that
 * node's result at the RFC 6901 pointer, `{"$ref": node, "line": k}` with the k-th line (trimmed)
 * of its text result, `{"$input": name, "path": pointer}` with a runtime input, `{"$literal": v}`
 * with v as it is. The forms are compile.ts's. Pure; a reference that does not resolve is an
 * UnresolvedReference naming it (never the values).
 */
import type { Json } from "./compile";

export class UnresolvedReference extends Error {
  constructor(
    readonly reference: { $ref?: string; $input?: string; path?: string; line?: number },
    readonly reason: string,
  ) {
    super(`${reference.$ref !== undefined ? `reference to ${reference.$ref}` : `input ${reference.$input}`}${reference.path ? ` at ${reference.path}` : ""}${reference.line !== undefined ? ` line ${reference.line}` : ""}: ${reason}`);
    this.name = "UnresolvedReference";
  }
}

type Obj = { [key: string]: Json };

const isObject = (v: Json): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const only = (v: Obj, keys: string[]) => Object.keys(v).every((k) => keys.includes(k));

export function isRef(v: Json): v is { $ref: string; path?: string; line?: number } {
  return isObject(v) && typeof v.$ref === "string" && only(v, ["$ref", "path", "line"]);
}
export function isInput(v: Json): v is { $input: string; path: string } {
  return isObject(v) && typeof v.$input === "string" && only(v, ["$input", "path"]);
}
const isLiteral = (v: Json): v is { $literal: Json } => isObject(v) && "$literal" in v && Object.keys(v).length === 1;

/** The value at an RFC 6901 pointer ("" is the whole value), or undefined. Own keys only. */
export function atPointer(value: Json, pointer: string): Json | undefined {
  if (pointer === "") return value;
  if (!pointer.startsWith("/")) return undefined;
  let at: Json | undefined = value;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
      at = at[Number(key)];
    } else if (isObject(at)) {
      at = Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
    } else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** What a template refers to: node ids and input names. */
export function templateReferences(template: Json): { nodes: Set<string>; inputs: Set<string> } {
  const nodes = new Set<string>();
  const inputs = new Set<string>();
  const visit = (v: Json, depth: number): void => {
    if (v === null || typeof v !== "object" || depth > 512) return;
    if (Array.isArray(v)) return v.forEach((x) => visit(x, depth + 1));
    if (isRef(v)) return void nodes.add(v.$ref);
    if (isInput(v)) return void inputs.add(v.$input);
    if (isLiteral(v)) return;
    for (const x of Object.values(v)) visit(x, depth + 1);
  };
  visit(template, 0);
  return { nodes, inputs };
}

/**
 * The template with every reference replaced. `output(node)` is the node's result (a JSON value,
 * or a string for a text result) or undefined when it has none.
 */
export function resolveArguments(template: Json, inputs: Readonly<Record<string, Json>>, output: (node: string) => Json | undefined): Json {
  const fill = (v: Json, depth: number): Json => {
    if (v === null || typeof v !== "object") return v;
    if (depth > 512) throw new UnresolvedReference({}, "the arguments nest too deeply");
    if (Array.isArray(v)) return v.map((x) => fill(x, depth + 1));
    if (isLiteral(v)) return v.$literal;
    if (isInput(v)) {
      if (!Object.prototype.hasOwnProperty.call(inputs, v.$input)) throw new UnresolvedReference(v, "no runtime input has that name");
      const found = atPointer(inputs[v.$input], v.path);
      if (found === undefined) throw new UnresolvedReference(v, "the input has no value at that path");
      return found;
    }
    if (isRef(v)) {
      const result = output(v.$ref);
      if (result === undefined) throw new UnresolvedReference(v, "that node has no result");
      if (v.line !== undefined) {
        if (typeof result !== "string") throw new UnresolvedReference(v, "a line reference needs a text result");
        const line = result.split("\n")[v.line];
        if (line === undefined) throw new UnresolvedReference(v, "the result has fewer lines");
        return line.trim();
      }
      const found = atPointer(result, v.path ?? "");
      if (found === undefined) throw new UnresolvedReference(v, "the result has no value at that path");
      return found;
    }
    const out: Obj = {};
    for (const key of Object.keys(v)) out[key] = fill(v[key], depth + 1);
    return out;
  };
  return fill(template, 0);
}

/** A recorded result as a value: JSON when it parses, else its text. */
export function recordedValue(result: string | null): Json {
  if (result === null) return null;
  try {
    return JSON.parse(result) as Json;
  } catch {
    return result;
  }
}
