/** test/db/database.test.ts against PostgreSQL (the services config sets CHAINMAIL_TEST_INDEX_DB=postgres). */
import "../db/database.test.js";
