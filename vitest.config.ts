import { defineConfig } from "vitest/config";

const shared = {
  environment: "node",
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // A poll waits on a real server and browser: 1 s (vitest's default) is a slow moment on 2 busy cores.
  expect: { poll: { timeout: 15_000 } },
  env: { NEXT_TELEMETRY_DISABLED: "1" },
} as const;

export default defineConfig({
  test: {
    // Integration tests start real servers and child processes; two cores, so keep it modest.
    maxWorkers: 2,
    projects: [
      {
        // Pure code (analysis/ and the in-process unit tests): one worker runs file after file
        // without a fresh process and module graph for each (about a tenth of their time).
        test: { ...shared, name: "unit", include: ["analysis/**/*.test.ts", "test/unit/**/*.test.ts"], isolate: false },
      },
      {
        test: { ...shared, name: "integration", include: ["test/**/*.test.ts"], exclude: ["test/unit/**"] },
      },
    ],
  },
});
