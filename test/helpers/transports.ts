import { createTRPCUntypedClient, httpLink, TRPCClientError } from "@trpc/client";
import type { ErrorDocument } from "../../server/domain/errors";
import { callService, SERVICES } from "../../server/services";
import { toEmberscopeError } from "../../server/domain/errors";
import { runCli } from "./cli";
import { CSRF_HEADER } from "../../server/http/header-names";
import { csrfTokenOf } from "./server";

export type Outcome = { ok: true; value: any } | { ok: false; error: ErrorDocument };

/** One way of reaching the services: the parity harness runs the same behaviour through each. */
export interface Transport {
  name: string;
  call(operation: string, input: Record<string, unknown>): Promise<Outcome>;
}

export function directTransport(projectRoot: string): Transport {
  return {
    name: "direct service call",
    async call(operation, input) {
      const def = SERVICES.find((s) => s.name === operation);
      if (!def) throw new Error(`no service ${operation}`);
      try {
        return { ok: true, value: await callService(def, { locator: { cwd: projectRoot, projectRoot }, actor: "test" }, input) };
      } catch (error) {
        return { ok: false, error: toEmberscopeError(error).toDocument() };
      }
    },
  };
}

/** tRPC as the workbench's pages call it: mutations carry the CSRF token the server gives its pages. */
export function trpcTransport(baseUrl: string): Transport {
  const client = createTRPCUntypedClient({
    links: [httpLink({ url: `${baseUrl}/api/trpc`, headers: async () => ({ [CSRF_HEADER]: await csrfTokenOf(baseUrl) }) })],
  });
  return {
    name: "tRPC over HTTP",
    async call(operation, input) {
      const def = SERVICES.find((s) => s.name === operation)!;
      try {
        const value = def.kind === "query" ? await client.query(operation, input) : await client.mutation(operation, input);
        return { ok: true, value };
      } catch (error) {
        if (error instanceof TRPCClientError && (error.data as { error?: ErrorDocument })?.error) {
          return { ok: false, error: (error.data as { error: ErrorDocument }).error };
        }
        throw error;
      }
    },
  };
}

/** CLI spellings of the operations the parity behaviour uses. */
const CLI_ARGV: Record<string, (input: Record<string, any>) => string[]> = {
  "workspace.init": () => ["init"],
  "workspace.status": () => ["status"],
  "workspace.validate": (i) => ["validate", ...(i.full ? ["--full"] : [])],
  "runs.list": (i) => [
    "runs",
    "list",
    ...(i.limit !== undefined ? ["--limit", String(i.limit)] : []),
    ...(i.cursor ? ["--cursor", i.cursor] : []),
    ...(["kind", "text", "order"] as const).flatMap((flag) => (i[flag] ? [`--${flag}`, i[flag]] : [])),
    ...(i.created_from ? ["--from", i.created_from] : []),
  ],
  "runs.update": (i) => ["runs", "rename", i.run_id, i.title, ...(i.expected_revision !== undefined ? ["--revision", String(i.expected_revision)] : [])],
  "runs.get": (i) => ["runs", "show", i.run_id],
  "commits.get": (i) => ["commits", "show", i.commit_id],
  "investigations.create": (i) => ["investigations", "create", i.title, ...(i.question !== undefined ? ["--question", i.question] : [])],
  "investigations.get": (i) => ["investigations", "show", i.investigation_id],
  "cells.add": (i) => ["cells", "add", i.investigation_id, "--kind", i.kind, "--content", JSON.stringify(i.content)],
  "findings.record": (i) => [
    "findings",
    "record",
    i.investigation_id,
    "--title",
    i.title,
    "--claim",
    i.claim,
    "--evidence-level",
    i.evidence_level,
    ...(i.assessment ? ["--assessment", i.assessment] : []),
    ...(i.references ?? []).flatMap((r: unknown) => ["--ref", JSON.stringify(r)]),
  ],
  "findings.assess": (i) => ["findings", "assess", i.finding_id, i.assessment, "--revision", String(i.expected_revision)],
};

export function cliTransport(projectRoot: string): Transport {
  return {
    name: "CLI child process",
    async call(operation, input) {
      const argv = CLI_ARGV[operation];
      if (!argv) throw new Error(`no CLI spelling for ${operation}`);
      const result = await runCli([...argv(input), "--json", "--project-root", "."], { cwd: projectRoot });
      if (result.json === undefined) throw new Error(`CLI printed no JSON document: ${result.stdout}\n${result.stderr}`);
      if (result.code === 0) return { ok: true, value: result.json };
      if (!result.json.code) return { ok: true, value: result.json };
      // The CLI adds the shell spelling of the recovery; the service contract is the rest.
      const { command: _command, ...recovery } = result.json.recovery ?? {};
      return { ok: false, error: { ...result.json, ...(result.json.recovery ? { recovery } : {}) } };
    },
  };
}
