import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "analysis/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and child processes; two cores, so keep it modest.
    maxWorkers: 2,
    env: { NEXT_TELEMETRY_DISABLED: "1" },
  },
});
