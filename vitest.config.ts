import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "core/**/*.test.ts", "runner/**/*.test.ts", "api/**/*.test.ts", "controller/**/*.test.ts"],
    // Operation tests start real engines (qpdf, LibreOffice); two cores, so keep the pool small.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 300_000,
    globalSetup: ["test/global-setup.ts"],
  },
});
