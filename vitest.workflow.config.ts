import { defineConfig } from "vitest/config";

/** The workflow packages in their real runtimes (scripts/ci/workflow-tests.sh runs these). */
export default defineConfig({
  test: {
    include: ["test/workflow/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    // Node-RED and n8n each take a core while they start: one file at a time.
    fileParallelism: false,
  },
});
