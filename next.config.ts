import type { NextConfig } from "next";

const config: NextConfig = {
  // Native bindings load from node_modules at run time; Turbopack must not bundle them.
  serverExternalPackages: ["@duckdb/node-api", "better-sqlite3"],
  // `next dev` browsed at 127.0.0.1 only hydrates with this (see STACK.md).
  allowedDevOrigins: ["127.0.0.1"],
  poweredByHeader: false,
  turbopack: { root: process.cwd() },
};

export default config;
