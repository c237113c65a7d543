import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "analysis/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and child processes; two cores, so keep it modest.
    maxWorkers: 2,
    // A poll waits on a real server and browser: 1 s (vitest's default) is a slow moment on 2 busy cores.
    expect: { poll: { timeout: 15_000 } },
    env: { NEXT_TELEMETRY_DISABLED: "1" },
  },
});
