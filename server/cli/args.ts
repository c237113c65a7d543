import { MAX_TRANSFORMS, parseTransforms, type Transform } from "../../analysis/queries/transforms";
import { parseArgs } from "node:util";
import { EmberscopeError } from "../domain/errors";

export interface OptionSpec {
  type: "string" | "boolean";
  description: string;
  /** Placeholder in help, e.g. N or DIR. */
  valueName?: string;
  /** The service input field this flag fills, when it differs from the flag's snake_case name. */
  field?: string;
  /** In a command that calls several services: the one whose field it fills (gc's --restore, --purge). */
  service?: string;
  short?: string;
  /** May be given several times (values collected in order). */
  multiple?: boolean;
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  json: { type: "boolean", description: "Print exactly one JSON result document on stdout; logs go to stderr." },
  quiet: { type: "boolean", description: "Print nothing on stderr except errors." },
  "project-root": { type: "string", valueName: "DIR", description: "The project root (default: walk up from the current directory)." },
  workspace: { type: "string", valueName: "DIR", description: "The .emberscope folder itself." },
  timeout: { type: "string", valueName: "SECONDS", description: "Give up after this many seconds (PROCESS_TIMEOUT)." },
  help: { type: "boolean", short: "h", description: "Show help for emberscope or for a command." },
  version: { type: "boolean", description: "Print the version." },
};

export interface GlobalFlags {
  json: boolean;
  quiet: boolean;
  projectRoot?: string;
  workspace?: string;
  timeoutSeconds?: number;
  help: boolean;
  version: boolean;
}

export interface ParsedArgs {
  globals: GlobalFlags;
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

function invalid(argument: string, message: string): EmberscopeError {
  return new EmberscopeError("INVALID_ARGUMENTS", message, { details: { argument } });
}

/** A lenient first pass: the global flags and the words that name the command, before its options are known. */
export function probeCommandLine(argv: string[]): { globals: GlobalFlags; words: string[] } {
  const parsed = parseArgs({
    args: argv,
    options: Object.fromEntries(
      Object.entries(GLOBAL_OPTIONS).map(([name, o]) => [name, o.short ? { type: o.type, short: o.short } : { type: o.type }]),
    ),
    allowPositionals: true,
    strict: false,
  });
  const v = parsed.values as Record<string, string | boolean | undefined>;
  return {
    globals: {
      json: v.json === true,
      quiet: v.quiet === true,
      help: v.help === true,
      version: v.version === true,
    },
    words: parsed.positionals,
  };
}

/** Parses argv strictly: an unknown flag or a missing value is INVALID_ARGUMENTS naming it. */
export function parseCommandLine(argv: string[], options: Record<string, OptionSpec>): ParsedArgs {
  const spec = { ...GLOBAL_OPTIONS, ...options };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.entries(spec).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    const flag = /'(-{1,2}[^'\s]+)/.exec(text)?.[1] ?? "(arguments)";
    const reason = /ERR_PARSE_ARGS_INVALID_OPTION_VALUE/.test(String((error as { code?: string }).code))
      ? `Option ${flag} needs a value.`
      : `Unknown option ${flag}.`;
    throw invalid(flag, reason);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  let timeoutSeconds: number | undefined;
  if (values.timeout !== undefined) {
    timeoutSeconds = Number(values.timeout);
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) throw invalid("--timeout", "--timeout takes a positive number of seconds.");
  }
  const globals: GlobalFlags = {
    json: values.json === true,
    quiet: values.quiet === true,
    projectRoot: values["project-root"] as string | undefined,
    workspace: values.workspace as string | undefined,
    timeoutSeconds,
    help: values.help === true,
    version: values.version === true,
  };
  for (const name of Object.keys(GLOBAL_OPTIONS)) delete values[name];
  return { globals, values, positionals: parsed.positionals };
}

/** A flag's value as an integer within bounds, or INVALID_ARGUMENTS naming the flag. */
export function integerFlag(values: ParsedArgs["values"], name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== "string" || !/^-?\d+$/.test(raw) || !Number.isSafeInteger(n)) {
    throw invalid(`--${name}`, `--${name} takes a whole number.`);
  }
  return n;
}

export function stringFlag(values: ParsedArgs["values"], name: string): string | undefined {
  const raw = values[name];
  return typeof raw === "string" ? raw : undefined;
}

/** `--param k=v --param k2=v2` as an object; a value without `=` is INVALID_ARGUMENTS naming the flag. */
export function keyValueFlags(values: ParsedArgs["values"], name: string): Record<string, string> {
  const raw = values[name];
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? [raw] : [];
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw invalid(`--${name}`, `--${name} takes NAME=VALUE (got ${JSON.stringify(item)}).`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

/**
 * --transforms as the services take them: the run page's URL form (`tf=`, e.g. `mf-KEY~df-KEY`,
 * analysis/queries/transforms.ts), so a view's link and the shell name the same stack. A part
 * that does not parse is refused (the page leaves it out; a command says so).
 */
export function transformsFlag(values: ParsedArgs["values"]): Transform[] | undefined {
  const raw = values.transforms;
  if (raw === undefined) return undefined;
  if (typeof raw !== "string") throw invalid("--transforms", "--transforms takes one value.");
  const parts = raw.split("~").filter(Boolean);
  const list = parseTransforms(raw);
  if (list.length !== parts.length || parts.length > MAX_TRANSFORMS) {
    throw invalid("--transforms", "--transforms takes the run page's tf= form: CODE-ARG joined by ~ (mf, df, ff, fs, rec, drec with a 16-hex frame_key; fs with frame_keys joined by dots; cm with a module name).");
  }
  return list;
}
