import { defineConfig } from "vitest/config";

/** Tests that need the machine's PostgreSQL or Redis (`npm run test:services`). */
export default defineConfig({
  test: {
    include: ["test/services/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // test/services/*.pg.test.ts re-run the index suites with their indexes in PostgreSQL (test/support/index-backend.ts).
    env: { CHAINMAIL_TEST_INDEX_DB: "postgres" },
    passWithNoTests: true,
  },
});
