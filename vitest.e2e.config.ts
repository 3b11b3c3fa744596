import { defineConfig } from "vitest/config";

/** End-to-end suites (`make e2e`): a real control plane, kubelet and MinIO; not part of `make test`. */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 300_000,
    hookTimeout: 900_000,
  },
});
