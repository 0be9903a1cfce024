/** test/db/migrate.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../db/migrate.test.js";
