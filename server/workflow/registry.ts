import { createHash } from "node:crypto";
import { promises as fsp } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { canonicalJson } from "../../analysis/notebook/digest";
import { EmberscopeError } from "../domain/errors";
import type { ToolBinding } from "../domain/workflow";
import { loadProjectConfig } from "../capture/project-config";
import { CONFIG_FILE, WORKSPACE_DIR_NAME } from "../store/layout";
import { BUILTIN_TOOLS } from "./builtins";
import { definitionProblem, jsonSchemaOf, type ToolDefinition } from "./tool";

/**
 * The tool registry: the only way a workflow call reaches code. Tools are registered by code —
 * the built-ins, and the modules of the folder `[tools] folder` names in emberscope.toml — and
 * looked up by exact name in a Map, so a name from a trace (`__proto__`, `constructor`,
 * `../../bin/sh`) never selects anything that was not registered under exactly that name.
 *
 * Each registered tool has a digest: sha256 of its source (the module's bytes, or the built-in's
 * name and Emberscope's version) and of what it declares (side effect, schemas, timeout,
 * concurrency). A person's review binds a contract to that digest; changed code no longer matches.
 */

export interface RegisteredTool {
  definition: ToolDefinition;
  /** `builtin`, or `module:<path under the project root>`. */
  handler: string;
  handler_digest: string;
  binding: ToolBinding;
}

export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();

  add(tool: RegisteredTool): void {
    const name = tool.definition.name;
    if (this.tools.has(name)) {
      throw new EmberscopeError("TOOL_MODULE_INVALID", `Two registered tools are named ${name}.`, {
        details: { file: tool.handler, reason: `tool ${name} is registered by ${this.tools.get(name)!.handler} too` },
      });
    }
    this.tools.set(name, tool);
  }

  /** The tool registered under exactly this name, or null. */
  get(name: string): RegisteredTool | null {
    return this.tools.get(name) ?? null;
  }

  list(): RegisteredTool[] {
    return [...this.tools.values()].sort((a, b) => (a.definition.name < b.definition.name ? -1 : 1));
  }
}

/** What a registered tool declares, as its contract shows it. */
function bindingOf(definition: ToolDefinition): ToolBinding {
  return { input_schema: jsonSchemaOf(definition.input), output_schema: jsonSchemaOf(definition.output), timeout_ms: definition.timeout_ms, concurrency: definition.concurrency };
}

function digestOf(source: string, definition: ToolDefinition, binding: ToolBinding): string {
  const declared = canonicalJson({ name: definition.name, side_effect: definition.side_effect, ...binding } as never);
  return "sha256:" + createHash("sha256").update(source).update("\0").update(declared).digest("hex");
}

function registered(definition: ToolDefinition, handler: string, source: string): RegisteredTool {
  const binding = bindingOf(definition);
  return { definition, handler, handler_digest: digestOf(source, definition, binding), binding };
}

export const BUILTIN_SOURCE_VERSION = "emberscope-builtins-1";

const MODULE_EXTENSIONS = new Set([".ts", ".mts", ".js", ".mjs"]);

function invalid(file: string, reason: string, cause?: unknown): EmberscopeError {
  return new EmberscopeError("TOOL_MODULE_INVALID", `The tools folder's module ${file} is not usable: ${reason}.`, { details: { file, reason }, cause });
}

/** The declared tools folder, resolved after every symlink and confined to the project root (never the workspace folder). */
async function toolsFolder(projectRoot: string, folder: string): Promise<{ dir: string; root: string }> {
  const root = await fsp.realpath(projectRoot);
  const refused = (reason: string) => new EmberscopeError("CONFIG_INVALID", `${CONFIG_FILE}: tools.folder ${reason}.`, { details: { file: CONFIG_FILE, path: "tools.folder" } });
  if (path.isAbsolute(folder)) throw refused("must be a path relative to the project root");
  let dir: string;
  try {
    dir = await fsp.realpath(path.resolve(root, folder));
  } catch {
    throw refused("names no folder");
  }
  const rel = path.relative(root, dir);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) throw refused("must be a folder inside the project root");
  if (rel.split(path.sep)[0] === WORKSPACE_DIR_NAME) throw refused(`cannot be inside ${WORKSPACE_DIR_NAME}/`);
  if (!(await fsp.stat(dir)).isDirectory()) throw refused("names no folder");
  return { dir, root };
}

async function importModule(file: string): Promise<Record<string, unknown>> {
  if (file.endsWith(".ts") || file.endsWith(".mts")) {
    const { tsImport } = await import("tsx/esm/api");
    return (await tsImport(pathToFileURL(file).href, { parentURL: import.meta.url, tsconfig: false })) as Record<string, unknown>;
  }
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

function exportedTools(exports: Record<string, unknown>): unknown[] {
  // `tools` first; a default export only without it (module interop may mirror `tools` under default).
  const value = exports.tools !== undefined ? exports.tools : exports.default;
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (typeof value === "object" && value !== null && "tools" in value && Array.isArray((value as { tools: unknown }).tools)) return (value as { tools: unknown[] }).tools;
  return [value];
}

/**
 * The registry for a project: built-ins, then each module directly in the tools folder (sorted by
 * name; `*.d.ts` and `*.test.*` skipped). A module that fails to load, exports nothing or a
 * malformed tool fails the whole registry (TOOL_MODULE_INVALID): no half-loaded registry runs.
 */
export async function loadToolRegistry(projectRoot: string): Promise<ToolRegistry> {
  const registry = new ToolRegistry();
  for (const definition of BUILTIN_TOOLS) registry.add(registered(definition, "builtin", `${BUILTIN_SOURCE_VERSION}:${definition.name}`));
  const config = loadProjectConfig(projectRoot);
  if (!config.tools.folder) return registry;
  const { dir, root } = await toolsFolder(projectRoot, config.tools.folder);
  const entries = (await fsp.readdir(dir, { withFileTypes: true })).filter((e) => e.isFile() && MODULE_EXTENSIONS.has(path.extname(e.name)) && !e.name.endsWith(".d.ts") && !/\.test\.[mc]?[jt]s$/.test(e.name));
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const file = path.join(dir, entry.name);
    const shown = path.relative(root, file).split(path.sep).join("/");
    const source = await fsp.readFile(file);
    let exports: Record<string, unknown>;
    try {
      exports = await importModule(file);
    } catch (error) {
      throw invalid(shown, "it failed to load", error);
    }
    const tools = exportedTools(exports);
    if (tools.length === 0) throw invalid(shown, "it exports no `tools` array and no default tool");
    for (const value of tools) {
      const problem = definitionProblem(value);
      if (problem) throw invalid(shown, problem);
      const definition = value as ToolDefinition;
      registry.add(registered(definition, `module:${shown}`, createHash("sha256").update(source).digest("hex")));
    }
  }
  return registry;
}
