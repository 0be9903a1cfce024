import { defineConfig } from "vitest/config";

/** The packed tarball installed into an empty folder and used from there (`npm run test:install`). */
export default defineConfig({
  test: {
    include: ["test/install/**/*.test.ts"],
    testTimeout: 120_000,
    // Packing and installing (from the npm cache) take a minute or two on a busy machine.
    hookTimeout: 600_000,
    pool: "forks",
  },
});
