import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { appRouter } from "../../server/trpc/router";
import { REPO_ROOT } from "./cli";

/** One route of the app as the `app/` tree declares it: a page, or a route handler and its methods. */
export interface AppRoute {
  /** The URL path with its dynamic segments as written (`/runs/[runId]`). */
  pattern: string;
  kind: "page" | "route";
  methods: string[];
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

function methodsOf(source: string): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(/export\s+(?:async\s+)?function\s+([A-Z]+)\b/g)) found.add(m[1]);
  for (const m of source.matchAll(/\bas\s+([A-Z]+)\b/g)) found.add(m[1]);
  return [...found].filter((m) => METHODS.includes(m));
}

/** Every page and route handler under app/, read from the files themselves: a route added later is listed without touching the tests. */
export function appRoutes(appDir = path.join(REPO_ROOT, "app")): AppRoute[] {
  const routes: AppRoute[] = [];
  const walk = (dir: string, segments: string[]) => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) {
        // Route groups `(name)` and private folders `_name` add no URL segment / no route.
        if (name.startsWith("_")) continue;
        walk(full, /^\(.*\)$/.test(name) ? segments : [...segments, name]);
      } else if (/^page\.(tsx|ts|jsx|js)$/.test(name)) {
        routes.push({ pattern: `/${segments.join("/")}`, kind: "page", methods: ["GET"] });
      } else if (/^route\.(ts|js)$/.test(name)) {
        routes.push({ pattern: `/${segments.join("/")}`, kind: "route", methods: methodsOf(readFileSync(full, "utf8")) });
      }
    }
  };
  walk(appDir, []);
  return routes;
}

/** The router's procedures by path, with their kind (query or mutation), walked from the router itself. */
export function trpcProcedures(): { path: string; type: "query" | "mutation" | "subscription" }[] {
  const procedures = (appRouter as unknown as { _def: { procedures: Record<string, { _def: { type: "query" | "mutation" | "subscription" } }> } })._def.procedures;
  return Object.entries(procedures).map(([name, p]) => ({ path: name, type: p._def.type }));
}

/**
 * Everything a request could have changed in a workspace: the row count of every control-store
 * table, the workspace's settings, and the files in its object store and staging. Read with a
 * connection of its own (the server keeps its own open).
 */
export function workspaceSnapshot(projectRoot: string): Record<string, unknown> {
  const dir = path.join(projectRoot, ".emberscope");
  const db = new Database(path.join(dir, "emberscope.sqlite"), { readonly: true, fileMustExist: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    const counts = Object.fromEntries(tables.map((t) => [t, (db.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n]));
    const meta = Object.fromEntries((db.prepare("SELECT key, value FROM workspace_meta ORDER BY key").all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    const files = (sub: string): string[] => {
      const root = path.join(dir, sub);
      const out: string[] = [];
      const walk = (d: string) => {
        let names: string[];
        try {
          names = readdirSync(d);
        } catch {
          return;
        }
        for (const n of names) {
          const f = path.join(d, n);
          if (statSync(f).isDirectory()) walk(f);
          else out.push(path.relative(root, f));
        }
      };
      walk(root);
      return out.sort();
    };
    return { counts, meta, objects: files("objects"), tmp: files("tmp") };
  } finally {
    db.close();
  }
}
