import { readFileSync } from "node:fs";
import path from "node:path";
import { EmberscopeError, exitCodeFor, toEmberscopeError, type ErrorDocument } from "../domain/errors";
import { GLOBAL_OPTIONS, parseCommandLine, probeCommandLine, type OptionSpec, type ParsedArgs } from "./args";
import { COMMANDS, commandForService, findCommand, type CliCommand } from "./commands";
import { PACKAGE_ROOT } from "../package-root";
import { setSpanIndexLoading } from "../evidence/span-index";


export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

const defaultIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
};

function optionLine(name: string, o: OptionSpec): string {
  const flag = `--${name}${o.valueName ? ` ${o.valueName}` : ""}${o.short ? `, -${o.short}` : ""}`;
  return `  ${flag.padEnd(26)} ${o.description}`;
}

export function commandUsage(command: CliCommand): string {
  const pos = command.positionals.map((p) => ` ${p.name}`).join("");
  const opts = Object.entries(command.options)
    .map(([name, o]) => ` [--${name}${o.valueName ? ` ${o.valueName}` : ""}]`)
    .join("");
  return `emberscope ${command.path.join(" ")}${pos}${opts}`;
}

export function generalHelp(): string {
  const shown = COMMANDS.filter((c) => !c.hidden);
  const width = Math.max(...shown.map((c) => c.path.join(" ").length));
  return [
    "emberscope — a local workbench for performance evidence",
    "",
    "Usage: emberscope <command> [options]",
    "",
    "Commands:",
    ...shown.map((c) => `  ${c.path.join(" ").padEnd(width)}  ${c.summary}`),
    "",
    "Global options:",
    ...Object.entries(GLOBAL_OPTIONS).map(([n, o]) => optionLine(n, o)),
    "",
    "Run `emberscope <command> --help` for a command's arguments. Docs: docs/cli.md",
    "",
  ].join("\n");
}

export function commandHelp(command: CliCommand): string {
  return [
    `Usage: ${commandUsage(command)}`,
    "",
    command.summary,
    ...(command.positionals.length ? ["", "Arguments:", ...command.positionals.map((p) => `  ${p.name.padEnd(26)} ${p.description}`)] : []),
    ...(Object.keys(command.options).length ? ["", "Options:", ...Object.entries(command.options).map(([n, o]) => optionLine(n, o))] : []),
    "",
    "Global options: --json, --quiet, --project-root DIR, --workspace DIR, --timeout SECONDS",
    "",
  ].join("\n");
}

function version(): string {
  return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
}

/** The CLI spelling of a recovery: `emberscope init` for workspace.init. */
function recoveryCommand(doc: ErrorDocument, location: string[]): string | undefined {
  if (!doc.recovery) return undefined;
  const command = commandForService(doc.recovery.operation);
  if (!command) return undefined;
  const flags = Object.entries(doc.recovery.arguments)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      const positional = command.positionals.find((p) => (p.field ?? p.name.toLowerCase()) === k);
      if (positional) return String(v);
      const fills = ([name, o]: [string, OptionSpec]) => (o.field ?? name.replaceAll("-", "_")) === k && (o.service === undefined || o.service === doc.recovery!.operation);
      const [flag] = Object.entries(command.options).find(fills) ?? [k];
      return v === true ? `--${flag}` : `--${flag} ${String(v)}`;
    });
  return ["emberscope", ...command.path, ...flags, ...location].join(" ");
}

/** The --project-root / --workspace the user gave, repeated in recovery hints. */
function locationFlags(argv: string[]): string[] {
  const out: string[] = [];
  argv.forEach((arg, i) => {
    if ((arg === "--project-root" || arg === "--workspace") && argv[i + 1] !== undefined) out.push(arg, JSON.stringify(argv[i + 1]));
    else if (arg.startsWith("--project-root=") || arg.startsWith("--workspace=")) out.push(arg);
  });
  return out;
}

/**
 * Maps a CLI flag name back onto a service field in INVALID_ARGUMENTS, so errors name what the user
 * typed. Where several flags fill the same field (gc's --restore and --purge), the one given is named.
 */
function nameFlags(error: EmberscopeError, command: CliCommand | undefined, given: ParsedArgs["values"]): EmberscopeError {
  if (!command || error.code !== "INVALID_ARGUMENTS") return error;
  const argument = error.details.argument;
  if (typeof argument !== "string" || argument.startsWith("-")) return error;
  const filling = Object.entries(command.options).filter(([name, o]) => (o.field ?? name.replaceAll("-", "_")) === argument);
  const entry = filling.find(([name]) => given[name] !== undefined) ?? filling[0];
  const positional = command.positionals.find((p) => (p.field ?? p.name.toLowerCase()) === argument);
  const shown = entry ? `--${entry[0]}` : positional ? positional.name : undefined;
  if (!shown) return error;
  return new EmberscopeError("INVALID_ARGUMENTS", error.message.replace(argument, shown), {
    details: { ...error.details, argument: shown },
    recovery: error.recovery,
  });
}

/** Runs one CLI invocation; returns the exit code. Never throws. */
export async function main(argv: string[], io: CliIo = defaultIo): Promise<number> {
  let json = argv.includes("--json");
  let quiet = argv.includes("--quiet");
  let command: CliCommand | undefined;
  let given: ParsedArgs["values"] = {};
  let documentPrinted = false;
  const printDocument = (doc: unknown) => {
    if (documentPrinted) return;
    documentPrinted = true;
    io.stdout(`${JSON.stringify(doc, null, 2)}\n`);
  };
  try {
    const probe = probeCommandLine(argv);
    json = probe.globals.json;
    quiet = probe.globals.quiet;
    const found = findCommand(probe.words);
    if (probe.globals.version) {
      if (json) printDocument({ version: version() });
      else io.stdout(`${version()}\n`);
      return 0;
    }
    if (!found) {
      if (probe.globals.help || probe.words.length === 0 || probe.words[0] === "help") {
        const target = probe.words[0] === "help" ? findCommand(probe.words.slice(1)) : null;
        io.stdout(target ? commandHelp(target.command) : generalHelp());
        return probe.words.length === 0 && !probe.globals.help ? 2 : 0;
      }
      throw new EmberscopeError("INVALID_ARGUMENTS", `Unknown command: ${probe.words[0]}.`, {
        details: { argument: probe.words[0], commands: COMMANDS.map((c) => c.path.join(" ")) },
      });
    }
    command = found.command;
    // A one-shot command would wait at exit for a span index it will never use.
    if (!command.keepsRunning) setSpanIndexLoading(false);
    if (probe.globals.help) {
      io.stdout(commandHelp(command));
      return 0;
    }
    const args = parseCommandLine(argv, command.options);
    given = args.values;
    args.positionals = args.positionals.slice(command.path.length);
    const flags = args.globals;
    const env = {
      ctx: {
        locator: { cwd: io.cwd, projectRoot: flags.projectRoot, workspaceDir: flags.workspace },
        actor: "cli" as const,
      },
      flags,
      log: (message: string) => {
        if (!quiet) io.stderr(`${message}\n`);
      },
      announce: (doc: unknown) => {
        if (json) printDocument(doc);
      },
    };
    const running = command.execute(args, env);
    const outcome = flags.timeoutSeconds
      ? await Promise.race([
          running,
          new Promise<never>((_, reject) => {
            const timer = setTimeout(
              () => reject(new EmberscopeError("PROCESS_TIMEOUT", `The command did not finish within --timeout ${flags.timeoutSeconds} s.`, { details: { timeout_seconds: flags.timeoutSeconds } })),
              flags.timeoutSeconds! * 1000,
            );
            timer.unref();
          }),
        ])
      : await running;
    if (json) printDocument(outcome.document);
    else if (outcome.human) io.stdout(`${outcome.human}\n`);
    return outcome.exitCode;
  } catch (thrown) {
    const error = nameFlags(toEmberscopeError(thrown), command, given);
    if (error.code === "INTERNAL_ERROR" && process.env.EMBERSCOPE_DEBUG) io.stderr(`${String((error.cause as Error)?.stack ?? error.cause)}\n`);
    const doc = error.toDocument();
    const hint = recoveryCommand(doc, locationFlags(argv));
    if (json) {
      printDocument(hint && doc.recovery ? { ...doc, recovery: { ...doc.recovery, command: hint } } : doc);
    } else {
      io.stderr(`error ${doc.code}: ${doc.message}\n`);
      if (doc.details.argument) io.stderr(`  argument: ${String(doc.details.argument)}\n`);
      if (hint) io.stderr(`  next: ${hint}\n`);
    }
    return exitCodeFor(error.code);
  }
}
