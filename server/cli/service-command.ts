import type { z } from "zod";
import { EmberscopeError } from "../domain/errors";
import { callService, type ServiceContext, type ServiceDef } from "../services";
import type { GlobalFlags, OptionSpec, ParsedArgs } from "./args";

/** What a CLI command is, and the common kind that maps flags onto one service call. */

export interface CliEnv {
  ctx: ServiceContext;
  flags: GlobalFlags;
  /** Progress and logs: stderr, silenced by --quiet. */
  log: (message: string) => void;
  /** For long-running commands: prints the one result document early (e.g. serve, once ready). */
  announce?: (document: unknown) => void;
}

export interface CliOutcome {
  document: unknown;
  human: string;
  exitCode: number;
}

export interface PositionalSpec {
  name: string;
  description: string;
  /** The service input field it fills, when not the lower-cased name. */
  field?: string;
}

export interface CliCommand {
  path: string[];
  summary: string;
  options: Record<string, OptionSpec>;
  positionals: PositionalSpec[];
  /** Left out of help and docs (internal plumbing such as the pool worker). */
  hidden?: boolean;
  /** Runs until stopped (a server): caches that pay off over many calls may load in the background. */
  keepsRunning?: boolean;
  /** The service operations it calls (for generated docs and recovery hints). */
  services: ServiceDef[];
  execute: (args: ParsedArgs, env: CliEnv) => Promise<CliOutcome>;
}

export function requirePositionals(args: ParsedArgs, specs: PositionalSpec[]): string[] {
  if (args.positionals.length < specs.length) {
    const missing = specs[args.positionals.length].name;
    throw new EmberscopeError("INVALID_ARGUMENTS", `Missing argument ${missing}.`, { details: { argument: missing } });
  }
  if (args.positionals.length > specs.length) {
    const extra = args.positionals[specs.length];
    throw new EmberscopeError("INVALID_ARGUMENTS", `Unexpected argument ${extra}.`, { details: { argument: extra } });
  }
  return args.positionals;
}

/** A command that maps its flags onto one service's input and renders the result. */
export function serviceCommand<I extends z.ZodType, O extends z.ZodType>(spec: {
  path: string[];
  service: ServiceDef<I, O>;
  summary?: string;
  options?: Record<string, OptionSpec>;
  positionals?: PositionalSpec[];
  input: (args: ParsedArgs, positionals: string[]) => Record<string, unknown>;
  human: (result: z.output<O>) => string;
  exitCode?: (result: z.output<O>) => number;
}): CliCommand {
  const positionals = spec.positionals ?? [];
  return {
    path: spec.path,
    summary: spec.summary ?? spec.service.summary,
    options: spec.options ?? {},
    positionals,
    services: [spec.service as unknown as ServiceDef],
    execute: async (args, env) => {
      const input = spec.input(args, requirePositionals(args, positionals));
      const result = await callService(spec.service, env.ctx, input);
      return { document: result, human: spec.human(result), exitCode: spec.exitCode?.(result) ?? 0 };
    },
  };
}
