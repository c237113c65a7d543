import type { NextConfig } from "next";

const config: NextConfig = {
  // Native bindings load from node_modules at run time; Turbopack must not bundle them. tsx (with
  // esbuild's binary) loads a project's workflow tool modules (server/workflow/registry.ts).
  serverExternalPackages: ["@duckdb/node-api", "@duckdb/node-bindings", "better-sqlite3", "tsx", "esbuild"],
  // `next dev` browsed at 127.0.0.1 only hydrates with this (see STACK.md).
  allowedDevOrigins: ["127.0.0.1"],
  poweredByHeader: false,
  // `npm run typecheck` (next typegen, then tsc over the same files and route types) is the type
  // check, and CI runs it before the build: checking again in `next build` cost ~75 s of every
  // `npm test` and `npm start` on a fresh clone.
  typescript: { ignoreBuildErrors: true },
  turbopack: { root: process.cwd() },
  // DuckDB-WASM's engine (public/duckdb/<version>/, copied at build): a versioned URL, so cached for
  // good; no-transform keeps the compression middleware off the 34 MB wasm (gzip on the fly cost
  // ~2 s per cold load on loopback and held back the browser's streaming compile).
  async headers() {
    return [{ source: "/duckdb/:version/:file", headers: [{ key: "Cache-Control", value: "public, max-age=31536000, immutable, no-transform" }] }];
  },
};

export default config;
